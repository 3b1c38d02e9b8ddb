// Package runner measures goblin's transport-latency matrix: it plans the
// cases a harness.Config selects from the providers (goblin-server over
// each transport, redis-server, the raw Aeron and shared-memory ping-pongs,
// the UDP floor), and for every case and run starts a fresh server and its
// media drivers on the server host, checks where every thread runs,
// measures each operation's warm-up and measured round trips with one
// measuring client (in this process, or a `goblin-bench probe` on the
// client host), stops everything, and records the case. At the end it
// hands the harness.Report to package report, which writes the archive.
//
// Run and RunStaged are the entry points; DefaultProviders is the matrix.
// ServeProbe, ServeUDPEcho and ServeAeronPong are the measuring client and
// the floor servers goblin-bench runs as processes of their own.
package runner
