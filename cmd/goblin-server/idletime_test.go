package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestObjectIdleTimeAgainstRedis: goblin-server and redis-server 7.0 get
// the same keys, wait two seconds, then each key gets one command; OBJECT
// IDLETIME of every key afterwards must say, on both servers alike,
// whether that command was an access (0) or not (2 or more): reads,
// writes of an existing key and TOUCH are; EXISTS, TYPE, TTL, OBJECT
// itself, MEMORY USAGE, SCAN are not. The idle time of the untouched keys
// is also checked to be the wait (2–4 s) on goblin, and a new key's 0.
func TestObjectIdleTimeAgainstRedis(t *testing.T) {
	redisSock := startRedisServer(t)
	g := startServer(t)
	ctx := context.Background()
	type step struct {
		key  string
		kind string // the type SETUP makes
		cmd  []any  // {key} is the key
	}
	steps := []step{
		{"get", "string", []any{"GET", "{key}"}},
		{"strlen", "string", []any{"STRLEN", "{key}"}},
		{"getrange", "string", []any{"GETRANGE", "{key}", 0, 1}},
		{"mget", "string", []any{"MGET", "{key}", "nokey"}},
		{"set", "string", []any{"SET", "{key}", "new"}},
		{"append", "string", []any{"APPEND", "{key}", "x"}},
		{"incr", "int", []any{"INCR", "{key}"}},
		{"expire", "string", []any{"EXPIRE", "{key}", 1000}},
		{"touch", "string", []any{"TOUCH", "{key}"}},
		{"dump", "string", []any{"DUMP", "{key}"}},
		{"exists", "string", []any{"EXISTS", "{key}"}},
		{"type", "string", []any{"TYPE", "{key}"}},
		{"ttl", "string", []any{"TTL", "{key}"}},
		{"object-encoding", "string", []any{"OBJECT", "ENCODING", "{key}"}},
		{"object-idletime", "string", []any{"OBJECT", "IDLETIME", "{key}"}},
		{"memory-usage", "string", []any{"MEMORY", "USAGE", "{key}"}},
		{"scan", "string", []any{"SCAN", 0, "MATCH", "{key}"}},
		{"sismember", "set", []any{"SISMEMBER", "{key}", "a"}},
		{"scard", "set", []any{"SCARD", "{key}"}},
		{"hget", "hash", []any{"HGET", "{key}", "f"}},
		{"lrange", "list", []any{"LRANGE", "{key}", 0, -1}},
		{"zscore", "zset", []any{"ZSCORE", "{key}", "m"}},
		{"untouched", "string", nil},
	}
	run := func(name string, c *redis.Client) (map[string]int64, map[string]int64) {
		c.FlushAll(ctx)
		for _, s := range steps {
			k := "k:" + s.key
			var err error
			switch s.kind {
			case "string":
				err = c.Set(ctx, k, "value", 0).Err()
			case "int":
				err = c.Set(ctx, k, "100000", 0).Err() // not a shared integer (Redis keeps one idle time for all of 0-9999)
			case "set":
				err = c.SAdd(ctx, k, "a", "b").Err()
			case "hash":
				err = c.HSet(ctx, k, "f", "v").Err()
			case "list":
				err = c.RPush(ctx, k, "a", "b").Err()
			case "zset":
				err = c.ZAdd(ctx, k, redis.Z{Score: 1, Member: "m"}).Err()
			}
			if err != nil {
				t.Fatalf("%s: setting up %s: %v", name, k, err)
			}
		}
		before := map[string]int64{}
		time.Sleep(2100 * time.Millisecond)
		for _, s := range steps {
			k := "k:" + s.key
			if s.cmd == nil {
				continue
			}
			args := make([]any, len(s.cmd))
			for i, a := range s.cmd {
				if a == "{key}" {
					a = k
				}
				args[i] = a
			}
			if err := c.Do(ctx, args...).Err(); err != nil && err != redis.Nil {
				t.Fatalf("%s: %v: %v", name, args, err)
			}
		}
		after := map[string]int64{}
		for _, s := range steps {
			n, err := c.ObjectIdleTime(ctx, "k:"+s.key).Result()
			if err != nil {
				t.Fatalf("%s: OBJECT IDLETIME k:%s: %v", name, s.key, err)
			}
			after[s.key] = int64(n / time.Second)
		}
		c.Set(ctx, "fresh", "v", 0)
		before["fresh"] = int64(c.ObjectIdleTime(ctx, "fresh").Val() / time.Second)
		return before, after
	}
	gc := redis.NewClient(&redis.Options{Network: "unix", Addr: g.sock})
	defer gc.Close()
	rc := redis.NewClient(&redis.Options{Network: "unix", Addr: redisSock})
	defer rc.Close()
	gFresh, got := run("goblin", gc)
	_, want := run("redis", rc)
	touched := func(n int64) string {
		if n == 0 {
			return "an access"
		}
		return fmt.Sprintf("not an access (idle %d s)", n)
	}
	var diffs []string
	for _, s := range steps {
		if (got[s.key] == 0) != (want[s.key] == 0) {
			diffs = append(diffs, fmt.Sprintf("%s: goblin %s, redis %s", s.key, touched(got[s.key]), touched(want[s.key])))
		} else {
			t.Logf("%-16s %s", s.key, touched(got[s.key]))
		}
	}
	if len(diffs) > 0 {
		t.Errorf("OBJECT IDLETIME after each command differs:\n%s", strings.Join(diffs, "\n"))
	}
	if n := got["untouched"]; n < 2 || n > 4 {
		t.Errorf("goblin: a key untouched for 2.1 s is idle %d s, want 2 to 4", n)
	}
	if gFresh["fresh"] != 0 {
		t.Errorf("goblin: a new key is idle %d s", gFresh["fresh"])
	}
}
