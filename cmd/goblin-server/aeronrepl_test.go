package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// freeUDPPort returns a UDP port on host nobody listens on now.
func freeUDPPort(t testing.TB, host string) int {
	t.Helper()
	c, err := net.ListenPacket("udp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// mixedWrites sends n writes of several kinds (strings, counters, hashes,
// lists, sets, deletions, expiries, MULTI/EXEC) in pipelines of 100.
func mixedWrites(t testing.TB, c *redis.Client, rng *rand.Rand, prefix string, n int) {
	t.Helper()
	ctx := context.Background()
	for done := 0; done < n; {
		pl := c.Pipeline()
		for i := 0; i < 100 && done < n; i++ {
			k := fmt.Sprintf("%s:%d", prefix, rng.IntN(2000))
			switch rng.IntN(9) {
			case 0, 1:
				pl.Set(ctx, k, rng.Uint64(), 0)
			case 2:
				pl.Incr(ctx, k+":n")
			case 3:
				pl.HSet(ctx, k+":h", fmt.Sprint(rng.IntN(20)), rng.IntN(1000))
			case 4:
				pl.RPush(ctx, k+":l", rng.IntN(1000))
			case 5:
				pl.SAdd(ctx, k+":s", rng.IntN(50))
			case 6:
				pl.Del(ctx, k)
			case 7:
				pl.Set(ctx, k+":t", "v", time.Hour)
			case 8:
				tx := c.TxPipeline()
				tx.Incr(ctx, prefix+":tx")
				tx.Append(ctx, prefix+":txlog", "x")
				if _, err := tx.Exec(ctx); err != nil {
					t.Fatalf("MULTI/EXEC: %v", err)
				}
			}
			done++
		}
		if _, err := pl.Exec(ctx); err != nil {
			t.Fatalf("writes: %v", err)
		}
	}
}

// aeronLive waits until the replica applies the Aeron stream.
func aeronLive(t testing.TB, c *redis.Client) {
	t.Helper()
	testkit.Eventually(t, 60*time.Second, "the replica to follow the Aeron stream (aeron_link:aeron)", func() (bool, string) {
		return infoField(t, c, "replication", "aeron_link") == "aeron", "aeron_link:" +
			infoField(t, c, "replication", "aeron_link") + " master_link_status:" + infoField(t, c, "replication", "master_link_status")
	})
}

// TestAeronReplicationLoopback: a goblin primary publishing its stream on
// a multi-destination (MDC, control-mode=dynamic) channel on loopback and
// two goblin replicas subscribing to it: both catch up over TCP, switch to
// the Aeron stream, and after mixed writes hold the primary's data at its
// offset; the primary lists both with their offsets.
func TestAeronReplicationLoopback(t *testing.T) {
	t.Parallel() // its own processes and ports; it times nothing
	ctl, status := freeUDPPort(t, "127.0.0.1"), freeUDPPort(t, "127.0.0.1")
	p := startServer(t, "--repl-aeron-channel", fmt.Sprintf("aeron:udp?control-mode=dynamic|control=127.0.0.1:%d", ctl),
		"--repl-aeron-status-channel", fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", status))
	pc := redis.NewClient(goblinOpts(p))
	defer pc.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	mixedWrites(t, pc, rng, "pre", 3000)
	var reps []*redis.Client
	var rsrv []*srv
	for i := range 2 {
		r := startServer(t, "--replicaof", strings.Replace(p.tcp, ":", " ", 1),
			"--replica-aeron-channel", fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d|control=127.0.0.1:%d|control-mode=dynamic", freeUDPPort(t, "127.0.0.1"), ctl),
			"--replica-aeron-status-channel", fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", status),
			"--replica-aeron-name", fmt.Sprintf("r%d", i))
		rc := redis.NewClient(goblinOpts(r))
		defer rc.Close()
		reps = append(reps, rc)
		rsrv = append(rsrv, r)
	}
	for _, rc := range reps {
		aeronLive(t, rc)
	}
	mixedWrites(t, pc, rng, "live", 20000)
	for i, rc := range reps {
		caughtUp(t, pc, rc)
		sameData(t, pc, rc)
		if got := infoField(t, rc, "replication", "aeron_link"); got != "aeron" {
			t.Errorf("replica %d: aeron_link:%s after the writes, want aeron", i, got)
		}
	}
	want := infoInt(t, pc, "replication", "master_repl_offset")
	testkit.Eventually(t, 10*time.Second, "the primary to list both Aeron replicas at its offset", func() (bool, string) {
		info, _ := pc.Info(context.Background(), "replication").Result()
		return infoInt(t, pc, "replication", "aeron_connected_replicas") == 2 &&
			strings.Count(info, fmt.Sprintf("offset=%d,lag_bytes=0", want)) == 2, info
	})
	// The Aeron replicas are slave<N> lines too (as redis-sentinel reads them).
	testkit.Eventually(t, 10*time.Second, "INFO replication to list both Aeron replicas as slave<N> lines, online at its offset", func() (bool, string) {
		info, _ := pc.Info(context.Background(), "replication").Result()
		ok := infoInt(t, pc, "replication", "connected_slaves") == 2
		for _, r := range rsrv {
			_, port, _ := strings.Cut(r.tcp, ":")
			ok = ok && strings.Contains(info, fmt.Sprintf("ip=127.0.0.1,port=%s,state=online,offset=%d,", port, want))
		}
		return ok, info
	})
	testkit.Eventually(t, 10*time.Second, "the metrics to show 2 Aeron replicas with no lag, and each replica live", func() (bool, string) {
		got := fmt.Sprintf("primary repl_aeron_replicas %v max_lag %v offset %v (want %d); replicas live %v %v",
			scrapeOK(p, "goblin_repl_aeron_replicas"), scrapeOK(p, "goblin_repl_aeron_max_lag_bytes"),
			scrapeOK(p, "goblin_repl_aeron_offset_bytes"), want,
			scrapeOK(rsrv[0], "goblin_replica_aeron_live"), scrapeOK(rsrv[1], "goblin_replica_aeron_live"))
		return scrapeOK(p, "goblin_repl_aeron_replicas") == 2 && scrapeOK(p, "goblin_repl_aeron_max_lag_bytes") == 0 &&
			scrapeOK(p, "goblin_repl_aeron_offset_bytes") == float64(want) &&
			scrapeOK(rsrv[0], "goblin_replica_aeron_live") == 1 && scrapeOK(rsrv[1], "goblin_replica_aeron_live") == 1 &&
			scrapeOK(rsrv[0], "goblin_replica_offset_bytes") == float64(want), got
	})
}
