package store

import (
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"
)

func TestTmpTickParts(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("N"))
	s := loadLazyFreeKind(&testing.B{}, os.Getenv("KIND"), n)
	runtime.GC()
	runtime.LockOSThread()
	s.Del([]byte("big"))
	var mx [2]time.Duration
	for i := 0; s.LazyFreePending() > 0; i++ {
		c0 := threadCPU()
		w := s.lazyFree(8)
		c1 := threadCPU()
		s.ar.Compact(2, s.relo)
		c2 := threadCPU()
		if d := c1 - c0; d > mx[0] {
			mx[0] = d
			t.Logf("tick %d lazyFree %v (work %d)", i, d, w)
		}
		if d := c2 - c1; d > mx[1] {
			mx[1] = d
			t.Logf("tick %d compact %v", i, d)
		}
	}
}
