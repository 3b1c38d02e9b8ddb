package client

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// TestCollectionCalls: the typed hash, list, set and sorted-set calls on
// every transport (Unix socket, TCP, ring, Aeron IPC and UDP) in both
// protocols; over SBE they travel as schema version 3's wideOp or version 4's typed messages. The same
// expectations hold against redis-server 7 over RESP2 and RESP3.
func TestCollectionCalls(t *testing.T) {
	onEveryTransport(t, func(t *testing.T, name, tgt string) {
		_, c := dialLong(t, tgt)
		exerciseCollections(t, c, name+":")
	})
	t.Run("redis-server", func(t *testing.T) {
		sock := startRedis(t)
		exerciseCollections(t, dialT(t, "uds://"+sock), "redis:")
		exerciseCollections(t, dialWithT(t, Options{Protocol: 3}, "uds://"+sock), "redis3:")
	})
}

func exerciseCollections(t *testing.T, c *Client, p string) {
	ctx := ctxT(t)
	k := func(s string) string { return p + s }
	check := func(what string, got, want any, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: %v, want %v", what, got, want)
		}
	}
	// Hashes.
	n, err := c.HSet(ctx, k("h"), FieldValue{"a", []byte("1")}, FieldValue{"b", []byte("two")})
	check("HSET", n, 2, err)
	n, err = c.HSet(ctx, k("h"), FieldValue{"a", []byte("one")}, FieldValue{"c", nil})
	check("HSET again", n, 1, err)
	v, err := c.HGet(ctx, k("h"), "a")
	check("HGET", string(v), "one", err)
	if _, err := c.HGet(ctx, k("h"), "nope"); !errors.Is(err, ErrNil) {
		t.Fatalf("HGET of a missing field: %v, want ErrNil", err)
	}
	all, err := c.HGetAll(ctx, k("h"))
	check("HGETALL", all, []FieldValue{{"a", []byte("one")}, {"b", []byte("two")}, {"c", []byte{}}}, err)
	n, err = c.HDel(ctx, k("h"), "a", "nope")
	check("HDEL", n, 1, err)
	// Lists.
	n, err = c.RPush(ctx, k("l"), []byte("b"), []byte("c"))
	check("RPUSH", n, 2, err)
	n, err = c.LPush(ctx, k("l"), []byte("a"), []byte("z"))
	check("LPUSH", n, 4, err)
	items, err := c.LRange(ctx, k("l"), 0, -1)
	check("LRANGE", string(bytes.Join(items, []byte(","))), "z,a,b,c", err)
	v, err = c.LPop(ctx, k("l"))
	check("LPOP", string(v), "z", err)
	v, err = c.RPop(ctx, k("l"))
	check("RPOP", string(v), "c", err)
	items, err = c.LRange(ctx, k("l"), -1, 5)
	check("LRANGE -1 5", string(bytes.Join(items, []byte(","))), "b", err)
	if _, err := c.LPop(ctx, k("nolist")); !errors.Is(err, ErrNil) {
		t.Fatalf("LPOP of a missing list: %v, want ErrNil", err)
	}
	// Sets.
	n, err = c.SAdd(ctx, k("s"), "x", "y", "x")
	check("SADD", n, 2, err)
	ok, err := c.SIsMember(ctx, k("s"), "y")
	check("SISMEMBER", ok, true, err)
	ok, err = c.SIsMember(ctx, k("s"), "w")
	check("SISMEMBER missing", ok, false, err)
	ms, err := c.SMembers(ctx, k("s"))
	slices.SortFunc(ms, bytes.Compare)
	check("SMEMBERS", string(bytes.Join(ms, []byte(","))), "x,y", err)
	n, err = c.SRem(ctx, k("s"), "x", "q")
	check("SREM", n, 1, err)
	// Sorted sets.
	n, err = c.ZAdd(ctx, k("z"), Z{2.5, "b"}, Z{1, "a"}, Z{-1e300, "low"})
	check("ZADD", n, 3, err)
	f, err := c.ZScore(ctx, k("z"), "b")
	check("ZSCORE", f, 2.5, err)
	if _, err := c.ZScore(ctx, k("z"), "nope"); !errors.Is(err, ErrNil) {
		t.Fatalf("ZSCORE of a missing member: %v, want ErrNil", err)
	}
	ms, err = c.ZRange(ctx, k("z"), 0, -1)
	check("ZRANGE", string(bytes.Join(ms, []byte(","))), "low,a,b", err)
	zs, err := c.ZRangeWithScores(ctx, k("z"), 1, 2)
	check("ZRANGE WITHSCORES", zs, []Z{{1, "a"}, {2.5, "b"}}, err)
	exerciseMoreCollections(t, c, p)
	// The wrong type is the server's error, not a client one.
	if _, err := c.LPush(ctx, k("h"), []byte("x")); err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Fatalf("LPUSH on a hash: %v, want WRONGTYPE", err)
	}
}

// exerciseMoreCollections: the calls added after the first set (HMGET,
// HINCRBY, HEXISTS, the lengths, ZINCRBY, ZRANGEBYSCORE, ZRANK, ZREM and a
// BLPOP/BRPOP that finds data), against the keys exerciseCollections left.
func exerciseMoreCollections(t *testing.T, c *Client, p string) {
	ctx := ctxT(t)
	k := func(s string) string { return p + s }
	check := func(what string, got, want any, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
			t.Fatalf("%s: %q, want %q", what, got, want)
		}
	}
	// The one-element forms, which SBE (schema version 4) carries as its
	// typed messages: HSET, LPUSH, ZADD (HGET, RPOP and ZRANGE are above).
	n, err := c.HSet(ctx, k("h1"), FieldValue{"f", []byte("v")})
	check("HSET one field", n, int64(1), err)
	v, err := c.HGet(ctx, k("h1"), "f")
	check("HGET h1", v, []byte("v"), err)
	n, err = c.LPush(ctx, k("l1"), []byte("e"))
	check("LPUSH one", n, int64(1), err)
	v, err = c.RPop(ctx, k("l1"))
	check("RPOP l1", v, []byte("e"), err)
	n, err = c.ZAdd(ctx, k("z1"), Z{7, "m"})
	check("ZADD one", n, int64(1), err)
	zr, err := c.ZRange(ctx, k("z1"), 0, 9)
	check("ZRANGE z1", zr, [][]byte{[]byte("m")}, err)
	// The hash holds b=two, c="" here.
	vs, err := c.HMGet(ctx, k("h"), "b", "nope", "c")
	check("HMGET", vs, [][]byte{[]byte("two"), nil, {}}, err)
	n, err = c.HIncrBy(ctx, k("h"), "n", 5)
	check("HINCRBY new", n, int64(5), err)
	n, err = c.HIncrBy(ctx, k("h"), "n", -7)
	check("HINCRBY", n, int64(-2), err)
	if _, err := c.HIncrBy(ctx, k("h"), "b", 1); err == nil || !strings.Contains(err.Error(), "not an integer") {
		t.Fatalf("HINCRBY of a text field: %v, want the server's not-an-integer error", err)
	}
	ok, err := c.HExists(ctx, k("h"), "n")
	check("HEXISTS", ok, true, err)
	ok, err = c.HExists(ctx, k("h"), "a")
	check("HEXISTS deleted", ok, false, err)
	n, err = c.HLen(ctx, k("h"))
	check("HLEN", n, int64(3), err)
	n, err = c.HLen(ctx, k("nohash"))
	check("HLEN missing", n, int64(0), err)
	// The list holds a, b; the set y.
	n, err = c.LLen(ctx, k("l"))
	check("LLEN", n, int64(2), err)
	n, err = c.SCard(ctx, k("s"))
	check("SCARD", n, int64(1), err)
	// The sorted set holds low -1e300, a 1, b 2.5.
	f, err := c.ZIncrBy(ctx, k("z"), 2, "a")
	check("ZINCRBY", f, 3.0, err)
	f, err = c.ZIncrBy(ctx, k("z"), -0.25, "new")
	check("ZINCRBY new", f, -0.25, err)
	ms, err := c.ZRangeByScore(ctx, k("z"), ZRangeBy{Min: "(-0.25", Max: "+inf"})
	check("ZRANGEBYSCORE (-0.25 +inf", ms, [][]byte{[]byte("b"), []byte("a")}, err)
	ms, err = c.ZRangeByScore(ctx, k("z"), ZRangeBy{Min: "-inf", Max: "3", Offset: 1, Count: 2})
	check("ZRANGEBYSCORE LIMIT 1 2", ms, [][]byte{[]byte("new"), []byte("b")}, err)
	zs, err := c.ZRangeByScoreWithScores(ctx, k("z"), ZRangeBy{Min: "2.5", Max: "3"})
	check("ZRANGEBYSCORE WITHSCORES", zs, []Z{{2.5, "b"}, {3, "a"}}, err)
	if _, err := c.ZRangeByScore(ctx, k("z"), ZRangeBy{Min: "x", Max: "1"}); err == nil || !strings.Contains(err.Error(), "min or max is not a float") {
		t.Fatalf("ZRANGEBYSCORE x 1: %v, want the server's not-a-float error", err)
	}
	n, err = c.ZRank(ctx, k("z"), "a")
	check("ZRANK", n, int64(3), err)
	if _, err := c.ZRank(ctx, k("z"), "nope"); !errors.Is(err, ErrNil) {
		t.Fatalf("ZRANK of a missing member: %v, want ErrNil", err)
	}
	n, err = c.ZRem(ctx, k("z"), "new", "nope")
	check("ZREM", n, int64(1), err)
	n, err = c.ZCard(ctx, k("z"))
	check("ZCARD", n, int64(3), err)
	// Blocking pops that find data answer at once, from the first
	// non-empty key.
	if _, err := c.RPush(ctx, k("bl"), []byte("1"), []byte("2"), []byte("3")); err != nil {
		t.Fatal(err)
	}
	key, v, err := c.BLPop(ctx, time.Second, k("empty"), k("bl"))
	check("BLPOP", key+"="+string(v), k("bl")+"=1", err)
	key, v, err = c.BRPop(ctx, 0, k("bl"))
	check("BRPOP", key+"="+string(v), k("bl")+"=3", err)
	if _, _, err := c.BLPop(ctx, 10*time.Millisecond, k("empty")); !errors.Is(err, ErrNil) {
		t.Fatalf("BLPOP of an empty list past its timeout: %v, want ErrNil", err)
	}
	if _, _, err := c.BLPop(ctx, time.Second, k("h")); err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Fatalf("BLPOP on a hash: %v, want WRONGTYPE", err)
	}
}

// TestBLPopWaits: on every transport, in both protocols (the Unix socket
// and TCP, the ring, Aeron IPC and UDP; RESP and SBE), BLPop waits until
// another client pushes, and is served the pushed element.
func TestBLPopWaits(t *testing.T) {
	onEveryTransport(t, func(t *testing.T, name, tgt string) {
		ctx, c := dialLong(t, tgt)
		_, pusher := dialLong(t, tgt)
		key := "blwait:" + name
		type popped struct {
			key string
			v   []byte
			err error
		}
		done := make(chan popped, 1)
		go func() {
			k, v, err := c.BLPop(ctx, 30*time.Second, key)
			done <- popped{k, v, err}
		}()
		// Wait until the server lists the client as blocked, then push.
		testkit.Eventually(t, 20*time.Second, "the BLPOP client shows in INFO clients' blocked_clients", func() (bool, string) {
			v, err := pusher.Do(ctx, "INFO", "clients")
			return err == nil && strings.Contains(v.String(), "blocked_clients:1"), fmt.Sprint(v, err)
		})
		select {
		case p := <-done:
			t.Fatalf("BLPOP answered before the push: %q %q %v", p.key, p.v, p.err)
		default:
		}
		if _, err := pusher.RPush(ctx, key, []byte("x"), []byte("y")); err != nil {
			t.Fatal(err)
		}
		select {
		case p := <-done:
			if p.err != nil || p.key != key || string(p.v) != "x" {
				t.Fatalf("BLPOP after the push: %q %q %v, want %q \"x\"", p.key, p.v, p.err, key)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("BLPOP was not served after RPUSH to its key")
		}
		if n, err := pusher.LLen(ctx, key); err != nil || n != 1 {
			t.Fatalf("LLEN after the served BLPOP: %d %v, want 1", n, err)
		}
	})
}
