// Package monotime is the process's monotonic clock in nanoseconds: the
// store loop reads it once per duty cycle and the engine times commands
// on it, so their readings can be compared and subtracted.
//
// Where the kernel's own clock source is the TSC (it chooses it only when
// the counter is invariant and synchronised across CPUs), Now reads the
// TSC directly and scales it by a rate measured against the runtime's
// clock over 1 ms at start: about 15 instructions instead of the vDSO
// call's 60 (callgrind), on the engine's per-command timing. Elsewhere,
// and when the measured rate is implausible, it reads the runtime's
// clock. The rate's error from a 1 ms calibration is some tens of parts
// per million: a fine ruler for durations, which is all Now is used for
// (readings are only compared with each other).
package monotime

import (
	"math/bits"
	"os"
	"strings"
	_ "unsafe" // go:linkname
)

// nanotime is the runtime's monotonic clock (CLOCK_MONOTONIC through the
// vDSO), the one time.Now's monotonic reading comes from. The runtime
// keeps it linkable by name and its signature fixed (go.dev/issue/67401).
// Read directly it skips time.Since's conversion of a Time: about 40 of
// the 100 instructions a reading cost (callgrind).
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// clocksourcePath names the kernel's current clock source.
const clocksourcePath = "/sys/devices/system/clocksource/clocksource0/current_clocksource"

// tscShift is the binary point of tscMult, nanoseconds per TSC tick.
const tscShift = 32

// The TSC calibration, written once by init and only read after: the
// counter and runtime-clock readings it starts from, and the rate.
var (
	start   = nanotime() // Now's zero
	useTSC  bool
	tsc0    uint64 // the counter at base
	base    int64  // nanotime at tsc0, minus start
	tscMult uint64 // nanoseconds per tick << tscShift
)

func init() {
	if !haveTSC {
		return
	}
	src, err := os.ReadFile(clocksourcePath)
	if err != nil || strings.TrimSpace(string(src)) != "tsc" {
		return
	}
	calibrate(1_000_000)
}

// calibrate measures the TSC's rate against nanotime over at least ns
// nanoseconds and turns useTSC on when it is plausible (0.1 to 20 GHz).
// Each end pairs a nanotime reading with the mean of the counter read
// just before and just after it, the tightest of a few tries: a pair the
// scheduler interrupted would skew the rate by the interruption over
// 1 ms. If no try is tight (a busy machine), the runtime's clock stays.
func calibrate(ns int64) {
	const tight = 4_000 // ticks: 0.8 to 4 µs at 1 to 5 GHz, so a loose pair skews the rate by under 0.4 % over 1 ms; a clean pair takes well under 1 µs
	ok := true
	pair := func() (uint64, int64) {
		var best, mid uint64
		var at int64
		for i := 0; i < 8; i++ {
			a := rdtsc()
			t := nanotime()
			b := rdtsc()
			if i == 0 || b-a < best {
				best, mid, at = b-a, a+(b-a)/2, t
			}
		}
		ok = ok && best < tight
		return mid, at
	}
	c0, t0 := pair()
	var c1 uint64
	var t1 int64
	for {
		if c1, t1 = pair(); t1-t0 >= ns {
			break
		}
	}
	ticks, nanos := c1-c0, uint64(t1-t0)
	if !ok || ticks < nanos/10 || ticks > nanos*20 {
		return // not a rate a TSC has: keep the runtime's clock
	}
	hi, lo := bits.Mul64(nanos, 1<<tscShift)
	tscMult, _ = bits.Div64(hi, lo, ticks)
	tsc0, base, useTSC = c1, t1-start, true
}

// Now returns the monotonic nanoseconds since the process started.
func Now() int64 {
	if useTSC {
		return tscNow()
	}
	return nanotime() - start
}

// tscNow is Now from the TSC: base plus the ticks since tsc0 at the
// calibrated rate, in 128-bit arithmetic so no span overflows.
func tscNow() int64 {
	hi, lo := bits.Mul64(rdtsc()-tsc0, tscMult)
	return base + int64(hi<<(64-tscShift)|lo>>tscShift)
}
