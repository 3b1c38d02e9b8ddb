package store

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadString: keys added by LoadString read back as SET's (strings,
// integers, long keys, expiries), a key already held is refused and left
// as it was, and the store's invariants hold, whether the index was
// reserved (one probe per key), grows during the load (SET's path while it
// migrates) or the store has a memory cap (SET's path throughout).
func TestLoadString(t *testing.T) {
	const n = 5000
	for _, tc := range []struct {
		name    string
		reserve int
		o       Options
	}{
		{"reserved", n, Options{}},
		{"growing", 0, Options{}},
		{"capped", n, Options{MaxMemory: 64 << 20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, clk := newStore(t, tc.o)
			s.Reserve(tc.reserve)
			key := func(i int) []byte {
				if i%500 == 7 {
					return []byte(strings.Repeat("L", longKey+i)) // a long key: its length is in its block
				}
				return fmt.Appendf(nil, "key:%d", i)
			}
			val := func(i int) []byte {
				switch i % 3 {
				case 0:
					return fmt.Appendf(nil, "%d", i*7919-5) // an integer, kept as one
				case 1:
					return []byte("v")
				}
				return []byte(strings.Repeat("x", i%300))
			}
			exp := func(i int) int64 {
				if i%4 == 0 {
					return clk.NowMillis() + int64(i) + 1000
				}
				return 0
			}
			for i := range n {
				if added, err := s.LoadString(s.LoadHash(key(i)), key(i), val(i), exp(i)); err != nil || !added {
					t.Fatalf("LoadString key %d: added %v, %v; want added", i, added, err)
				}
			}
			for i := 0; i < n; i += 97 {
				if added, err := s.LoadString(s.LoadHash(key(i)), key(i), []byte("other"), 0); err != nil || added {
					t.Fatalf("LoadString of key %d again: added %v, %v; want refused", i, added, err)
				}
			}
			if err := s.Check(); err != nil {
				t.Fatal(err)
			}
			if got := s.Len(); got != n {
				t.Fatalf("Len %d, want %d", got, n)
			}
			for i := range n {
				v, ok := s.Get(nil, key(i))
				if !ok || string(v) != string(val(i)) {
					t.Fatalf("Get key %d = %.20q, %v; want %.20q", i, v, ok, val(i))
				}
				want := exp(i)
				if want == 0 {
					want = -1
				}
				if at := s.ExpireTime(key(i)); at != want {
					t.Fatalf("key %d expires at %d, want %d", i, at, want)
				}
			}
		})
	}
}

// BenchmarkLoad compares the ways a loader can add n fresh keys of 16 B +
// 16 B to a store sized for them (one op: every key): SET NX (two probes),
// LoadString (one), and LoadString with the keys hashed loadAhead ahead
// (LoadHash), as snapshot.Load does. It reports the process's CPU time per
// key, which the machine's load blurs less than wall time.
//
//	go test -run '^$' -bench 'Load$' -benchtime 3x ./store/
func BenchmarkLoad(b *testing.B) {
	const n = 1_000_000
	keys := make([]byte, 0, n*16)
	for i := range n {
		keys = fmt.Appendf(keys, "key:%012d", i*7919%n)
	}
	key := func(i int) []byte { return keys[i*16 : i*16+16 : i*16+16] }
	val := []byte("value:0123456789")
	for _, mode := range []string{"SetNX", "LoadString", "LoadString+ahead"} {
		b.Run(mode, func(b *testing.B) {
			var cpu time.Duration
			for range b.N {
				b.StopTimer()
				s, _ := newStore(b, Options{})
				s.Reserve(n)
				b.StartTimer()
				c0 := processCPU()
				switch mode {
				case "SetNX":
					for i := range n {
						if _, _, ok, err := s.Set(nil, key(i), val, SetOptions{NX: true}); err != nil || !ok {
							b.Fatal(err)
						}
					}
				case "LoadString":
					for i := range n {
						if ok, err := s.LoadString(s.LoadHash(key(i)), key(i), val, 0); err != nil || !ok {
							b.Fatal(err)
						}
					}
				default:
					const ahead = 16
					var hs [ahead]uint64
					for i := range min(ahead, n) {
						hs[i] = s.LoadHash(key(i))
					}
					for i := range n {
						h := hs[i%ahead]
						if j := i + ahead; j < n {
							hs[i%ahead] = s.LoadHash(key(j))
						}
						if ok, err := s.LoadString(h, key(i), val, 0); err != nil || !ok {
							b.Fatal(err)
						}
					}
				}
				cpu += processCPU() - c0
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/key")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/n, "cpu-ns/key")
		})
	}
}

// processCPU returns the CPU time (user and system) this process used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestFlushStopsTheCollapse: a Flush after a bulk load stops the Collapse
// EndBulkLoad returned before it asks the kernel about the chunks the
// flush unmapped.
func TestFlushStopsTheCollapse(t *testing.T) {
	s, _ := newStore(t, Options{})
	if s.BulkLoading() {
		t.Fatal("a new store is in bulk-load mode")
	}
	s.BeginBulkLoad()
	if !s.BulkLoading() {
		t.Fatal("BulkLoading is false after BeginBulkLoad")
	}
	val := bytes.Repeat([]byte("v"), 1000)
	for i := range 10_000 { // ~10 MB: chunks beyond the arena's Go-heap ones
		k := []byte("k" + strconv.Itoa(i))
		if ok, err := s.LoadString(s.LoadHash(k), k, val, 0); err != nil || !ok {
			t.Fatalf("LoadString: %v, %v", ok, err)
		}
	}
	c := s.EndBulkLoad()
	if s.BulkLoading() {
		t.Fatal("BulkLoading is true after EndBulkLoad")
	}
	if c.Len() == 0 {
		t.Fatal("a 10 MB bulk load mapped no chunk to collapse")
	}
	s.Flush()
	if r := c.Run(); !r.Stopped || r.Collapsed+r.Failed != 0 {
		t.Fatalf("the collapse after a Flush: %+v, want Stopped before any of its %d regions", r, c.Len())
	}
}
