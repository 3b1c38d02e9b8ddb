//go:build !linux

package snapshot

import (
	"sync/atomic"
	"time"
)

func lowerThread() {}

func lowerThreadNice() {}

func onMainThread() bool { return false }

// futexWait polls where there is no futex: the writer looks again soon.
func futexWait(addr *atomic.Uint32, val uint32) {
	if addr.Load() == val {
		time.Sleep(100 * time.Microsecond)
	}
}

func futexWake(*atomic.Uint32) {}
