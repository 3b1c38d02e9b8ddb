//go:build race

package uds

// raceEnabled: the race detector is on, which changes what escapes, so
// allocation counts are not the program's.
const raceEnabled = true
