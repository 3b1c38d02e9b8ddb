package harness

import (
	"time"

	"golang.org/x/sys/unix"
)

// MonoClock turns a time.Time read in this process into CLOCK_MONOTONIC
// nanoseconds, the clock the kernel's trace buffers can stamp events with
// (trace_clock mono), so a timeline's slow round trip can be found among
// the interrupts and context switches traced at the same moment. It reads
// the kernel's clock once, at creation, and after that only subtracts
// Go's monotonic readings (which are CLOCK_MONOTONIC themselves on Linux):
// no system call per round trip.
type MonoClock struct {
	base     time.Time
	baseMono int64
}

func NewMonoClock() MonoClock {
	var ts unix.Timespec
	base := time.Now()
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
		return MonoClock{base: base}
	}
	return MonoClock{base: base, baseMono: ts.Nano()}
}

// At is t in CLOCK_MONOTONIC nanoseconds.
func (c MonoClock) At(t time.Time) int64 { return c.baseMono + int64(t.Sub(c.base)) }
