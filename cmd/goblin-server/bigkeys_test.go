package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestRedisCLIBigKeysAgainstRedis loads the same keys of every type and
// encoding (strings; hashes, sorted sets as listpacks and as hashtables
// and skiplists; lists; sets as intsets and hashtables) into goblin-server
// and redis-server 7.0, runs redis-cli --bigkeys and --memkeys against
// each and compares their summaries: --bigkeys's whole (the biggest key of
// each type, its size in elements, the counts and shares of keys per
// type); --memkeys's with the byte figures blanked, since goblin's MEMORY
// USAGE is its own accounting, not jemalloc's (the biggest key of each
// type by memory, and the counts, must still agree).
func TestRedisCLIBigKeysAgainstRedis(t *testing.T) {
	t.Parallel()
	cli := needTool(t, "redis-cli")
	g := startServer(t)
	rsock := startRedisServer(t)
	for _, sock := range []string{g.sock, rsock} {
		loadBigKeysData(t, sock)
	}
	bytesRE := regexp.MustCompile(`(has|with) [0-9]+ bytes|avg size [0-9.]+`)
	for _, mode := range []string{"--bigkeys", "--memkeys"} {
		summary := func(sock string) string {
			out := runTool(t, nil, cli, "-s", sock, mode)
			_, sum, ok := strings.Cut(string(out), "-------- summary -------")
			if !ok {
				t.Fatalf("redis-cli %s: no summary in\n%s", mode, out)
			}
			if mode == "--memkeys" {
				t.Logf("redis-cli --memkeys -s %s, as given:%s", sock, sum)
				sum = bytesRE.ReplaceAllStringFunc(sum, func(m string) string {
					if strings.HasPrefix(m, "avg") {
						return "avg size N"
					}
					return strings.Fields(m)[0] + " N bytes"
				})
			}
			return strings.TrimSpace(sum)
		}
		got, want := summary(g.sock), summary(rsock)
		if got != want {
			t.Errorf("redis-cli %s: goblin's summary\n%s\n\nredis-server's\n%s", mode, got, want)
		} else {
			t.Logf("redis-cli %s, summary on both:\n%s", mode, got)
		}
	}
}

// loadBigKeysData writes the test's keys into the server at sock: in each
// type one key far bigger than the others, by element count and by bytes.
func loadBigKeysData(t *testing.T, sock string) {
	t.Helper()
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 1})
	defer c.Close()
	p := c.Pipeline()
	for i := range 20 {
		p.Set(ctx, fmt.Sprintf("str:%d", i), strings.Repeat("s", 10+i), 0)
	}
	p.Set(ctx, "str:big", strings.Repeat("b", 3000), 0)
	for i := range 10 { // listpacks
		for f := range 5 {
			p.HSet(ctx, fmt.Sprintf("hash:%d", i), fmt.Sprintf("f%d", f), "v")
		}
		p.ZAdd(ctx, fmt.Sprintf("zset:%d", i), redis.Z{Score: float64(i), Member: "m"})
		p.RPush(ctx, fmt.Sprintf("list:%d", i), "a", "b", "c")
	}
	for i := range 2000 { // a hashtable, a quicklist of several nodes, a skiplist, a hashtable set
		p.HSet(ctx, "hash:big", fmt.Sprintf("field:%d", i), "value")
		p.RPush(ctx, "list:big", fmt.Sprintf("element:%d", i))
		p.ZAdd(ctx, "zset:big", redis.Z{Score: float64(i), Member: fmt.Sprintf("member:%d", i)})
		p.SAdd(ctx, "set:big", fmt.Sprintf("member:%d", i))
	}
	for i := range 100 { // an intset
		p.SAdd(ctx, "set:ints", i)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatalf("loading %s: %v", sock, err)
	}
	for key, want := range map[string]string{"hash:big": "hashtable", "hash:0": "listpack", "zset:big": "skiplist",
		"zset:0": "listpack", "set:big": "hashtable", "set:ints": "intset", "list:big": "quicklist"} {
		if enc, err := c.ObjectEncoding(ctx, key).Result(); err != nil || enc != want {
			t.Fatalf("%s: OBJECT ENCODING %s = %q, %v; want %s", sock, key, enc, err, want)
		}
	}
}
