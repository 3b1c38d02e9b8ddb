package replbench

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/client"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/latency"
	_ "github.com/goblin-kv/goblin/transport/ring" // ring:// targets
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// pair starts a primary of kind pk and one replica of kind rk at the two
// places.
func pair(tb testing.TB, pk, rk string, ppl, rpl place) (p, r *server) {
	tb.Helper()
	p = starter(pk)(tb, ppl, nil)
	fill(tb, p, 10000)
	r = starter(rk)(tb, rpl, p)
	synced(tb, r, 2*startTimeout)
	return p, r
}

// lagRow is one line of the lag table.
type lagRow struct {
	path, pair string
	p50, p99   time.Duration
	n          int
	writes     int64
}

// measureLag runs the lag probes for goblin→goblin and redis→redis at the
// two places, each under the steady writer.
func measureLag(tb testing.TB, path string, ppl, rpl place, probes int, pairs ...[2]string) []lagRow {
	var rows []lagRow
	if len(pairs) == 0 {
		pairs = [][2]string{{"goblin", "goblin"}, {"redis", "redis"}}
	}
	for _, pk := range pairs {
		p, r := pair(tb, pk[0], pk[1], ppl, rpl)
		stop := steadyWriter(tb, p)
		time.Sleep(500 * time.Millisecond) // the load settles
		start := time.Now()
		ds := lag(tb, p, r, probes)
		secs := time.Since(start).Seconds()
		written := stop()
		rows = append(rows, lagRow{path: path, pair: pk[0] + "→" + pk[1], p50: pct(ds, 0.5), p99: pct(ds, 0.99), n: len(ds),
			writes: int64(float64(written) / (secs + 0.5))})
		p.p.Stop(10 * time.Second)
		r.p.Stop(10 * time.Second)
	}
	return rows
}

func printLag(w io.Writer, rows []lagRow) {
	fmt.Fprintln(w, "| path | primary→replica | lag p50 | lag p99 | probes | steady writes/s |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %d | %d |\n", r.path, r.pair, us(r.p50), us(r.p99), r.n, r.writes)
	}
}

// BenchmarkReplicationLag: primary write → visible on the replica, p50 and
// p99 of REPL_BENCH_PROBES (default 3000) probes at a steady 20 000
// writes/s, over loopback and across two network namespaces (a veth
// pair), goblin→goblin beside redis→redis.
//
//	go test -run '^$' -bench ReplicationLag -benchtime 1x -v ./benchmarks/replbench/
func BenchmarkReplicationLag(b *testing.B) {
	probes := envInt("REPL_BENCH_PROBES", 3000)
	for range b.N {
		rows := measureLag(b, "loopback", place{}, place{}, probes)
		if os.Getenv("REPL_BENCH_MIXED") != "" { // which side a difference comes from
			rows = append(rows, measureLag(b, "loopback", place{}, place{}, probes, [2]string{"goblin", "redis"}, [2]string{"redis", "goblin"})...)
		}
		l := newLink(b)
		rows = append(rows, measureLag(b, "two namespaces (veth)", place{link: l, k: 0}, place{link: l, k: 1}, probes)...)
		printLag(os.Stdout, rows)
		for _, r := range rows {
			tag := strings.ReplaceAll(strings.Fields(r.path)[0], "-", "") + "-" + strings.Split(r.pair, "→")[0]
			b.ReportMetric(float64(r.p50.Microseconds()), tag+"-p50-µs")
			b.ReportMetric(float64(r.p99.Microseconds()), tag+"-p99-µs")
		}
	}
}

// setLoad runs 4 depth-one SET clients over TCP for d and returns the SETs
// done and their latencies.
func setLoad(tb testing.TB, addr string, d time.Duration) (int64, *latency.Recorder) {
	return latency.SetLoad(tb, "tcp", addr, 4, d)
}

type tputRow struct {
	kind     string
	replicas int
	ops      float64       // SETs per second
	cpu      float64       // the primary's CPU time (user+system) per SET, µs
	p50, p99 time.Duration // of the SETs
}

// cpuTicks returns the user and system CPU time of process pid in clock
// ticks (/proc/pid/stat fields 14 and 15; 100 a second).
func cpuTicks(tb testing.TB, pid int) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		tb.Fatal(err)
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return u + st
}

// cpuTicksWithChildren is cpuTicks plus the CPU time of pid's children
// it has reaped (fields 16 and 17: a redis-server's fork that made a
// snapshot).
func cpuTicksWithChildren(tb testing.TB, pid int) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		tb.Fatal(err)
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	var sum int64
	for _, i := range []int{11, 12, 13, 14} {
		v, _ := strconv.ParseInt(f[i], 10, 64)
		sum += v
	}
	return sum
}

// measureThroughput runs, rounds times, each kind's primary with each
// count of replicas of its kind (on loopback) for secs seconds after a
// 1 s warm-up; kinds and counts alternate. Each row is the median of its
// rounds (SET/s, CPU per SET and p99 each taken separately).
func measureThroughput(tb testing.TB, counts []int, secs, rounds int) []tputRow {
	type key struct {
		kind string
		n    int
	}
	runs := map[key][]tputRow{}
	for range rounds {
		for _, n := range counts {
			for _, kind := range []string{"goblin", "redis"} {
				start := startGoblin
				if kind == "redis" {
					start = startRedis
				}
				p := start(tb, place{}, nil)
				var reps []*server
				for range n {
					reps = append(reps, start(tb, place{}, p))
				}
				for _, r := range reps {
					synced(tb, r, 2*startTimeout)
				}
				onlineReplicas(tb, p, n)
				setLoad(tb, p.addr, time.Second)
				cpu0 := cpuTicks(tb, p.p.PID)
				ops, rec := setLoad(tb, p.addr, time.Duration(secs)*time.Second)
				cpu := float64(cpuTicks(tb, p.p.PID)-cpu0) * 1e4 / float64(max(ops, 1))
				s := rec.Summary()
				runs[key{kind, n}] = append(runs[key{kind, n}], tputRow{kind: kind, replicas: n, ops: float64(ops) / float64(secs),
					cpu: cpu, p50: time.Duration(s.P50), p99: time.Duration(s.P99)})
				for _, r := range reps {
					r.p.Stop(10 * time.Second)
				}
				p.p.Stop(10 * time.Second)
			}
		}
	}
	var rows []tputRow
	for _, n := range counts {
		for _, kind := range []string{"goblin", "redis"} {
			rs := runs[key{kind, n}]
			med := func(f func(tputRow) float64) float64 {
				v := make([]float64, len(rs))
				for i, r := range rs {
					v[i] = f(r)
				}
				sort.Float64s(v)
				return v[len(v)/2]
			}
			rows = append(rows, tputRow{kind: kind, replicas: n, ops: med(func(r tputRow) float64 { return r.ops }),
				cpu: med(func(r tputRow) float64 { return r.cpu }),
				p50: time.Duration(med(func(r tputRow) float64 { return float64(r.p50) })),
				p99: time.Duration(med(func(r tputRow) float64 { return float64(r.p99) }))})
		}
	}
	return rows
}

func printThroughput(w io.Writer, rows []tputRow) {
	base := map[string]tputRow{}
	fmt.Fprintln(w, "| server | replicas | SET/s | vs 0 replicas | primary CPU µs/SET | vs 0 replicas | p50 | p99 |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		if r.replicas == 0 {
			base[r.kind] = r
		}
		rel, relCPU := "—", "—"
		if b, ok := base[r.kind]; ok && r.replicas > 0 && b.ops > 0 && b.cpu > 0 {
			rel = fmt.Sprintf("%+.1f %%", 100*(r.ops/b.ops-1))
			relCPU = fmt.Sprintf("%+.1f %%", 100*(r.cpu/b.cpu-1))
		}
		fmt.Fprintf(w, "| %s | %d | %.0f | %s | %.1f | %s | %s | %s |\n", r.kind, r.replicas, r.ops, rel, r.cpu, relCPU, us(r.p50), us(r.p99))
	}
}

// BenchmarkPrimaryWithReplicas: the primary's SET throughput, CPU time per
// SET and latency (4 clients over loopback TCP, one SET in flight each,
// REPL_BENCH_SECONDS seconds, default 5) with 0, 1 and 4 replicas,
// goblin-server beside redis-server, alternating, REPL_BENCH_ROUNDS rounds
// (default 3), medians. On a shared machine the CPU per SET is the steadier
// figure: other work takes turns from throughput, not from it.
//
//	go test -run '^$' -bench PrimaryWithReplicas -benchtime 1x -v ./benchmarks/replbench/
func BenchmarkPrimaryWithReplicas(b *testing.B) {
	secs := envInt("REPL_BENCH_SECONDS", 5)
	for range b.N {
		rows := measureThroughput(b, []int{0, 1, 4}, secs, envInt("REPL_BENCH_ROUNDS", 3))
		printThroughput(os.Stdout, rows)
		for _, r := range rows {
			b.ReportMetric(r.ops, fmt.Sprintf("%s-%d-SET/s", r.kind, r.replicas))
		}
	}
}

// starter returns the start function of kind.
func starter(kind string) func(testing.TB, place, *server, ...string) *server {
	if kind == "redis" {
		return startRedis
	}
	return startGoblin
}

// fullSync fills a primary of kind pk with keys keys (fillShape) and
// times a fresh replica of kind rk from REPLICAOF to its link up and
// loaded.
func fullSync(tb testing.TB, pk, rk string, keys int, stringsOnly bool) (time.Duration, string) {
	d, mem, _, _ := fullSyncCPU(tb, pk, rk, keys, stringsOnly)
	return d, mem
}

// fullSyncCPU is fullSync that also returns the CPU seconds the primary
// (its reaped children included: a redis-server's fork) and the replica
// spent from REPLICAOF to the end of the sync.
func fullSyncCPU(tb testing.TB, pk, rk string, keys int, stringsOnly bool) (d time.Duration, mem string, pcpu, rcpu float64) {
	kind := pk + "→" + rk
	p := starter(pk)(tb, place{}, nil)
	fillShape(tb, p, keys, stringsOnly)
	r := starter(rk)(tb, place{}, nil)
	mem = p.info("memory", "used_memory_human")
	h, port, _ := net.SplitHostPort(p.addr)
	p0, r0 := cpuTicksWithChildren(tb, p.p.PID), cpuTicksWithChildren(tb, r.p.PID)
	t0 := time.Now()
	if err := r.c.Do(context.Background(), "REPLICAOF", h, port).Err(); err != nil {
		tb.Fatal(err)
	}
	for {
		if r.info("replication", "master_link_status") == "up" && r.info("replication", "master_sync_in_progress") == "0" {
			break
		}
		if time.Since(t0) > 10*time.Minute {
			tb.Fatalf("%s replica: no full sync in 10 minutes", kind)
		}
		time.Sleep(2 * time.Millisecond)
	}
	d = time.Since(t0)
	pcpu = float64(cpuTicksWithChildren(tb, p.p.PID)-p0) / 100
	rcpu = float64(cpuTicksWithChildren(tb, r.p.PID)-r0) / 100
	if n := r.c.DBSize(context.Background()).Val(); n != int64(keys) {
		tb.Fatalf("%s replica holds %d keys after the sync, want %d", kind, n, keys)
	}
	r.p.Stop(10 * time.Second)
	p.p.Stop(10 * time.Second)
	return d, mem, pcpu, rcpu
}

// BenchmarkFullSync: a fresh replica's full resynchronisation (diskless,
// both servers' default) of REPL_BENCH_KEYS keys (default 1 000 000: 90 %
// strings, 10 % hashes; REPL_BENCH_STRINGS=1: all 16-byte strings under
// 16-byte names, the shape), goblin of goblin beside redis of
// redis.
//
//	go test -run '^$' -bench FullSync -benchtime 1x -v ./benchmarks/replbench/
//	REPL_BENCH_KEYS=10000000 REPL_BENCH_STRINGS=1 go test -timeout 60m -run '^$' -bench FullSync -benchtime 1x -v ./benchmarks/replbench/
func BenchmarkFullSync(b *testing.B) {
	keys := envInt("REPL_BENCH_KEYS", 1_000_000)
	stringsOnly := os.Getenv("REPL_BENCH_STRINGS") != ""
	for range b.N {
		fmt.Println("| primary → replica | keys | primary used_memory | full sync (REPLICAOF → link up, loaded) | primary CPU | replica CPU |")
		fmt.Println("|---|---|---|---|---|---|")
		pairs := [][2]string{{"goblin", "goblin"}, {"redis", "redis"}}
		if os.Getenv("REPL_BENCH_MIXED") != "" {
			pairs = append(pairs, [2]string{"goblin", "redis"}, [2]string{"redis", "goblin"})
		}
		for _, pk := range pairs {
			d, mem, pcpu, rcpu := fullSyncCPU(b, pk[0], pk[1], keys, stringsOnly)
			fmt.Printf("| %s→%s | %d | %s | %.2f s | %.2f s | %.2f s |\n", pk[0], pk[1], keys, mem, d.Seconds(), pcpu, rcpu)
			b.ReportMetric(d.Seconds(), pk[0]+"-"+pk[1]+"-s")
		}
	}
}

// ringGets measures n GETs of one key over the ring target, one at a
// time.
func ringGets(tb testing.TB, target string, n int) *latency.Recorder {
	ctx := context.Background()
	c, err := client.Dial(ctx, target)
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	rec := latency.New()
	var buf []byte
	for range n {
		t := latency.Now()
		buf, err = c.GetAppend(ctx, buf[:0], "ringkey")
		if err != nil || string(buf) != "replicated-value" {
			tb.Fatalf("GET ringkey over %s: %q %v", target, buf, err)
		}
		rec.Record(latency.Now() - t)
	}
	return rec
}

// measureRingGet starts a goblin primary and replica, each with a ring
// listener, and alternates rounds of GETs over each ring.
func measureRingGet(tb testing.TB, rounds, n int) (primary, replica latency.Summary) {
	pdir, rdir := ringDir(tb), ringDir(tb)
	p := startGoblin(tb, place{}, nil, "--listen", "ring://"+pdir+"?proto=resp")
	if err := p.c.Set(context.Background(), "ringkey", "replicated-value", 0).Err(); err != nil {
		tb.Fatal(err)
	}
	r := startGoblin(tb, place{}, p, "--listen", "ring://"+rdir+"?proto=resp")
	synced(tb, r, 2*startTimeout)
	pr, rr := latency.New(), latency.New()
	for range rounds {
		pr.Merge(ringGets(tb, "ring://"+pdir+"?proto=resp", n))
		rr.Merge(ringGets(tb, "ring://"+rdir+"?proto=resp", n))
	}
	return pr.Summary(), rr.Summary()
}

// BenchmarkReplicaRingGet: GET of a 16-byte value over the shared-memory
// ring (RESP, the client's default backoff wait, the server's default
// idle strategy), served by a goblin replica beside the same GET served by
// its primary: REPL_BENCH_ROUNDS (default 5) alternating rounds of 5 000.
//
//	go test -run '^$' -bench ReplicaRingGet -benchtime 1x -v ./benchmarks/replbench/
func BenchmarkReplicaRingGet(b *testing.B) {
	rounds := envInt("REPL_BENCH_ROUNDS", 5)
	for range b.N {
		p, r := measureRingGet(b, rounds, 5000)
		fmt.Println("| GET over the ring, served by | p50 | p90 | p99 | GETs |")
		fmt.Println("|---|---|---|---|---|")
		for _, row := range []struct {
			name string
			s    latency.Summary
		}{{"the primary", p}, {"its replica", r}} {
			fmt.Printf("| %s | %.2f µs | %.2f µs | %.2f µs | %d |\n", row.name, float64(row.s.P50)/1e3, float64(row.s.P90)/1e3,
				float64(row.s.P99)/1e3, row.s.Count)
		}
		b.ReportMetric(float64(p.P50)/1e3, "primary-p50-µs")
		b.ReportMetric(float64(r.P50)/1e3, "replica-p50-µs")
	}
}

// TestHarnessesSmall runs each harness briefly and checks its figures
// are there (so the benchmarks keep working): lag probes all answered,
// SETs done with 0 and 1 replicas, a full sync of 20 000 keys on both
// servers, ring GETs served by both.
func TestHarnessesSmall(t *testing.T) {
	rows := measureLag(t, "loopback", place{}, place{}, 50)
	for _, r := range rows {
		if r.n != 50 || r.p50 <= 0 || r.p99 < r.p50 {
			t.Errorf("lag row %+v", r)
		}
	}
	tp := measureThroughput(t, []int{0, 1}, 1, 1)
	if len(tp) != 4 {
		t.Fatalf("throughput rows %+v", tp)
	}
	for _, r := range tp {
		if r.ops <= 0 || r.p99 <= 0 || r.cpu <= 0 {
			t.Errorf("throughput row %+v", r)
		}
	}
	for _, kind := range []string{"goblin", "redis"} {
		if d, _ := fullSync(t, kind, kind, 20000, false); d <= 0 {
			t.Errorf("%s full sync took %v", kind, d)
		}
	}
	p, r := measureRingGet(t, 1, 500)
	if p.Count != 500 || r.Count != 500 || p.P50 <= 0 || r.P50 <= 0 {
		t.Errorf("ring GETs: primary %v, replica %v", p, r)
	}
	var b strings.Builder
	printLag(&b, rows)
	printThroughput(&b, tp)
	t.Log("\n" + b.String())
}

// TestTCPReplicationAcrossNamespaces: a goblin primary in one network
// namespace and a goblin replica and a redis-server replica in the
// other, joined by a veth pair, replicate over TCP between the two
// namespaces' addresses: a full sync of 20 000 keys, the stream after it,
// the same data on all three; the link cut (CLIENT KILL TYPE replica)
// resumes with a partial resync (sync_partial_ok:2, one per replica, and
// still two full syncs).
func TestTCPReplicationAcrossNamespaces(t *testing.T) {
	ctx := context.Background()
	l := newLink(t)
	p := startGoblin(t, place{link: l, k: 0}, nil)
	fill(t, p, 20000)
	g := startGoblin(t, place{link: l, k: 1}, p)
	rd := startRedis(t, place{link: l, k: 1}, p)
	for _, r := range []*server{g, rd} {
		synced(t, r, 2*startTimeout)
		if host := r.info("replication", "master_host"); host != l.Addr[0].String() {
			t.Fatalf("%s replica follows %s, want the primary's namespace address %s", r.kind, host, l.Addr[0])
		}
	}
	if v := p.c.Info(ctx, "replication").Val(); !strings.Contains(v, "slave0:ip="+l.Addr[1].String()) ||
		!strings.Contains(v, "slave1:ip="+l.Addr[1].String()) {
		t.Fatalf("the primary does not list both replicas at the other namespace's address %s:\n%s", l.Addr[1], v)
	}
	write := func(prefix string, n int) {
		pl := p.c.Pipeline()
		for i := range n {
			pl.Set(ctx, fmt.Sprintf("%s:%d", prefix, i), i, 0)
			pl.HIncrBy(ctx, prefix+":h", "n", 1)
		}
		if _, err := pl.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	write("stream", 3000)
	same(t, p, g, rd)
	if n := p.c.ClientKillByFilter(ctx, "TYPE", "replica").Val(); n != 2 {
		t.Fatalf("CLIENT KILL TYPE replica: %d, want 2", n)
	}
	write("after-cut", 2000)
	testkit.Eventually(t, 60*time.Second, "both replicas back by partial resync (sync_partial_ok:2)", func() (bool, string) {
		return p.info("stats", "sync_partial_ok") == "2", "sync_full:" + p.info("stats", "sync_full") +
			" sync_partial_ok:" + p.info("stats", "sync_partial_ok") + " sync_partial_err:" + p.info("stats", "sync_partial_err")
	})
	if full := p.info("stats", "sync_full"); full != "2" {
		t.Fatalf("sync_full:%s, want the two first syncs only", full)
	}
	same(t, p, g, rd)
}

// same waits until every replica has the primary's offset, then compares
// their keys and values with the primary's.
func same(t *testing.T, p *server, replicas ...*server) {
	t.Helper()
	want, _ := strconv.ParseInt(p.info("replication", "master_repl_offset"), 10, 64)
	for _, r := range replicas {
		testkit.Eventually(t, 60*time.Second, fmt.Sprintf("the %s replica to reach offset %d", r.kind, want), func() (bool, string) {
			got, _ := strconv.ParseInt(r.info("replication", "slave_repl_offset"), 10, 64)
			return got >= want, fmt.Sprintf("at %d", got)
		})
	}
	pd := dump(t, p.c)
	for _, r := range replicas {
		rdump := dump(t, r.c)
		if len(rdump) != len(pd) {
			t.Fatalf("the %s replica holds %d keys, the primary %d", r.kind, len(rdump), len(pd))
		}
		for k, v := range pd {
			if rdump[k] != v {
				t.Fatalf("key %q: primary %q, %s replica %q", k, v, r.kind, rdump[k])
			}
		}
	}
}

// dump reads every string and hash of database 0.
func dump(t *testing.T, c *redis.Client) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	iter := c.Scan(ctx, 0, "*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	for base := 0; base < len(keys); base += 1000 {
		batch := keys[base:min(base+1000, len(keys))]
		pl := c.Pipeline()
		vals := make([]func() string, len(batch))
		for i, k := range batch {
			if strings.HasPrefix(k, "hash:") || strings.HasSuffix(k, ":h") {
				cmd := pl.HGetAll(ctx, k)
				vals[i] = func() string { return fmt.Sprint(cmd.Val()) }
			} else {
				cmd := pl.Get(ctx, k)
				vals[i] = cmd.Val
			}
		}
		if _, err := pl.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		for i, k := range batch {
			out[k] = vals[i]()
		}
	}
	return out
}
