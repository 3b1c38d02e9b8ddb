package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// TestTypedCalls runs the typed calls against the real
// goblin-server over Unix and TCP sockets in both protocols, and against
// redis-server 7 (RESP): the same expectations hold for both servers.
func TestTypedCalls(t *testing.T) {
	targets := testproc.StartGoblinServer(t)
	for _, name := range e2eCases {
		t.Run(name, func(t *testing.T) { exerciseTyped(t, dialT(t, targets[name]), name+":") })
	}
	t.Run("redis-server", func(t *testing.T) {
		exerciseTyped(t, dialT(t, "uds://"+startRedis(t)), "redis:")
	})
}

func exerciseTyped(t *testing.T, c *Client, p string) {
	ctx := ctxT(t)
	k := func(s string) string { return p + s }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// SETEX, PSETEX, SETNX.
	must(c.SetEx(ctx, k("ex"), []byte("v"), 10*time.Second))
	if ttl, err := c.TTL(ctx, k("ex")); err != nil || ttl <= 9*time.Second || ttl > 10*time.Second {
		t.Fatalf("TTL after SetEx = %v, %v", ttl, err)
	}
	must(c.SetEx(ctx, k("pex"), []byte("v"), 1500*time.Millisecond))
	if ttl, err := c.TTL(ctx, k("pex")); err != nil || ttl <= time.Second || ttl > 1500*time.Millisecond {
		t.Fatalf("TTL after SetEx(1.5s) = %v, %v", ttl, err)
	}
	var se *ServerError
	if err := c.SetEx(ctx, k("bad"), []byte("v"), 0); !errors.As(err, &se) {
		t.Fatalf("SetEx(0) = %v, want a server error", err)
	}
	if ok, err := c.SetNX(ctx, k("nx"), []byte("1")); !ok || err != nil {
		t.Fatalf("SetNX new = %v, %v", ok, err)
	}
	if ok, err := c.SetNX(ctx, k("nx"), []byte("2")); ok || err != nil {
		t.Fatalf("SetNX existing = %v, %v", ok, err)
	}
	// GETDEL, GETEX.
	if v, err := c.GetDel(ctx, k("nx")); err != nil || string(v) != "1" {
		t.Fatalf("GetDel = %q, %v", v, err)
	}
	if _, err := c.GetDel(ctx, k("nx")); !errors.Is(err, ErrNil) {
		t.Fatalf("GetDel missing = %v", err)
	}
	if v, err := c.GetEx(ctx, k("ex"), GetExOptions{Persist: true}); err != nil || string(v) != "v" {
		t.Fatalf("GetEx persist = %q, %v", v, err)
	}
	if ttl, err := c.TTL(ctx, k("ex")); err != nil || ttl != NoExpiry {
		t.Fatalf("TTL after persist = %v, %v", ttl, err)
	}
	if _, err := c.GetEx(ctx, k("ex"), GetExOptions{TTL: 2500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if ttl, _ := c.TTL(ctx, k("ex")); ttl <= 2*time.Second || ttl > 2500*time.Millisecond {
		t.Fatalf("TTL after GetEx PX = %v", ttl)
	}
	if _, err := c.GetEx(ctx, k("ex"), GetExOptions{At: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if ttl, _ := c.TTL(ctx, k("ex")); ttl <= 59*time.Minute || ttl > time.Hour {
		t.Fatalf("TTL after GetEx PXAT = %v", ttl)
	}
	if _, err := c.GetEx(ctx, k("none"), GetExOptions{}); !errors.Is(err, ErrNil) {
		t.Fatalf("GetEx missing = %v", err)
	}
	// APPEND, STRLEN, GETRANGE, SETRANGE.
	if n, err := c.Append(ctx, k("s"), []byte("Hello")); n != 5 || err != nil {
		t.Fatalf("Append = %d, %v", n, err)
	}
	if n, err := c.Append(ctx, k("s"), []byte(" World")); n != 11 || err != nil {
		t.Fatalf("Append = %d, %v", n, err)
	}
	if n, err := c.StrLen(ctx, k("s")); n != 11 || err != nil {
		t.Fatalf("StrLen = %d, %v", n, err)
	}
	if n, err := c.StrLen(ctx, k("none")); n != 0 || err != nil {
		t.Fatalf("StrLen missing = %d, %v", n, err)
	}
	for _, tc := range []struct {
		start, end int64
		want       string
	}{{0, 4, "Hello"}, {-5, -1, "World"}, {6, 100, "World"}, {5, 1, ""}} {
		if v, err := c.GetRange(ctx, k("s"), tc.start, tc.end); err != nil || string(v) != tc.want {
			t.Fatalf("GetRange(%d, %d) = %q, %v", tc.start, tc.end, v, err)
		}
	}
	if n, err := c.SetRange(ctx, k("s"), 6, []byte("Redis")); n != 11 || err != nil {
		t.Fatalf("SetRange = %d, %v", n, err)
	}
	if n, err := c.SetRange(ctx, k("pad"), 3, []byte("x")); n != 4 || err != nil {
		t.Fatalf("SetRange padding = %d, %v", n, err)
	}
	if v, _ := c.Get(ctx, k("pad")); !bytes.Equal(v, []byte("\x00\x00\x00x")) {
		t.Fatalf("padded value %q", v)
	}
	if v, _ := c.Get(ctx, k("s")); string(v) != "Hello Redis" {
		t.Fatalf("after SetRange: %q", v)
	}
	// INCRBYFLOAT.
	must(c.Set(ctx, k("f"), []byte("10.5"), SetOptions{}))
	if f, err := c.IncrByFloat(ctx, k("f"), 0.1); err != nil || f != 10.6 {
		t.Fatalf("IncrByFloat = %v, %v", f, err)
	}
	if f, err := c.IncrByFloat(ctx, k("f"), -5e3); err != nil || f != -4989.4 {
		t.Fatalf("IncrByFloat = %v, %v", f, err)
	}
	if _, err := c.IncrByFloat(ctx, k("s"), 1); !errors.As(err, &se) || se.Message != "ERR value is not a valid float" {
		t.Fatalf("IncrByFloat on text = %v", err)
	}
	// UNLINK, TOUCH, RENAME, RENAMENX, COPY, EXPIREAT.
	if n, err := c.Touch(ctx, k("s"), k("f"), k("none")); n != 2 || err != nil {
		t.Fatalf("Touch = %d, %v", n, err)
	}
	must(c.Rename(ctx, k("s"), k("s2")))
	if err := c.Rename(ctx, k("s"), k("s3")); !errors.As(err, &se) || se.Message != "ERR no such key" {
		t.Fatalf("Rename missing = %v", err)
	}
	if ok, err := c.RenameNX(ctx, k("s2"), k("f")); ok || err != nil {
		t.Fatalf("RenameNX onto an existing key = %v, %v", ok, err)
	}
	if ok, err := c.Copy(ctx, k("s2"), k("c"), CopyOptions{}); !ok || err != nil {
		t.Fatalf("Copy = %v, %v", ok, err)
	}
	if ok, err := c.Copy(ctx, k("f"), k("c"), CopyOptions{}); ok || err != nil {
		t.Fatalf("Copy onto an existing key = %v, %v", ok, err)
	}
	if ok, err := c.Copy(ctx, k("f"), k("c"), CopyOptions{Replace: true}); !ok || err != nil {
		t.Fatalf("Copy REPLACE = %v, %v", ok, err)
	}
	db := 3
	if ok, err := c.Copy(ctx, k("f"), k("c"), CopyOptions{DB: &db}); !ok || err != nil {
		t.Fatalf("Copy DB 3 = %v, %v", ok, err)
	}
	if ok, err := c.ExpireAt(ctx, k("c"), time.Now().Add(time.Minute)); !ok || err != nil {
		t.Fatalf("ExpireAt = %v, %v", ok, err)
	}
	if ttl, _ := c.TTL(ctx, k("c")); ttl <= 58*time.Second || ttl > time.Minute {
		t.Fatalf("TTL after ExpireAt = %v", ttl)
	}
	if ok, err := c.ExpireAt(ctx, k("c"), time.Now().Add(-time.Minute)); !ok || err != nil {
		t.Fatalf("ExpireAt in the past = %v, %v", ok, err)
	}
	if n, _ := c.Exists(ctx, k("c")); n != 0 {
		t.Fatal("ExpireAt in the past left the key")
	}
	if n, err := c.Unlink(ctx, k("s2"), k("none")); n != 1 || err != nil {
		t.Fatalf("Unlink = %d, %v", n, err)
	}
	// KEYS and SCAN over 300 keys of their own.
	want := make([]string, 300)
	pairs := make([]KV, 300)
	for i := range want {
		want[i] = k(fmt.Sprintf("scan:%03d", i))
		pairs[i] = KV{want[i], []byte("v")}
	}
	must(c.MSet(ctx, pairs...))
	sort.Strings(want)
	keys, err := c.Keys(ctx, k("scan:*"))
	must(err)
	sort.Strings(keys)
	if fmt.Sprint(keys) != fmt.Sprint(want) {
		t.Fatalf("Keys returned %d keys, want %d", len(keys), len(want))
	}
	if keys, err := c.Keys(ctx, k("scan:0[0-1]?")); err != nil || len(keys) != 20 {
		t.Fatalf("Keys with a class = %d keys, %v", len(keys), err)
	}
	seen := map[string]int{}
	it := c.Scan(ctx, ScanOptions{Match: k("scan:*"), Count: 50})
	for it.Next() {
		seen[it.Key()]++
	}
	must(it.Err())
	if len(seen) != len(want) {
		t.Fatalf("Scan found %d distinct keys, want %d", len(seen), len(want))
	}
	it = c.Scan(ctx, ScanOptions{Match: k("scan:*"), Type: "hash"})
	for it.Next() {
		t.Fatalf("Scan TYPE hash returned %q", it.Key())
	}
	must(it.Err())
	if _, next, err := c.ScanPage(ctx, 0, ScanOptions{Count: 1}); err != nil || next == 0 {
		t.Fatalf("ScanPage(0, COUNT 1) = next %d, %v", next, err)
	}
	_, err = c.Del(ctx, want...)
	must(err)
}

// TestTransactions runs MULTI/EXEC pipelines and WATCH against the real
// goblin-server in both protocols and against redis-server.
func TestTransactions(t *testing.T) {
	targets := testproc.StartGoblinServer(t)
	run := func(t *testing.T, tgt, p string) {
		c, other := dialT(t, tgt), dialT(t, tgt)
		ctx := ctxT(t)
		k := func(s string) string { return p + s }
		vals, err := c.TxPipeline().Do("SET", k("a"), "1").Do("INCR", k("a")).Do("INCR", k("s")).Do("GET", k("a")).Exec(ctx)
		if err != nil || len(vals) != 4 || vals[1].Int != 2 || string(vals[3].Str) != "2" {
			t.Fatalf("TxPipeline = %v, %v", vals, err)
		}
		if err := c.Set(ctx, k("s"), []byte("text"), SetOptions{}); err != nil {
			t.Fatal(err)
		}
		vals, err = c.TxPipeline().Do("INCR", k("s")).Do("INCR", k("a")).Exec(ctx)
		if err != nil || vals[0].Kind != KindError || vals[1].Int != 3 {
			t.Fatalf("a failing command inside EXEC: %v, %v", vals, err)
		}
		// An unknown command: the server refuses to queue it (RESP); over
		// SBE the client cannot encode it and sends nothing.
		var se *ServerError
		_, err = c.TxPipeline().Do("INCR", k("a")).Do("NOSUCHCMD").Exec(ctx)
		if sbe := strings.HasSuffix(p, "sbe:"); (sbe && !errors.Is(err, ErrNoSBEEncoding)) ||
			(!sbe && (!errors.As(err, &se) || !strings.HasPrefix(se.Message, "ERR unknown command"))) {
			t.Fatalf("a refused command: %v", err)
		}
		if v, _ := c.Get(ctx, k("a")); string(v) != "3" {
			t.Fatalf("the aborted transaction ran: a = %q", v)
		}
		// WATCH: untouched, the transaction runs; touched by another
		// client between WATCH and EXEC, it fails.
		incr := func(touch bool) error {
			return c.Watch(ctx, func(tx *Tx) error {
				v, err := tx.Get(ctx, k("a"))
				if err != nil {
					return err
				}
				n, _ := strconv.Atoi(string(v))
				if touch {
					if _, err := other.Incr(ctx, k("a")); err != nil {
						return err
					}
				}
				_, err = tx.TxPipeline().Do("SET", k("a"), n+10).Exec(ctx)
				return err
			}, k("a"))
		}
		if err := incr(false); err != nil {
			t.Fatal(err)
		}
		if v, _ := c.Get(ctx, k("a")); string(v) != "13" {
			t.Fatalf("after a watched transaction: %q", v)
		}
		if err := incr(true); !errors.Is(err, ErrTxFailed) {
			t.Fatalf("touched watch: %v, want ErrTxFailed", err)
		}
		if v, _ := c.Get(ctx, k("a")); string(v) != "14" {
			t.Fatalf("after a failed transaction: %q (only the other client's INCR)", v)
		}
		// fn returning without a transaction unwatches: a later MULTI is
		// unaffected by changes.
		if err := c.Watch(ctx, func(tx *Tx) error { return nil }, k("a")); err != nil {
			t.Fatal(err)
		}
		if _, err := other.Incr(ctx, k("a")); err != nil {
			t.Fatal(err)
		}
		if _, err := c.TxPipeline().Do("INCR", k("a")).Exec(ctx); err != nil {
			t.Fatalf("transaction after an abandoned watch: %v", err)
		}
		// The client serves other goroutines again after Watch.
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = c.Incr(context.Background(), k("a")) }()
		wg.Wait()
	}
	for _, name := range e2eCases {
		t.Run(name, func(t *testing.T) { run(t, targets[name], name+":") })
	}
	t.Run("redis-server", func(t *testing.T) { run(t, "uds://"+startRedis(t), "redis:") })
}
