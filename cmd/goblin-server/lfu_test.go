package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestLFUFromConfigFile: maxmemory-policy allkeys-lfu, lfu-log-factor 0
// and lfu-decay-time 0 in a redis.conf-syntax file reach the store (every
// access counts, nothing decays): a new key reads OBJECT FREQ 5, three
// GETs later 8; CONFIG GET shows the file's values, and a database other
// than 0 counts alike.
func TestLFUFromConfigFile(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "goblin.conf")
	if err := os.WriteFile(conf, []byte("maxmemory-policy allkeys-lfu\nlfu-log-factor 0\nlfu-decay-time 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServerArgs(t, []string{conf}, nil)
	ctx := context.Background()
	for _, db := range []int{0, 3} {
		c := redis.NewClient(&redis.Options{Network: "unix", Addr: s.sock, DB: db})
		defer c.Close()
		got, err := c.ConfigGet(ctx, "lfu-*").Result()
		if err != nil || got["lfu-log-factor"] != "0" || got["lfu-decay-time"] != "0" {
			t.Fatalf("db %d: CONFIG GET lfu-* = %v, %v; want both 0", db, got, err)
		}
		if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if n, err := c.ObjectFreq(ctx, "k").Result(); err != nil || n != 5 {
			t.Fatalf("db %d: OBJECT FREQ of a new key = %d, %v; want 5", db, n, err)
		}
		for range 3 {
			c.Get(ctx, "k")
		}
		if n, err := c.ObjectFreq(ctx, "k").Result(); err != nil || n != 8 {
			t.Fatalf("db %d: OBJECT FREQ after 3 GETs = %d, %v; want 8", db, n, err)
		}
	}
}
