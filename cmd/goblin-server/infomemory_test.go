package main

import (
	"strconv"
	"strings"
	"testing"
)

// TestInfoMemoryConsistent: INFO memory of a running goblin-server
// reports the process's memory as Redis's fields mean it, so the fields
// agree with each other and with the process: used_memory_overhead at
// most used_memory, used_memory_dataset = used_memory -
// used_memory_overhead, the peak at least used_memory, and
// mem_fragmentation_ratio (rss / used_memory) in a sane range; MEMORY
// STATS says the same. With one key the old fields said used_memory:152,
// used_memory_overhead:65664 and mem_fragmentation_ratio:88872.42.
func TestInfoMemoryConsistent(t *testing.T) {
	// Serial: compares memory figures taken at different moments.
	needTool(t, "redis-cli")
	s := startServer(t)
	cli := func(args ...string) string {
		return string(runTool(t, nil, "redis-cli", append([]string{"-s", s.sock}, args...)...))
	}
	check := func(when string) {
		fields := map[string]string{}
		for _, line := range strings.Split(cli("INFO", "memory"), "\n") {
			if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
				fields[k] = v
			}
		}
		num := func(k string) float64 {
			v, err := strconv.ParseFloat(fields[k], 64)
			if err != nil {
				t.Fatalf("%s: INFO memory field %s = %q: %v", when, k, fields[k], err)
			}
			return v
		}
		used, rss, peak := num("used_memory"), num("used_memory_rss"), num("used_memory_peak")
		overhead, dataset, startup := num("used_memory_overhead"), num("used_memory_dataset"), num("used_memory_startup")
		ratio := num("mem_fragmentation_ratio")
		t.Logf("%s: used_memory %.0f rss %.0f peak %.0f overhead %.0f dataset %.0f startup %.0f ratio %.2f goblin_store_bytes %s",
			when, used, rss, peak, overhead, dataset, startup, ratio, fields["goblin_store_bytes"])
		switch {
		case used <= 0 || rss <= 0:
			t.Errorf("%s: used_memory %.0f, used_memory_rss %.0f: want both positive", when, used, rss)
		case overhead > used:
			t.Errorf("%s: used_memory_overhead %.0f > used_memory %.0f", when, overhead, used)
		case dataset != used-overhead || dataset < 0:
			t.Errorf("%s: used_memory_dataset %.0f, want used_memory - overhead = %.0f >= 0", when, dataset, used-overhead)
		case peak < used || startup > peak:
			t.Errorf("%s: used_memory_peak %.0f, used_memory %.0f, startup %.0f: want startup <= peak >= used", when, peak, used, startup)
		case ratio < 0.5 || ratio > 20:
			t.Errorf("%s: mem_fragmentation_ratio %.2f (rss %.0f / used %.0f): want 0.5..20", when, ratio, rss, used)
		}
		if num("goblin_store_bytes") <= 0 {
			t.Errorf("%s: goblin_store_bytes %q", when, fields["goblin_store_bytes"])
		}
		stats := strings.Fields(cli("MEMORY", "STATS"))
		for i := 0; i+1 < len(stats); i += 2 {
			if stats[i] == "overhead.total" {
				if o, _ := strconv.ParseFloat(stats[i+1], 64); o > used*2 {
					t.Errorf("%s: MEMORY STATS overhead.total %s, far above used_memory %.0f", when, stats[i+1], used)
				}
			}
		}
	}
	cli("SET", "foo", "bar")
	check("one key")
	// 64 MiB of values: the arena maps regions outside the Go heap, which
	// used_memory must count or the ratio would soar.
	value := []byte(strings.Repeat("x", 1<<20))
	for i := 0; i < 64; i++ {
		runTool(t, value, "redis-cli", "-s", s.sock, "-x", "SET", "big"+strconv.Itoa(i))
	}
	check("64 MiB of values")
}
