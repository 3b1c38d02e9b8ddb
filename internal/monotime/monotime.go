// Package monotime is the process's monotonic clock in nanoseconds: the
// store loop reads it once per duty cycle and the engine times commands
// on it, so their readings can be compared and subtracted.
package monotime

import "time"

// start anchors Now; time.Since on a time with a monotonic reading reads
// only the monotonic clock (the vDSO's clock_gettime, no allocation).
var start = time.Now()

// Now returns the monotonic nanoseconds since the process started.
func Now() int64 { return int64(time.Since(start)) }
