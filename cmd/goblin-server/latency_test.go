package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestLatencyFromConfigFile: the latency directives of a redis.conf-style
// file reach the server (the percentiles' several arguments included), a
// SAVE of many keys over the threshold is a "command" event that redis-cli
// reads with LATENCY LATEST, and LATENCY HISTOGRAM counts the calls.
func TestLatencyFromConfigFile(t *testing.T) {
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
	pipe := rdb.Pipeline()
	for i := range 300_000 {
		pipe.Set(ctx, "key:"+strconv.Itoa(i), "a value of some length", 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	out := string(runTool(t, nil, "redis-cli", "-s", sock, "LATENCY", "LATEST"))
	if !strings.HasPrefix(out, "command\n") {
		t.Fatalf("LATENCY LATEST after a SAVE of 300,000 keys with a 1 ms threshold:\n%s", out)
	}
	h := rdb.Do(ctx, "LATENCY", "HISTOGRAM", "set").String()
	if !strings.Contains(h, "calls:300000") {
		t.Fatalf("LATENCY HISTOGRAM set: %s", h)
	}
	info := rdb.Info(ctx, "latencystats").Val()
	if !strings.Contains(info, "latency_percentiles_usec_set:p50=") || !strings.Contains(info, ",p99.9=") {
		t.Fatalf("INFO latencystats: %s", info)
	}
}
