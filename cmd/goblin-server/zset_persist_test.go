package main

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// zsetModel is sorted sets of both encodings: a listpack of integer,
// fractional, infinite and negative-zero scores, one past the value
// limit, one past the entry limit, one with an expiry, in two databases.
func zsetModel() map[int]map[string][]redis.Z {
	m := map[int]map[string][]redis.Z{0: {}, 2: {}}
	m[0]["small"] = []redis.Z{{Score: 1, Member: "a"}, {Score: 2.5, Member: "b"}, {Score: math.Inf(-1), Member: "c"},
		{Score: math.Inf(1), Member: "d"}, {Score: math.Copysign(0, -1), Member: "e"}, {Score: 1e17, Member: "12"}}
	m[0]["long"] = []redis.Z{{Score: 3, Member: strings.Repeat("L", 100)}, {Score: 1, Member: "x"}}
	var big []redis.Z
	for i := range 1000 {
		big = append(big, redis.Z{Score: float64(i%97) / 4, Member: "m" + strconv.Itoa(i)})
	}
	m[0]["big"] = big
	m[2]["other"] = []redis.Z{{Score: -7, Member: "z"}}
	m[2]["ttl"] = []redis.Z{{Score: 1, Member: "t"}}
	return m
}

func writeZSets(t *testing.T, opts *redis.Options) {
	t.Helper()
	ctx := context.Background()
	for db, keys := range zsetModel() {
		o := *opts
		o.DB = db
		c := redis.NewClient(&o)
		for k, zs := range keys {
			if err := c.ZAdd(ctx, k, zs...).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if db == 2 {
			if err := c.Expire(ctx, "ttl", time.Hour).Err(); err != nil {
				t.Fatal(err)
			}
		}
		c.Close()
	}
}

// checkZSets compares every sorted set (members, scores, order, encoding,
// expiry) on opts with the same on want.
func checkZSets(t *testing.T, what string, opts, want *redis.Options) {
	t.Helper()
	ctx := context.Background()
	for db, keys := range zsetModel() {
		o, w := *opts, *want
		o.DB, w.DB = db, db
		c, r := redis.NewClient(&o), redis.NewClient(&w)
		for k := range keys {
			got, err := c.Do(ctx, "ZRANGE", k, 0, -1, "WITHSCORES").Slice()
			exp, err2 := r.Do(ctx, "ZRANGE", k, 0, -1, "WITHSCORES").Slice()
			if err != nil || err2 != nil || !reflect.DeepEqual(got, exp) {
				t.Errorf("%s: db %d ZRANGE %s WITHSCORES: %v %v, want %v %v", what, db, k, len(got), err, len(exp), err2)
			}
			if a, b := c.ObjectEncoding(ctx, k).Val(), r.ObjectEncoding(ctx, k).Val(); a != b {
				t.Errorf("%s: db %d OBJECT ENCODING %s = %q, want %q", what, db, k, a, b)
			}
			if a, b := c.TTL(ctx, k).Val() > 0, r.TTL(ctx, k).Val() > 0; a != b {
				t.Errorf("%s: db %d %s has a TTL: %v, want %v", what, db, k, a, b)
			}
			if s := c.ZScore(ctx, "small", "e").Val(); db == 0 && fmt.Sprint(s) != "-0" && fmt.Sprint(s) != "0" {
				t.Errorf("%s: ZSCORE small e = %v", what, s)
			}
		}
		c.Close()
		r.Close()
	}
}

// TestZSetSnapshotsWithRedis: sorted sets of both encodings go through an
// RDB file both ways: redis-server saves and goblin-server loads them,
// goblin-server saves (redis-check-rdb passes the file) and redis-server
// loads them, each holding what the other held.
func TestZSetSnapshotsWithRedis(t *testing.T) {
	t.Parallel() // its own processes, sockets and directories; it times nothing
	ctx := context.Background()
	// Redis → goblin.
	dir := t.TempDir()
	r, ropts := redisServer(t, dir)
	writeZSets(t, ropts)
	rc := redis.NewClient(ropts)
	if err := rc.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	rc.Close()
	dir2 := t.TempDir()
	_, ref := redisServer(t, dir2) // the reference: the same commands, never saved
	writeZSets(t, ref)
	s := startServer(t, "--dir", dir)
	checkZSets(t, "goblin on Redis's snapshot", goblinOpts(s), ref)
	r.Stop(5 * time.Second)

	// goblin → Redis.
	gdir := t.TempDir()
	g := startServer(t, "--dir", gdir)
	writeZSets(t, goblinOpts(g))
	gc := redis.NewClient(goblinOpts(g))
	if err := gc.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	gc.Close()
	checkRDB(t, filepath.Join(gdir, "dump.rdb"))
	g.p.Stop(5 * time.Second)
	_, ropts3 := redisServer(t, gdir)
	checkZSets(t, "redis-server on goblin's snapshot", ropts3, ref)
	g2 := startServer(t, "--dir", gdir)
	checkZSets(t, "goblin restarted on its snapshot", goblinOpts(g2), ref)
}
