//go:build !linux

package idle

import "runtime"

// ThreadYield yields the processor: runtime.Gosched where there is no
// sched_yield(2) to call directly.
func ThreadYield() { runtime.Gosched() }
