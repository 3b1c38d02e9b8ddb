package testproc

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// SpinCountingOthers runs turn in a loop for d on a goroutine locked to
// its own thread, as a busy-polling owner does, and returns how many times
// the process's other threads were switched in meanwhile (voluntary and
// involuntary context switches, from /proc/self/task): on a two-core
// machine each is a thread that may take a spinner's CPU. turn's first
// error ends the spin and fails tb. The count starts once the spinner
// runs, so thread start-up is not in it.
func SpinCountingOthers(tb testing.TB, d time.Duration, turn func() error) int64 {
	tb.Helper()
	started := make(chan int)
	done := make(chan error)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		started <- unix.Gettid()
		<-started
		end := time.Now().Add(d)
		for i := 0; ; i++ {
			if err := turn(); err != nil {
				done <- err
				return
			}
			if i&1023 == 0 && time.Now().After(end) {
				break
			}
		}
		done <- nil
	}()
	spinner := <-started
	before := threadSwitches(tb)
	started <- 0
	if err := <-done; err != nil {
		tb.Fatal(err)
	}
	after := threadSwitches(tb)
	var others int64
	for tid, n := range after {
		if tid != spinner {
			others += n - before[tid]
		}
	}
	return others
}

// threadSwitches reads each thread's context switches (voluntary and
// not) from /proc/self/task.
func threadSwitches(tb testing.TB) map[int]int64 {
	tb.Helper()
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		testkit.Missing(tb, "/proc/self/task: %v", err)
	}
	m := map[int]int64{}
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		text, err := os.ReadFile("/proc/self/task/" + e.Name() + "/status")
		if err != nil {
			continue // the thread ended
		}
		for _, line := range strings.Split(string(text), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "voluntary_ctxt_switches") {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				m[tid] += n
			}
		}
	}
	return m
}
