// Package report writes what a run measured: the per-case files while the
// run goes on (case.txt, the distributions and timelines), the facts of
// each host, metadata.txt, and at the end the archive (latency.csv,
// aggregate.csv, summary.md, the SVG charts and SHA256SUMS) from a
// harness.Report. It also reads an archive back: VerifySums checks its
// hashes, and the tails attribution (ParseKernelTrace, AttributeTails)
// lines a -timeline file's slow round trips up with a kernel trace.
package report
