//go:build race

package cluster_test

// raceEnabled: the race detector slows the end-to-end workload about
// tenfold, so it runs a tenth of the operations.
const raceEnabled = true
