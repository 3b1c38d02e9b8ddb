//go:build race

package engine

// raceEnabled: the race detector is on, which changes what escapes, so
// allocation counts are not the program's.
const raceEnabled = true
