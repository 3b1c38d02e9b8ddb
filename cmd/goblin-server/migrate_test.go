package main

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// startRedisTCP starts a redis-server 7.0 on a loopback TCP port (MIGRATE
// dials host and port) and returns its address.
func startRedisTCP(t *testing.T) string {
	t.Helper()
	bin := testkit.Need(t, "redis-server", "the server goblin migrates keys to and from")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	dir := t.TempDir()
	testproc.Start(t, bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir)
	testproc.WaitDial(t, "tcp", addr, startTimeout)
	return addr
}

// TestMigrateWithRedis: MIGRATE moves keys from goblin-server to
// redis-server 7.0 and back (both directions carry Redis's DUMP payload),
// values and times to live intact, and deletes them at the source.
func TestMigrateWithRedis(t *testing.T) {
	t.Parallel()
	theirs := startRedisTCP(t)
	s := startServer(t)
	ctx := context.Background()
	g := redis.NewClient(&redis.Options{Addr: s.tcp, PoolSize: 1})
	defer g.Close()
	r := redis.NewClient(&redis.Options{Addr: theirs, PoolSize: 1})
	defer r.Close()
	vals := map[string]string{"short": "hello", "int": "123456", "big": "99999999999", "lzf": strings.Repeat("abc", 50), "empty": "", "bin": "\x00\xff\r\n"}
	keys := []string{"short", "int", "big", "lzf", "empty", "bin"}
	for k, v := range vals {
		if err := g.Set(ctx, k, v, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.PExpire(ctx, "short", 100*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	check := func(dir string, src, dst *redis.Client) {
		t.Helper()
		for _, k := range keys {
			if v, err := dst.Get(ctx, k).Result(); err != nil || v != vals[k] {
				t.Errorf("%s: GET %s = %q, %v; want %q", dir, k, v, err, vals[k])
			}
			if n, err := src.Exists(ctx, k).Result(); err != nil || n != 0 {
				t.Errorf("%s: %s still at the source (%d, %v)", dir, k, n, err)
			}
		}
		if ttl, err := dst.PTTL(ctx, "short").Result(); err != nil || ttl <= 0 || ttl > 100*time.Second {
			t.Errorf("%s: PTTL short = %v, %v; want in (0, 100s]", dir, ttl, err)
		}
		if ttl, err := dst.PTTL(ctx, "int").Result(); err != nil || ttl != -1 {
			t.Errorf("%s: PTTL int = %v, %v; want -1 (no expiry)", dir, ttl, err)
		}
	}
	migrate := func(c *redis.Client, to string, extra ...string) {
		t.Helper()
		host, port, _ := net.SplitHostPort(to)
		args := []any{"MIGRATE", host, port, "", "0", "5000"}
		for _, e := range extra {
			args = append(args, e)
		}
		args = append(args, "KEYS")
		for _, k := range keys {
			args = append(args, k)
		}
		if err := c.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	migrate(g, theirs)
	check("goblin to redis", g, r)
	if enc, err := r.ObjectEncoding(ctx, "int").Result(); err != nil || enc != "int" {
		t.Errorf("on redis, OBJECT ENCODING int = %q, %v", enc, err)
	}
	migrate(r, s.tcp, "REPLACE")
	check("redis to goblin", r, g)
	// One key, with COPY: both keep it.
	host, port, _ := net.SplitHostPort(theirs)
	if err := g.Do(ctx, "MIGRATE", host, port, "lzf", "0", "5000", "COPY").Err(); err != nil {
		t.Fatalf("MIGRATE COPY: %v", err)
	}
	for name, c := range map[string]*redis.Client{"goblin": g, "redis": r} {
		if v, err := c.Get(ctx, "lzf").Result(); err != nil || v != vals["lzf"] {
			t.Errorf("after MIGRATE COPY, %s has lzf = %q, %v", name, v, err)
		}
	}
	// A key already at the target without REPLACE: Redis's BUSYKEY, key kept here.
	err := g.Do(ctx, "MIGRATE", host, port, "lzf", "0", "5000").Err()
	if err == nil || !strings.Contains(err.Error(), "BUSYKEY") {
		t.Errorf("MIGRATE onto a key: %v, want the target's BUSYKEY", err)
	}
	if n, _ := g.Exists(ctx, "lzf").Result(); n != 1 {
		t.Errorf("a refused MIGRATE deleted the key here (EXISTS %s)", strconv.FormatInt(n, 10))
	}
}
