//go:build race

package testkit

// RaceEnabled reports whether the tests were built with -race. The race
// detector makes memory-heavy loops five to ten times slower, so a test
// that walks many keys or many megabytes uses it to pick a smaller size
// under -race (the race run checks the concurrency; the plain run, the
// size): n := 1_000_000; if testkit.RaceEnabled { n = 100_000 }.
const RaceEnabled = true
