package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestAeronReplicationConfigFile: the Aeron replication settings come from
// the configuration file (a primary on stream id 2035 over MDC, a replica
// following it over Aeron), CONFIG GET shows all seven, CONFIG SET refuses
// the six that take effect at start and turns write forwarding on at run
// time (the next write goes over Aeron), and CONFIG REWRITE writes it back
// to the file.
func TestAeronReplicationConfigFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ctl, status := freeUDPPort(t, "127.0.0.1"), freeUDPPort(t, "127.0.0.1")
	pconf := filepath.Join(dir, "primary.conf")
	ptext := fmt.Sprintf("repl-aeron-channel \"aeron:udp?control-mode=dynamic|control=127.0.0.1:%d\"\n"+
		"repl-aeron-status-channel \"aeron:udp?endpoint=127.0.0.1:%d\"\nrepl-aeron-stream-id 2035\n", ctl, status)
	if err := os.WriteFile(pconf, []byte(ptext), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServerConf(t, pconf)
	pc := redis.NewClient(goblinOpts(p))
	defer pc.Close()

	rconf := filepath.Join(dir, "replica.conf")
	rch := fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d|control=127.0.0.1:%d|control-mode=dynamic", freeUDPPort(t, "127.0.0.1"), ctl)
	rst := fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", status)
	rtext := fmt.Sprintf("replicaof %s\nrepl-aeron-stream-id 2035\nreplica-aeron-channel \"%s\"\n"+
		"replica-aeron-status-channel \"%s\"\nreplica-aeron-name fromfile\nreplica-forward-writes no\n",
		strings.Replace(p.tcp, ":", " ", 1), rch, rst)
	if err := os.WriteFile(rconf, []byte(rtext), 0o600); err != nil {
		t.Fatal(err)
	}
	r := startServerConf(t, rconf)
	rc := redis.NewClient(goblinOpts(r))
	defer rc.Close()
	aeronLive(t, rc)

	get := func(c *redis.Client, name string) string {
		m, err := c.ConfigGet(ctx, name).Result()
		if err != nil {
			t.Fatalf("CONFIG GET %s: %v", name, err)
		}
		return m[name]
	}
	for _, c := range []struct {
		c          *redis.Client
		name, want string
	}{
		{pc, "repl-aeron-channel", fmt.Sprintf("aeron:udp?control-mode=dynamic|control=127.0.0.1:%d", ctl)},
		{pc, "repl-aeron-status-channel", rst},
		{pc, "repl-aeron-stream-id", "2035"},
		{rc, "repl-aeron-stream-id", "2035"},
		{rc, "replica-aeron-channel", rch},
		{rc, "replica-aeron-status-channel", rst},
		{rc, "replica-aeron-name", "fromfile"},
		{rc, "replica-forward-writes", "no"},
	} {
		if got := get(c.c, c.name); got != c.want {
			t.Errorf("CONFIG GET %s: %q, want %q", c.name, got, c.want)
		}
	}
	if got := infoField(t, pc, "replication", "aeron_stream_id"); got != "2035" {
		t.Errorf("the primary's aeron_stream_id:%s, want 2035 from the file", got)
	}
	for _, name := range []string{"repl-aeron-channel", "repl-aeron-status-channel", "repl-aeron-stream-id",
		"replica-aeron-channel", "replica-aeron-status-channel", "replica-aeron-name"} {
		if err := rc.ConfigSet(ctx, name, "x").Err(); err == nil || !strings.Contains(err.Error(), "immutable") {
			t.Errorf("CONFIG SET %s: %v, want the immutable config error", name, err)
		}
	}

	if err := rc.Set(ctx, "k", "v", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "READONLY") {
		t.Fatalf("SET on the replica before CONFIG SET replica-forward-writes yes: %v, want READONLY", err)
	}
	if err := rc.ConfigSet(ctx, "replica-forward-writes", "maybe").Err(); err == nil {
		t.Error("CONFIG SET replica-forward-writes maybe: no error")
	}
	if err := rc.ConfigSet(ctx, "replica-forward-writes", "yes").Err(); err != nil {
		t.Fatalf("CONFIG SET replica-forward-writes yes: %v", err)
	}
	if err := rc.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET on the replica after CONFIG SET replica-forward-writes yes: %v", err)
	}
	if v, err := rc.Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Errorf("GET k on the replica after its forwarded SET: %q %v", v, err)
	}
	if n := infoInt(t, rc, "replication", "forwarded_aeron"); n != 1 {
		t.Errorf("INFO replication forwarded_aeron:%d after one forwarded SET, want 1 (over Aeron)", n)
	}
	if err := rc.Do(ctx, "CONFIG", "REWRITE").Err(); err != nil {
		t.Fatalf("CONFIG REWRITE: %v", err)
	}
	b, _ := os.ReadFile(rconf)
	if !strings.Contains(string(b), "replica-forward-writes yes") || !strings.Contains(string(b), "replica-aeron-name \"fromfile\"") {
		t.Errorf("the replica's file after CONFIG REWRITE:\n%s\nwant replica-forward-writes yes and the other settings kept", b)
	}
	if err := rc.ConfigSet(ctx, "replica-forward-writes", "no").Err(); err != nil {
		t.Fatalf("CONFIG SET replica-forward-writes no: %v", err)
	}
	if err := rc.Set(ctx, "k", "w", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "READONLY") {
		t.Errorf("SET after CONFIG SET replica-forward-writes no: %v, want READONLY", err)
	}
}
