package client

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit/latency"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// BenchmarkCollectionRoundTrip measures depth-one round trips of HSET,
// HGET, LPUSH, RPOP, ZADD and ZRANGE 0 9 with this client's typed calls,
// against one goblin-server serving the ring, Aeron IPC (its in-process
// Go media driver) and a Unix socket, each in RESP and SBE (over SBE these
// six travel as schema version 4's typed messages), and redis-server on a
// Unix socket, in the same run. Each case reports p50/p90/p99/p99.9 in ns;
// the run logs every goblin p50 and p99 beside Redis's and their ratios.
//
//	go test -run '^$' -bench CollectionRoundTrip -benchtime 20000x ./client/
//
// HSET and HGET use one field of a small hash; LPUSH pushes b.N + 2000
// elements that RPOP then pops; ZADD rescores 1000 members (a skiplist)
// that ZRANGE 0 9 then reads. GOBLIN_BENCH_SERVER=<path> measures a
// prebuilt goblin-server. Aeron rows are left out when the driver
// directory cannot be made.
func BenchmarkCollectionRoundTrip(b *testing.B) {
	targets := startCollectionPeers(b)
	peers := []string{"ring/resp", "ring/sbe", "aeron-ipc/resp", "aeron-ipc/sbe", "uds/resp", "uds/sbe", "redis/uds"}
	ops := []string{"HSET", "HGET", "LPUSH", "RPOP", "ZADD", "ZRANGE"}
	var mu sync.Mutex
	sums := map[string]latency.Summary{}
	for _, peer := range peers {
		tgt, ok := targets[peer]
		if !ok {
			continue
		}
		b.Run(strings.ReplaceAll(peer, "/", "-"), func(b *testing.B) {
			c := dialWithT(b, Options{DialTimeout: time.Minute}, tgt)
			for _, op := range ops {
				b.Run(op, func(b *testing.B) {
					s := measureCollection(b, c, op)
					mu.Lock()
					sums[peer+"/"+op] = s
					mu.Unlock()
				})
			}
		})
	}
	var lines []string
	for _, op := range ops {
		r, ok := sums["redis/uds/"+op]
		if !ok {
			continue
		}
		for _, p := range peers[:len(peers)-1] {
			if g, ok := sums[p+"/"+op]; ok {
				lines = append(lines, fmt.Sprintf("%-6s %-15s p50 %7.2fµs p99 %7.2fµs   redis uds p50 %7.2fµs p99 %7.2fµs   p50 ratio %.2f p99 ratio %.2f",
					op, p, float64(g.P50)/1e3, float64(g.P99)/1e3, float64(r.P50)/1e3, float64(r.P99)/1e3,
					float64(g.P50)/float64(r.P50), float64(g.P99)/float64(r.P99)))
			}
		}
	}
	if len(lines) > 0 {
		b.Logf("depth-one collection round trips, goblin beside redis-server (uds), same client, same run:\n%s", strings.Join(lines, "\n"))
	}
}

func measureCollection(b *testing.B, c *Client, op string) latency.Summary {
	ctx := context.Background()
	val := []byte("0123456789abcdef")
	i := 0
	var do func() error
	switch op {
	case "HSET":
		do = func() error { _, err := c.HSet(ctx, "bench:h", FieldValue{"field", val}); return err }
	case "HGET":
		if _, err := c.HSet(ctx, "bench:h", FieldValue{"field", val}); err != nil {
			b.Fatal(err)
		}
		do = func() error { _, err := c.HGet(ctx, "bench:h", "field"); return err }
	case "LPUSH":
		do = func() error { _, err := c.LPush(ctx, "bench:l", val); return err }
	case "RPOP":
		do = func() error { _, err := c.RPop(ctx, "bench:l"); return err }
	case "ZADD":
		members := make([]string, 1000)
		for j := range members {
			members[j] = "member:" + strconv.Itoa(j)
		}
		do = func() error {
			i++
			_, err := c.ZAdd(ctx, "bench:z", Z{Score: float64(i % 7919), Member: members[i%1000]})
			return err
		}
	case "ZRANGE":
		do = func() error { _, err := c.ZRange(ctx, "bench:z", 0, 9); return err }
	}
	for range 2000 {
		if err := do(); err != nil {
			b.Fatal(err)
		}
	}
	rec := latency.New()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if err := do(); err != nil {
			b.Fatal(op, ": ", err)
		}
		rec.Record(int64(time.Since(t0)))
	}
	b.StopTimer()
	rec.Report(b)
	return rec.Summary()
}

// startCollectionPeers starts one goblin-server on the ring, Aeron IPC and
// a Unix socket, in both protocols, and redis-server on a Unix socket.
func startCollectionPeers(b *testing.B) map[string]string {
	b.Helper()
	bin := os.Getenv("GOBLIN_BENCH_SERVER")
	if bin == "" {
		bin = testproc.Build(b, "./cmd/goblin-server")
	}
	dir := b.TempDir()
	aeronDir, err := os.MkdirTemp(shmBase(), "goblin-collbench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(aeronDir) })
	ringResp, ringSBE := filepath.Join(dir, "ring-resp"), filepath.Join(dir, "ring-sbe")
	udsResp, udsSBE := filepath.Join(dir, "resp.sock"), filepath.Join(dir, "sbe.sock")
	ipcResp := "aeron:ipc?proto=resp|dir=" + aeronDir
	ipcSBE := "aeron:ipc?proto=sbe|stream=2001|reply-stream=2002|dir=" + aeronDir
	p := testproc.Start(b, bin, "--metrics", "off", "--dir", dir,
		"--listen", "ring://"+ringResp+"?proto=resp", "--listen", "ring://"+ringSBE+"?proto=sbe",
		"--listen", "uds://"+udsResp+"?proto=resp", "--listen", "uds://"+udsSBE+"?proto=sbe",
		"--listen", ipcResp, "--listen", ipcSBE+"|driver=external")
	p.WaitLog(b, `msg=ready`, 120*time.Second)
	return map[string]string{
		"ring/resp":      "ring://" + ringResp + "?proto=resp&wait=yield",
		"ring/sbe":       "ring://" + ringSBE + "?proto=sbe&wait=yield",
		"aeron-ipc/resp": ipcResp,
		"aeron-ipc/sbe":  ipcSBE,
		"uds/resp":       "uds://" + udsResp + "?proto=resp",
		"uds/sbe":        "uds://" + udsSBE + "?proto=sbe",
		"redis/uds":      "uds://" + startRedis(b),
	}
}
