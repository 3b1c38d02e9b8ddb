//go:build !race

package testkit

// RaceEnabled reports whether the tests were built with -race (see race.go).
const RaceEnabled = false
