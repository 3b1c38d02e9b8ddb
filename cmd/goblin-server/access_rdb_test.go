package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestAccessRecordsWithRedis: under an LFU maxmemory-policy a snapshot
// carries each key's counter (RDB_OPCODE_FREQ), under an LRU one its idle
// time (RDB_OPCODE_IDLE), both ways between redis-server 7.0 and
// goblin-server: OBJECT FREQ and OBJECT IDLETIME after the load are what
// the saving server showed (redis-check-rdb passes goblin's files).
func TestAccessRecordsWithRedis(t *testing.T) {
	t.Parallel() // its own processes, sockets and directories
	ctx := context.Background()
	for _, tc := range []struct {
		policy, object string
		prepare        func(t *testing.T, c *redis.Client)
	}{
		// lfu-log-factor 0 and lfu-decay-time 0: every access counts, none decays.
		{"allkeys-lfu", "FREQ", func(t *testing.T, c *redis.Client) {
			for i, k := range []string{"cold", "warm", "hot"} {
				must(t, c.Set(ctx, k, "v", 0).Err())
				for range i * 7 {
					must(t, c.Get(ctx, k).Err())
				}
			}
		}},
		// Keys made idle for a known time by RESTORE … IDLETIME.
		{"allkeys-lru", "IDLETIME", func(t *testing.T, c *redis.Client) {
			must(t, c.Set(ctx, "src", "v", 0).Err())
			dump, err := c.Dump(ctx, "src").Result()
			must(t, err)
			for i, k := range []string{"cold", "warm", "hot"} {
				must(t, c.Do(ctx, "RESTORE", k, 0, dump, "IDLETIME", 5000-i*2000).Err())
			}
		}},
	} {
		lfu := []string{"--maxmemory-policy", tc.policy, "--lfu-log-factor", "0", "--lfu-decay-time", "0"}
		object := func(t *testing.T, c *redis.Client) map[string]int64 {
			got := map[string]int64{}
			for _, k := range []string{"cold", "warm", "hot"} {
				n, err := c.Do(ctx, "OBJECT", tc.object, k).Int64()
				must(t, err)
				got[k] = n
			}
			return got
		}
		same := func(t *testing.T, who string, want, got map[string]int64) {
			t.Helper()
			for k, w := range want {
				// An idle time may have grown by the seconds the test took.
				if g := got[k]; g < w || g > w+5 || tc.object == "FREQ" && g != w {
					t.Errorf("%s: OBJECT %s %s = %d, want %d (the saving server's)", who, tc.object, k, g, w)
				}
			}
		}
		t.Run(tc.policy+"/redis-to-goblin", func(t *testing.T) {
			dir := t.TempDir()
			r, ropts := redisServer(t, dir, lfu...)
			c := redis.NewClient(ropts)
			tc.prepare(t, c)
			want := object(t, c)
			must(t, c.Save(ctx).Err())
			c.Close()
			r.Stop(5 * time.Second)
			s := startServer(t, "--dir", dir, "--maxmemory-policy", tc.policy)
			g := redis.NewClient(goblinOpts(s))
			defer g.Close()
			same(t, "goblin after loading Redis's snapshot", want, object(t, g))
		})
		t.Run(tc.policy+"/goblin-to-redis", func(t *testing.T) {
			dir := t.TempDir()
			s := startServer(t, "--dir", dir, "--maxmemory-policy", tc.policy)
			g := redis.NewClient(goblinOpts(s))
			defer g.Close()
			must(t, g.ConfigSet(ctx, "lfu-log-factor", "0").Err())
			must(t, g.ConfigSet(ctx, "lfu-decay-time", "0").Err())
			tc.prepare(t, g)
			want := object(t, g)
			must(t, g.Save(ctx).Err())
			checkRDB(t, filepath.Join(dir, "dump.rdb"))
			_, ropts := redisServer(t, dir, lfu...)
			c := redis.NewClient(ropts)
			defer c.Close()
			same(t, "redis-server after loading goblin's snapshot", want, object(t, c))
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
