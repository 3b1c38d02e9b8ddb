package client

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestCollectionCalls: the typed hash, list, set and sorted-set calls on
// every transport (Unix socket, TCP, ring, Aeron IPC and UDP) in both
// protocols; over SBE they travel as schema version 3's wideOp. The same
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
	// The wrong type is the server's error, not a client one.
	if _, err := c.LPush(ctx, k("h"), []byte("x")); err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Fatalf("LPUSH on a hash: %v, want WRONGTYPE", err)
	}
}
