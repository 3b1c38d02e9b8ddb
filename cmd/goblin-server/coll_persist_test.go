package main

import (
	"context"
	"maps"
	"net"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// collKey is one hash, set or list of the collection model and the
// command that builds it.
type collKey struct {
	db   int
	key  string
	kind string // "hash", "set" or "list"
	args []any  // HSET/SADD/RPUSH arguments after the key
	ttl  bool
}

// collModel holds hashes, sets and lists in every encoding Redis 7.0 saves
// them in: a listpack hash and one past the value and the entry limits
// (hashtable); an intset of each width, one past the entry limit, and a set
// of strings (hashtable); a one-node quicklist, a many-node one and an
// element larger than a node; some with expiries, in databases 0 and 4.
func collModel() []collKey {
	seq := func(prefix string, n int) []any {
		var a []any
		for i := range n {
			a = append(a, prefix+strconv.Itoa(i))
		}
		return a
	}
	pairs := func(n int) []any {
		var a []any
		for i := range n {
			a = append(a, "f"+strconv.Itoa(i), strconv.Itoa(i*31))
		}
		return a
	}
	ints := func(from, step int64, n int) []any {
		var a []any
		for i := range int64(n) {
			a = append(a, strconv.FormatInt(from+i*step, 10))
		}
		return a
	}
	return []collKey{
		{0, "h:small", "hash", []any{"a", "1", "b", "hello", "c", ""}, false},
		{0, "h:longval", "hash", []any{"a", strings.Repeat("v", 100)}, true},
		{0, "h:many", "hash", pairs(600), false},
		{4, "h:other", "hash", []any{"x", "-12", "y", "\x00\xff"}, false},
		{0, "s:int16", "set", ints(-3, 1000, 10), false},
		{0, "s:int32", "set", ints(-100_000, 70_000, 10), true},
		{0, "s:int64", "set", ints(-1<<40, 1<<38, 10), false},
		{0, "s:manyints", "set", ints(0, 1, 600), false},
		{4, "s:strings", "set", seq("m", 50), false},
		{0, "l:small", "list", []any{"a", "1", "-7", "", "hello"}, false},
		{0, "l:nodes", "list", seq("element-", 3000), true},
		{4, "l:huge", "list", []any{"x", strings.Repeat("H", 20_000), "y"}, false},
	}
}

func writeColls(t *testing.T, opts *redis.Options) {
	t.Helper()
	ctx := context.Background()
	verb := map[string]string{"hash": "HSET", "set": "SADD", "list": "RPUSH"}
	for _, k := range collModel() {
		o := *opts
		o.DB = k.db
		c := redis.NewClient(&o)
		if err := c.Do(ctx, append([]any{verb[k.kind], k.key}, k.args...)...).Err(); err != nil {
			t.Fatalf("%s %s: %v", verb[k.kind], k.key, err)
		}
		if k.ttl {
			if err := c.Expire(ctx, k.key, time.Hour).Err(); err != nil {
				t.Fatal(err)
			}
		}
		c.Close()
	}
}

// readColl reads a collection in an order-free form: HGETALL's pairs and
// SMEMBERS sorted, LRANGE as it is.
func readColl(ctx context.Context, c *redis.Client, k collKey) ([]string, error) {
	switch k.kind {
	case "hash":
		m, err := c.HGetAll(ctx, k.key).Result()
		var out []string
		for f, v := range m {
			out = append(out, f+"="+v)
		}
		slices.Sort(out)
		return out, err
	case "set":
		out, err := c.SMembers(ctx, k.key).Result()
		slices.Sort(out)
		return out, err
	}
	return c.LRange(ctx, k.key, 0, -1).Result()
}

// checkColls compares every collection (contents, encoding, expiry) on
// opts with the same on want, and that each database holds nothing else.
func checkColls(t *testing.T, what string, opts, want *redis.Options) {
	t.Helper()
	ctx := context.Background()
	perDB := map[int]int{}
	for _, k := range collModel() {
		perDB[k.db]++
		o, w := *opts, *want
		o.DB, w.DB = k.db, k.db
		c, r := redis.NewClient(&o), redis.NewClient(&w)
		got, err := readColl(ctx, c, k)
		exp, err2 := readColl(ctx, r, k)
		if err != nil || err2 != nil || len(exp) == 0 || !reflect.DeepEqual(got, exp) {
			t.Errorf("%s: db %d %s %s: %d items, %v; want %d items, %v", what, k.db, k.kind, k.key, len(got), err, len(exp), err2)
		}
		if a, b := c.ObjectEncoding(ctx, k.key).Val(), r.ObjectEncoding(ctx, k.key).Val(); a != b {
			t.Errorf("%s: db %d OBJECT ENCODING %s = %q, want %q", what, k.db, k.key, a, b)
		}
		if a, b := c.TTL(ctx, k.key).Val() > 0, r.TTL(ctx, k.key).Val() > 0; a != b {
			t.Errorf("%s: db %d %s has a TTL: %v, want %v", what, k.db, k.key, a, b)
		}
		c.Close()
		r.Close()
	}
	for db, n := range perDB {
		o := *opts
		o.DB = db
		c := redis.NewClient(&o)
		if got := c.DBSize(ctx).Val(); got != int64(n) {
			t.Errorf("%s: db %d holds %d keys, want %d", what, db, got, n)
		}
		c.Close()
	}
}

// TestCollectionSnapshotsWithRedis: hashes, sets and lists of every
// encoding go between goblin-server and redis-server 7.0 every way Redis
// offers: an RDB file both ways (redis-check-rdb passes goblin's), DUMP in
// one and RESTORE in the other both ways, and MIGRATE both ways; each end
// holds what the reference (the same commands on a Redis) holds.
func TestCollectionSnapshotsWithRedis(t *testing.T) {
	t.Parallel() // its own processes, sockets and directories; it times nothing
	ctx := context.Background()
	_, ref := redisServer(t, t.TempDir()) // the reference: the same commands, never saved
	writeColls(t, ref)

	// Redis → goblin by file.
	dir := t.TempDir()
	r, ropts := redisServer(t, dir)
	writeColls(t, ropts)
	if err := redis.NewClient(ropts).Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	r.Stop(5 * time.Second)
	checkColls(t, "goblin on Redis's snapshot", goblinOpts(startServer(t, "--dir", dir)), ref)

	// goblin → Redis by file.
	gdir := t.TempDir()
	g := startServer(t, "--dir", gdir)
	writeColls(t, goblinOpts(g))
	if err := redis.NewClient(goblinOpts(g)).Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	checkRDB(t, filepath.Join(gdir, "dump.rdb"))
	g.p.Stop(5 * time.Second)
	_, ropts2 := redisServer(t, gdir)
	checkColls(t, "redis-server on goblin's snapshot", ropts2, ref)

	// DUMP in one, RESTORE in the other, both ways.
	dumpRestore := func(what string, from, to *redis.Options) {
		t.Helper()
		for _, k := range collModel() {
			f, d := *from, *to
			f.DB, d.DB = k.db, k.db
			src, dst := redis.NewClient(&f), redis.NewClient(&d)
			payload, err := src.Dump(ctx, k.key).Result()
			if err != nil {
				t.Fatalf("%s: DUMP %s: %v", what, k.key, err)
			}
			ttl := time.Duration(0)
			if k.ttl {
				ttl = time.Hour
			}
			if err := dst.RestoreReplace(ctx, k.key, ttl, payload).Err(); err != nil {
				t.Errorf("%s: RESTORE %s: %v", what, k.key, err)
			}
			src.Close()
			dst.Close()
		}
		checkColls(t, what, to, ref)
	}
	g2 := startServer(t)
	writeColls(t, goblinOpts(g2))
	_, emptyRedis := redisServer(t, t.TempDir())
	dumpRestore("DUMP in goblin, RESTORE in redis-server", goblinOpts(g2), emptyRedis)
	dumpRestore("DUMP in redis-server, RESTORE in goblin", ref, goblinOpts(startServer(t)))

	// MIGRATE goblin → Redis and back (TCP, as MIGRATE dials).
	theirs := startRedisTCP(t)
	host, port, _ := net.SplitHostPort(theirs)
	g4 := startServer(t)
	writeColls(t, goblinOpts(g4))
	migrate := func(what string, src *redis.Options, toHost, toPort string) {
		t.Helper()
		byDB := map[int][]any{}
		for _, k := range collModel() {
			byDB[k.db] = append(byDB[k.db], k.key)
		}
		// The highest database first, then 0: the connection MIGRATE caches
		// to the target is left on the other database, and database 0's
		// keys must still land in 0 (a fixed order: a map's would make
		// this a coin toss).
		dbs := slices.Sorted(maps.Keys(byDB))
		slices.Reverse(dbs)
		for _, db := range dbs {
			keys := byDB[db]
			o := *src
			o.DB = db
			c := redis.NewClient(&o)
			args := append([]any{"MIGRATE", toHost, toPort, "", strconv.Itoa(db), "5000", "KEYS"}, keys...)
			if err := c.Do(ctx, args...).Err(); err != nil {
				t.Fatalf("%s: MIGRATE db %d: %v", what, db, err)
			}
			if n := c.DBSize(ctx).Val(); n != 0 {
				t.Errorf("%s: db %d of the source still holds %d keys", what, db, n)
			}
			c.Close()
		}
	}
	migrate("MIGRATE goblin → redis-server", goblinOpts(g4), host, port)
	rtcp := &redis.Options{Addr: theirs, PoolSize: 1}
	checkColls(t, "redis-server after MIGRATE from goblin", rtcp, ref)
	ghost, gport, _ := net.SplitHostPort(g4.tcp)
	migrate("MIGRATE redis-server → goblin", rtcp, ghost, gport)
	checkColls(t, "goblin after MIGRATE from redis-server", goblinOpts(g4), ref)
}
