package runner

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/benchmarks/harness"
	"github.com/goblin-kv/goblin/internal/testkit"
)

// The measuring clients must not allocate per round trip: an allocation
// (and the GC work it brings) would be measured as server latency.
func TestProbersDoNotAllocate(t *testing.T) {
	cfg := harness.DefaultConfig()
	cfg.Profile = harness.Profiles(2)["backoff"]
	cfg.Ops = harness.AllOps // every operation, so every type is preloaded
	cfg.CaseTimeout = time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	testkit.Require(t, "redis-server", (redisPeer{}).Check(&cfg, harness.RESP))
	dir := t.TempDir()
	inst, err := NewRedis(harness.TUDS).Start(ctx, &cfg, harness.RESP, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close() })
	addr := filepath.Join(dir, "redis.sock")

	raw, err := dialRawRESP("unix", addr, &cfg, "block")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if err := raw.preload(); err != nil {
		t.Fatal(err)
	}
	lib, err := dialLibrary(ctx, &cfg, "uds://"+addr+"?proto=resp", "block")
	if err != nil {
		t.Fatal(err)
	}
	defer lib.Close()
	lib.(harness.Bounded).Bound(time.Now().Add(time.Minute)) // as the runner does
	for _, p := range []harness.Prober{raw, lib} {
		for _, op := range harness.AllOps {
			var doErr error
			allocs := testing.AllocsPerRun(200, func() {
				if err := p.Do(op); err != nil {
					doErr = err
				}
			})
			if doErr != nil {
				t.Fatalf("%s %s: %v", p.Describe(), op, doErr)
			}
			if allocs != 0 {
				t.Errorf("%s: %s allocates %.1f times per round trip", p.Describe(), op, allocs)
			}
		}
	}
}

// A wrong reply is an error, never a sample.
func TestRawClientRejectsWrongReply(t *testing.T) {
	cfg := harness.DefaultConfig()
	cfg.CaseTimeout = time.Minute
	testkit.Require(t, "redis-server", (redisPeer{}).Check(&cfg, harness.RESP))
	dir := t.TempDir()
	ctx := context.Background()
	inst, err := NewRedis(harness.TUDS).Start(ctx, &cfg, harness.RESP, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close() })
	raw, err := dialRawRESP("unix", filepath.Join(dir, "redis.sock"), &cfg, "block")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	// GET before any SET: Redis answers a nil bulk string, not the value.
	if err := raw.Do(harness.Get); err == nil {
		t.Error("GET of a missing key was accepted as the expected value")
	}
}
