// Package monotime is the process's monotonic clock in nanoseconds: the
// store loop reads it once per duty cycle and the engine times commands
// on it, so their readings can be compared and subtracted.
package monotime

import (
	_ "unsafe" // go:linkname
)

// nanotime is the runtime's monotonic clock (CLOCK_MONOTONIC through the
// vDSO), the one time.Now's monotonic reading comes from. The runtime
// keeps it linkable by name and its signature fixed (go.dev/issue/67401).
// Read directly it skips time.Since's conversion of a Time: about 40 of
// the 100 instructions a reading cost (callgrind), and the engine reads
// the clock once per timed command.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// start anchors Now at the package's initialisation.
var start = nanotime()

// Now returns the monotonic nanoseconds since the process started.
func Now() int64 { return nanotime() - start }
