package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/redis/go-redis/v9"
)

// TestLatencyFromConfigFile: the latency directives of a redis.conf-style
// file reach the server (the percentiles' several arguments included), a
// SAVE of many keys over the threshold is a "command" event that redis-cli
// reads with LATENCY LATEST, and LATENCY HISTOGRAM counts the calls.
func TestLatencyFromConfigFile(t *testing.T) {
	t.Parallel() // its own process and directory; the SAVE it times is over a 1 ms threshold
	dir := t.TempDir()
	sock := filepath.Join(dir, "g.sock")
	conf := filepath.Join(dir, "goblin.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf("port 0\nunixsocket %s\ndir %s\nlatency-monitor-threshold 1\nlatency-tracking-info-percentiles 50 99.9\n", sock, dir)), 0o600)
	p := startProc(t, buildServer(t), conf, "--metrics", "off")
	p.WaitLog(t, `msg=ready`, startTimeout)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: sock})
	defer rdb.Close()
	if got := rdb.ConfigGet(ctx, "latency-*").Val(); got["latency-monitor-threshold"] != "1" || got["latency-tracking-info-percentiles"] != "50 99.9" || got["latency-tracking"] != "yes" {
		t.Fatalf("CONFIG GET latency-*: %v", got)
	}
	// Enough keys that the SAVE takes well over the 1 ms threshold: 300,000
	// (tens of ms); under -race 100,000, which the race-built client writes
	// in a third of the time and the server (not race-built) still saves
	// in several ms. Pipelined in batches: go-redis gives one Exec a single
	// 3 s write deadline, which a loaded machine missed for the whole lot.
	keys := 300_000
	if testkit.RaceEnabled {
		keys = 100_000
	}
	for from := 0; from < keys; from += 10_000 {
		pipe := rdb.Pipeline()
		for i := from; i < min(from+10_000, keys); i++ {
			pipe.Set(ctx, "key:"+strconv.Itoa(i), "a value of some length", 0)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatalf("SETs %d to %d: %v", from, min(from+10_000, keys)-1, err)
		}
	}
	if err := rdb.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	out := string(runTool(t, nil, "redis-cli", "-s", sock, "LATENCY", "LATEST"))
	// Four lines an event (name, time, latest, max): the SAVE's "command"
	// among them. A loaded machine may add others (a "fast-command" whose
	// cycle the scheduler interrupted), as it would on Redis.
	lines, saved := strings.Split(strings.TrimSpace(out), "\n"), false
	for i := 0; i < len(lines); i += 4 {
		saved = saved || lines[i] == "command"
	}
	if !saved {
		t.Fatalf("LATENCY LATEST after a SAVE of %d keys with a 1 ms threshold:\n%s", keys, out)
	}
	h := rdb.Do(ctx, "LATENCY", "HISTOGRAM", "set").String()
	if !strings.Contains(h, "calls:"+strconv.Itoa(keys)) {
		t.Fatalf("LATENCY HISTOGRAM set: %s, want calls:%d", h, keys)
	}
	info := rdb.Info(ctx, "latencystats").Val()
	if !strings.Contains(info, "latency_percentiles_usec_set:p50=") || !strings.Contains(info, ",p99.9=") {
		t.Fatalf("INFO latencystats: %s", info)
	}
}
