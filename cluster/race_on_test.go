//go:build race

package cluster_test

// raceEnabled: the race detector slows the end-to-end tests about tenfold,
// so they run a twentieth of the workload's operations and a fifth of the
// reshard's keys.
const raceEnabled = true
