package snapshot

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/store"
)

// TestWriterThreadPriority: a background save's writer runs on a thread of
// its own with the SCHED_IDLE policy (WriterIdle, the default), never the
// main thread (which cannot end with it), or on Go's threads as they are
// (WriterNormal); the idle thread ends with the save, so the lowered
// priority never passes to another goroutine; the file is whole either
// way. Several saves each: the writer lands on the main thread now and
// then.
func TestWriterThreadPriority(t *testing.T) {
	noIdleThreads := func(what string) {
		testkit.Eventually(t, 10*time.Second, what, func() (bool, string) {
			n, main := schedIdleThreads(t)
			return n == 0, fmt.Sprintf("%d SCHED_IDLE threads (the main thread among them: %v)", n, main)
		})
	}
	noIdleThreads("no SCHED_IDLE thread before the first save (another test's writer ending)")
	for _, prio := range []WriterPriority{WriterIdle, WriterNormal} {
		t.Run(prio.String(), func(t *testing.T) {
			s := newStores(t, 1)[0] // a store belongs to the goroutine that made it
			for i := range 1000 {
				if _, _, _, err := s.Set(nil, fmt.Appendf(nil, "k%d", i), []byte("v"), store.SetOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			for range 5 {
				path := filepath.Join(t.TempDir(), "dump.rdb")
				j, err := Begin([]DB{{0, s}}, Options{Path: path, WriterPriority: prio}, true)
				if err != nil {
					t.Fatal(err)
				}
				if prio == WriterIdle {
					// The writer waits for the first buffer on its thread.
					testkit.Eventually(t, 10*time.Second, "the writer's thread to be SCHED_IDLE", func() (bool, string) {
						n, _ := schedIdleThreads(t)
						return n == 1, fmt.Sprintf("%d SCHED_IDLE threads", n)
					})
				}
				for !j.StepFor(time.Millisecond) {
				}
				// The writer may have finished and ended its thread by now.
				n, main := schedIdleThreads(t)
				if most := map[WriterPriority]int{WriterIdle: 1}[prio]; n > most || main {
					t.Errorf("%d SCHED_IDLE threads once the %s writer has its last buffer, want at most %d (the main thread among them: %v)", n, prio, most, main)
				}
				testkit.Eventually(t, 10*time.Second, "the save to finish", func() (bool, string) {
					done, err := j.Finished()
					if err != nil {
						t.Fatal(err)
					}
					return done, "writing"
				})
				noIdleThreads("the writer's thread to end with it")
				got := newStores(t, 1)[0]
				if _, found, err := LoadFile(path, func(int) (*store.Store, error) { return got, nil }, LoadOptions{}); !found || err != nil {
					t.Fatalf("loading the file: found %v, %v", found, err)
				}
				if got.Len() != 1000 {
					t.Errorf("the file holds %d keys, want 1000", got.Len())
				}
			}
		})
	}
}

// schedIdleThreads counts this process's threads whose policy is
// SCHED_IDLE (field 41 of /proc/self/task/TID/stat, 5) and reports whether
// the main thread is one.
func schedIdleThreads(t *testing.T) (n int, main bool) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		stat, err := os.ReadFile("/proc/self/task/" + task.Name() + "/stat")
		if err != nil {
			continue // the thread ended meanwhile
		}
		// Fields after the command's closing parenthesis start at field 3.
		f := bytes.Fields(stat[bytes.LastIndexByte(stat, ')')+1:])
		if len(f) < 39 {
			t.Fatalf("/proc/self/task/%s/stat has %d fields", task.Name(), len(f)+2)
		}
		if p, _ := strconv.Atoi(string(f[38])); p == 5 {
			n++
			main = main || task.Name() == strconv.Itoa(os.Getpid())
		}
	}
	return n, main
}

// TestCollapseThreadIsNice: the collapse after a load (runCollapse) runs
// on a thread at nice 19 under the normal policy, not SCHED_IDLE, whose
// weight of 3 could keep it preempted for long while it holds the
// memory-map lock the loop's next mmap needs.
func TestCollapseThreadIsNice(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: runLowered runs fn as any goroutine")
	}
	got := make(chan []byte, 1)
	runLowered(collapseLower, func() {
		b, _ := os.ReadFile("/proc/thread-self/stat")
		got <- b
	})
	stat := <-got
	f := bytes.Fields(stat[bytes.LastIndexByte(stat, ')')+1:])
	if len(f) < 39 {
		t.Fatalf("/proc/thread-self/stat has %d fields: %q", len(f)+2, stat)
	}
	// Field 19 is nice, field 41 the policy (0 SCHED_OTHER, 5 SCHED_IDLE).
	if nice, policy := string(f[16]), string(f[38]); nice != "19" || policy != "0" {
		t.Fatalf("the collapse thread has nice %s and policy %s, want 19 and 0 (SCHED_OTHER)", nice, policy)
	}
}
