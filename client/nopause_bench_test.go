package client

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit/latency"
)

// BenchmarkNoPauseCollections measures a depth-one PING client's latency
// (p50, p99, p99.9, max) on goblin-server and on redis-server (both on a
// Unix socket, RESP, same client, same run) while a second client
//
//   - does nothing (idle),
//   - builds hashes field by field past hash-max-listpack-entries (512),
//     so each crosses listpack → hashtable (hash-convert),
//   - builds sorted sets member by member past zset-max-listpack-entries
//     (128), listpack → skiplist (zset-convert),
//   - deletes a list of BIG elements with DEL, then one with UNLINK
//     (del-list, unlink-list), and a hash of BIG fields, a set of BIG
//     members and a sorted set of BIG members with DEL (del-hash, del-set,
//     del-zset); each collection is loaded before the window opens,
//
// and logs each phase's figures and its p99.9 over idle's. Depth one, a
// stall of d delays one PING by d: p99.9 shows frequent stalls, max a
// single one. Each phase also logs the server's own view of its stalls,
// which the machine's scheduler does not blur: latency-monitor-threshold
// 1 and LATENCY LATEST's largest event (the event and its maximum in ms;
// "-" when no command or background step took 1 ms).
//
//	go test -run '^$' -bench NoPauseCollections -benchtime 1x -timeout 30m ./client/
//	GOBLIN_NOPAUSE_BIG=10000000 GOBLIN_NOPAUSE_WINDOW=5s go test ...
//
// BIG defaults to 1,000,000 and each phase's window to 3 s;
// GOBLIN_NOPAUSE_PHASES=del-list,unlink-zset runs idle and those (any of
// del-KIND and unlink-KIND for KIND list, hash, set or zset).
func BenchmarkNoPauseCollections(b *testing.B) {
	big := 1_000_000
	if v := os.Getenv("GOBLIN_NOPAUSE_BIG"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1000 {
			b.Fatalf("GOBLIN_NOPAUSE_BIG=%q: want a count of at least 1000", v)
		}
		big = n
	}
	window := 3 * time.Second
	if v := os.Getenv("GOBLIN_NOPAUSE_WINDOW"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			b.Fatalf("GOBLIN_NOPAUSE_WINDOW=%q: want a positive duration", v)
		}
		window = d
	}
	peers := []struct{ name, tgt string }{
		{"goblin", startGoblin(b, "", "resp")},
		{"redis", "uds://" + startRedis(b)},
	}
	phases := []string{"idle", "hash-convert", "zset-convert", "del-list", "unlink-list", "del-hash", "del-set", "del-zset"}
	if v := os.Getenv("GOBLIN_NOPAUSE_PHASES"); v != "" {
		phases = append([]string{"idle"}, strings.Split(v, ",")...)
	}
	for _, phase := range phases {
		if _, ok := bigKind(phase); !ok && phase != "idle" && phase != "hash-convert" && phase != "zset-convert" {
			b.Fatalf("GOBLIN_NOPAUSE_PHASES: unknown phase %q", phase)
		}
	}
	var lines []string
	for _, p := range peers {
		sums := map[string]latency.Summary{}
		stalls := map[string]string{}
		for _, phase := range phases {
			b.Run(p.name+"/"+phase, func(b *testing.B) {
				sums[phase], stalls[phase] = noPausePhase(b, p.tgt, phase, big, window)
			})
		}
		idle := sums["idle"]
		for _, phase := range phases {
			s := sums[phase]
			lines = append(lines, fmt.Sprintf("%-6s %-13s PINGs %7d  p50 %7.1fµs  p99 %8.1fµs  p99.9 %8.1fµs  max %9.1fµs  p99.9/idle %.2f  server stall %s",
				p.name, phase, s.Count, float64(s.P50)/1e3, float64(s.P99)/1e3, float64(s.P999)/1e3, float64(s.Max)/1e3,
				float64(s.P999)/float64(max(idle.P999, 1)), stalls[phase]))
		}
	}
	b.Logf("depth-one PING while collections convert and big ones are deleted (BIG=%d, window %v):\n%s",
		big, window, strings.Join(lines, "\n"))
}

// noPausePhase runs one phase on tgt: the work (if any) on one client,
// PINGs on another for window, and returns the PINGs' latencies and the
// server's largest LATENCY LATEST event of the window.
func noPausePhase(b *testing.B, tgt, phase string, big int, window time.Duration) (latency.Summary, string) {
	ctx := context.Background()
	pinger := dialT(b, tgt)
	worker := dialT(b, tgt)
	if _, err := worker.Do(ctx, "FLUSHALL"); err != nil {
		b.Fatal(err)
	}
	if kind, ok := bigKind(phase); ok {
		loadBig(b, worker, kind, big)
	}
	for range 2000 { // warm-up
		if err := pinger.Ping(ctx); err != nil {
			b.Fatal(err)
		}
	}
	for _, cmd := range [][]any{{"CONFIG", "SET", "latency-monitor-threshold", "1"}, {"LATENCY", "RESET"}} {
		if _, err := worker.Do(ctx, cmd...); err != nil {
			b.Fatal(cmd, err)
		}
	}
	var stop atomic.Bool
	workErr := make(chan error, 1)
	go func() {
		workErr <- noPauseWork(ctx, worker, phase, &stop)
	}()
	rec := latency.New()
	b.ResetTimer()
	for end := time.Now().Add(window); time.Now().Before(end); {
		t0 := time.Now()
		if err := pinger.Ping(ctx); err != nil {
			b.Fatal(err)
		}
		rec.Record(int64(time.Since(t0)))
	}
	b.StopTimer()
	stop.Store(true)
	if err := <-workErr; err != nil {
		b.Fatal(phase, ": ", err)
	}
	rec.Report(b)
	return rec.Summary(), worstStall(b, worker)
}

// worstStall returns LATENCY LATEST's event with the largest maximum as
// "event max-ms", or "-" when there is none.
func worstStall(b *testing.B, c *Client) string {
	v, err := c.Do(context.Background(), "LATENCY", "LATEST")
	if err != nil {
		b.Fatal("LATENCY LATEST: ", err)
	}
	worst, event := int64(-1), "-"
	for _, e := range v.Array { // [event, time, latest ms, max ms]
		if len(e.Array) == 4 && e.Array[3].Int > worst {
			worst, event = e.Array[3].Int, string(e.Array[0].Str)+" "+strconv.FormatInt(e.Array[3].Int, 10)+"ms"
		}
	}
	return event
}

// noPauseWork does phase's writes until stop; the deletes run once, a
// moment into the window.
func noPauseWork(ctx context.Context, c *Client, phase string, stop *atomic.Bool) error {
	switch phase {
	case "idle":
		return nil
	}
	if _, ok := bigKind(phase); ok {
		time.Sleep(300 * time.Millisecond)
		cmd, _, _ := strings.Cut(phase, "-")
		v, err := c.Do(ctx, strings.ToUpper(cmd), "big")
		if err == nil && v.Int != 1 {
			err = fmt.Errorf("%s big answered %v", cmd, v)
		}
		return err
	}
	for k := 0; !stop.Load(); k++ {
		key := phase + ":" + strconv.Itoa(k)
		n := 130 // zset-max-listpack-entries 128
		if phase == "hash-convert" {
			n = 520 // hash-max-listpack-entries 512
		}
		for f := 0; f < n && !stop.Load(); f++ {
			var err error
			if phase == "hash-convert" {
				_, err = c.HSet(ctx, key, FieldValue{"field:" + strconv.Itoa(f), []byte("value")})
			} else {
				_, err = c.ZAdd(ctx, key, Z{Score: float64(f), Member: "member:" + strconv.Itoa(f)})
			}
			if err != nil {
				return err
			}
		}
		if k%100 == 0 {
			v, err := c.Do(ctx, "OBJECT", "ENCODING", key)
			want := map[string]string{"hash-convert": "hashtable", "zset-convert": "skiplist"}[phase]
			if err != nil || (!stop.Load() && v.String() != want && v.String() != `"`+want+`"`) {
				return fmt.Errorf("OBJECT ENCODING %s after %d elements: %v %v, want %s", key, n, v, err, want)
			}
		}
	}
	return nil
}

// bigKind returns the collection type a del-KIND or unlink-KIND phase
// deletes.
func bigKind(phase string) (string, bool) {
	cmd, kind, ok := strings.Cut(phase, "-")
	if !ok || (cmd != "del" && cmd != "unlink") {
		return "", false
	}
	switch kind {
	case "list", "hash", "set", "zset":
		return kind, true
	}
	return "", false
}

// loadBig fills key "big" with a collection of kind holding n elements
// (1000 per command; members that are not integers, so a set is a
// hashtable), and checks its cardinality.
func loadBig(b *testing.B, c *Client, kind string, n int) {
	ctx := context.Background()
	cmds := map[string][2]string{ // the write, the cardinality
		"list": {"RPUSH", "LLEN"}, "hash": {"HSET", "HLEN"}, "set": {"SADD", "SCARD"}, "zset": {"ZADD", "ZCARD"},
	}[kind]
	cmd, card := cmds[0], cmds[1]
	args := make([]any, 0, 2002)
	for i := 0; i < n; i += 1000 {
		args = append(args[:0], cmd, "big")
		for j := i; j < min(i+1000, n); j++ {
			e := "e" + strconv.Itoa(j)
			switch kind {
			case "hash":
				args = append(args, e, "v")
			case "zset":
				args = append(args, strconv.Itoa(j), e)
			default:
				args = append(args, e)
			}
		}
		if _, err := c.Do(ctx, args...); err != nil {
			b.Fatal(err)
		}
	}
	if v, err := c.Do(ctx, card, "big"); err != nil || v.Int != int64(n) {
		b.Fatalf("%s big: %v %v, want %d", card, v, err, n)
	}
}
