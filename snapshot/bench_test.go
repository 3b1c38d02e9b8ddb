package snapshot

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/store"
)

// BenchmarkSaveLoad measures a save of 1 M keys (16 B keys, 16 B values)
// to a file in dir (BENCH_DIR, default the test's temporary directory;
// /dev/shm for tmpfs), foreground (SAVE) and background (BGSAVE, stepped
// as the loop steps it, with no writes meanwhile), and loading it back:
//
//	go test -run '^$' -bench SaveLoad -benchtime 3x ./snapshot/
func BenchmarkSaveLoad(b *testing.B) {
	const n = 1_000_000
	s := newStores(b, 1)[0]
	for i := range n {
		k := fmt.Sprintf("key:%012d", i)
		if _, _, _, err := s.Set(nil, []byte(k), []byte("val:"+k[4:]), store.SetOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	dir := os.Getenv("BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	} else {
		var err error
		if dir, err = os.MkdirTemp(dir, "bench"); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
	}
	path := filepath.Join(dir, "dump.rdb")
	size := func() float64 {
		fi, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		return float64(fi.Size())
	}
	b.Run("save", func(b *testing.B) {
		for range b.N {
			j, err := Begin([]DB{{0, s}}, Options{Path: path}, false)
			if err != nil {
				b.Fatal(err)
			}
			if err := j.Run(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/key")
		b.SetBytes(int64(size()))
	})
	b.Run("bgsave", func(b *testing.B) {
		for range b.N {
			j, err := Begin([]DB{{0, s}}, Options{Path: path}, true)
			if err != nil {
				b.Fatal(err)
			}
			for !j.StepFor(20_000) {
			}
			for {
				if done, err := j.Finished(); done {
					if err != nil {
						b.Fatal(err)
					}
					break
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/key")
		b.SetBytes(int64(size()))
	})
	b.Run("load", func(b *testing.B) {
		cpu := processCPU()
		for range b.N {
			t := newStores(b, 1)[0]
			st, _, err := LoadFile(path, func(int) (*store.Store, error) { return t, nil }, LoadOptions{})
			if err != nil || st.Keys != n {
				b.Fatalf("loaded %d keys: %v", st.Keys, err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/key")
		// The process's CPU time, every goroutine's: on a loaded machine
		// wall time measures the other processes more than the load.
		b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/float64(b.N)/n, "cpu-ns/key")
		b.SetBytes(int64(size()))
	})
}

// processCPU returns the CPU time (user and system) this process used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
