package store

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkGetAfterBulkLoad loads 500,000 keys of 1 KB values into three
// stores as the snapshot loader does (Reserve, LoadString): one with the
// arena's huge-page advice as usual ("advised"), one with it deferred to
// the load's end (BeginBulkLoad, EndBulkLoad: "bulk"), one that also
// collapses the chunks into huge pages then ("bulk+collapse", the load's
// CPU time including the collapse). It reports each load's CPU time per
// key and the process's AnonHugePages after each, then measures random
// GETs on the three in alternating blocks of 100,000, in CPU time (so both
// see the same machine load, and time other processes take counts for
// neither): what the steady state pays while the bulk-loaded chunks
// are on small pages, before khugepaged collapses them. The index keeps
// its huge pages either way. b.N counts rounds of one block each.
//
//	go test -run '^$' -bench GetAfterBulkLoad -benchtime 10x ./store/
func BenchmarkGetAfterBulkLoad(b *testing.B) {
	const n, valueLen, block = 500_000, 1024, 100_000
	keys := make([]byte, 0, n*16)
	for i := range n {
		keys = fmt.Appendf(keys, "key:%012d", i*7919%n)
	}
	key := func(i int) []byte { return keys[i*16 : i*16+16 : i*16+16] }
	val := make([]byte, valueLen)
	for i := range val {
		val[i] = byte(i * 31)
	}
	modes := []string{"advised", "bulk", "bulk+collapse"}
	stores := make([]*Store, len(modes))
	loadCPU, huge := make([]time.Duration, len(modes)), make([]int64, len(modes))
	for m, mode := range modes {
		s, _ := newStore(b, Options{})
		huge0, c0 := anonHugePages(b), processCPU()
		if mode != "advised" {
			s.BeginBulkLoad()
		}
		s.Reserve(n)
		for i := range n {
			if ok, err := s.LoadString(s.LoadHash(key(i)), key(i), val, 0); err != nil || !ok {
				b.Fatal(err)
			}
		}
		if mode != "advised" {
			c := s.EndBulkLoad()
			if mode == "bulk+collapse" {
				r := c.Run()
				b.Logf("%s: %d of %d regions collapsed (%v)", mode, r.Collapsed, c.Len(), r.Err)
			}
		}
		loadCPU[m], huge[m] = processCPU()-c0, anonHugePages(b)-huge0
		stores[m] = s
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var dst []byte
	spent := make([]time.Duration, len(modes))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for m, s := range stores {
			t0 := processCPU()
			for range block {
				var ok bool
				if dst, ok = s.Get(dst[:0], key(rng.IntN(n))); !ok {
					b.Fatal("a loaded key is missing")
				}
			}
			spent[m] += processCPU() - t0
		}
	}
	b.StopTimer()
	for m, mode := range modes {
		b.ReportMetric(float64(spent[m].Nanoseconds())/float64(b.N*block), mode+"-cpu-ns/get")
		b.ReportMetric(float64(loadCPU[m].Nanoseconds())/n, mode+"-load-cpu-ns/key")
		b.ReportMetric(float64(huge[m])/(1<<20), mode+"-anon-huge-MiB")
	}
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "bulk/advised")
	b.ReportMetric(float64(spent[2])/float64(spent[0]), "bulk+collapse/advised")
}

// anonHugePages returns the process's memory in transparent huge pages
// (AnonHugePages in /proc/self/smaps_rollup), 0 where it cannot be read.
func anonHugePages(tb testing.TB) int64 {
	f, err := os.Open("/proc/self/smaps_rollup")
	if err != nil {
		tb.Logf("AnonHugePages not read: %v", err)
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "AnonHugePages:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
