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
// whether that command was an access (idle no longer than the commands
// took, 0 or 1 s) or not (idle through the wait, 2 s or more): reads,
// writes of an existing key and TOUCH are; EXISTS, TYPE, TTL, OBJECT
// itself, MEMORY USAGE, SCAN are not. The idle time of the untouched keys
// is also checked to be the wait (up to the round's length) on goblin,
// and a new key's 0 (or 1 as a second ticks over). A round the machine's
// load stretched past a second is done again with a longer wait.
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
	// round sets every key up, waits, runs each key's command and reads
	// every key's idle time. It returns the idle times, how long the
	// commands and reads took (span) and the longest an untouched key can
	// have been idle (setup to last read).
	round := func(name string, c *redis.Client, wait time.Duration) (after map[string]int64, span, most time.Duration) {
		c.FlushAll(ctx)
		setupStart := time.Now()
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
		time.Sleep(wait)
		cmdStart := time.Now()
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
		after = map[string]int64{}
		for _, s := range steps {
			n, err := c.ObjectIdleTime(ctx, "k:"+s.key).Result()
			if err != nil {
				t.Fatalf("%s: OBJECT IDLETIME k:%s: %v", name, s.key, err)
			}
			after[s.key] = int64(n / time.Second)
		}
		end := time.Now()
		return after, end.Sub(cmdStart), end.Sub(setupStart)
	}
	// run does rounds until one tells an access from none. Idle times
	// count whole seconds of a clock, so a key accessed during the round is
	// idle at most span+1 s when read (rounded up: "threshold"), and a key
	// not accessed at least the wait rounded down. A loaded machine can
	// stretch the span: the next round then waits longer, instead of
	// reading a slow round as "not an access".
	run := func(name string, c *redis.Client) (after map[string]int64, threshold int64, most time.Duration) {
		wait := 2100 * time.Millisecond
		for try := 1; ; try++ {
			after, span, most := round(name, c, wait)
			threshold = int64(span/time.Second) + 1
			if int64(wait/time.Second) > threshold {
				return after, threshold, most
			}
			if try == 3 {
				t.Fatalf("%s: the commands and reads took %v after a %v wait, three times: an access (idle up to %d s) cannot be told from none", name, span, wait, threshold)
			}
			t.Logf("%s: the commands and reads took %v: again, waiting longer", name, span)
			wait = time.Duration(threshold+2)*time.Second + 100*time.Millisecond
		}
	}
	gc := redis.NewClient(&redis.Options{Network: "unix", Addr: g.sock})
	defer gc.Close()
	rc := redis.NewClient(&redis.Options{Network: "unix", Addr: redisSock})
	defer rc.Close()
	got, gThreshold, gMost := run("goblin", gc)
	want, rThreshold, _ := run("redis", rc)
	accessed := func(n, threshold int64) bool { return n <= threshold }
	touched := func(n, threshold int64) string {
		if accessed(n, threshold) {
			return fmt.Sprintf("an access (idle %d s)", n)
		}
		return fmt.Sprintf("not an access (idle %d s)", n)
	}
	var diffs []string
	for _, s := range steps {
		if accessed(got[s.key], gThreshold) != accessed(want[s.key], rThreshold) {
			diffs = append(diffs, fmt.Sprintf("%s: goblin %s, redis %s", s.key, touched(got[s.key], gThreshold), touched(want[s.key], rThreshold)))
		} else {
			t.Logf("%-16s %s", s.key, touched(got[s.key], gThreshold))
		}
	}
	if len(diffs) > 0 {
		t.Errorf("OBJECT IDLETIME after each command differs:\n%s", strings.Join(diffs, "\n"))
	}
	if n, most := got["untouched"], int64(gMost/time.Second)+1; n <= gThreshold || n > most {
		t.Errorf("goblin: a key untouched through the wait is idle %d s, want %d to %d (the wait to the round's length)", n, gThreshold+1, most)
	}
	gc.Set(ctx, "fresh", "v", 0)
	if n := int64(gc.ObjectIdleTime(ctx, "fresh").Val() / time.Second); n > 1 {
		t.Errorf("goblin: a new key is idle %d s, want 0 (1 if a second ticked over)", n)
	}
}
