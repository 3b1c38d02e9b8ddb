package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// TestReplicaSettings: the replica side's CONFIG parameters on a goblin
// replica of a goblin primary, as real processes.
//   - A replica keeps a backlog for its own replicas: INFO
//     repl_backlog_active:1 after its sync, and connected_slaves with a
//     slave0 line once a chained replica follows it.
//   - replica-priority and replica-announced show in the replica's INFO
//     (slave_priority, replica_announced), which Sentinel reads.
//   - replica-announce-ip and replica-announce-port are what the primary
//     lists the replica by after its next connection.
//   - replica-read-only no lets a client write; replica-serve-stale-data,
//     masterauth, masteruser and repl-diskless-load answer CONFIG GET with
//     what CONFIG SET set.
func TestReplicaSettings(t *testing.T) {
	ctx := context.Background()
	p := startServer(t)
	pc := redis.NewClient(goblinOpts(p))
	defer pc.Close()
	a := startServer(t, "--replicaof", strings.Replace(p.tcp, ":", " ", 1))
	ac := redis.NewClient(goblinOpts(a))
	defer ac.Close()
	linkUp(t, ac)
	if got := infoField(t, ac, "replication", "repl_backlog_active"); got != "1" {
		t.Fatalf("a synced replica's repl_backlog_active:%s, want 1", got)
	}
	b := startServer(t, "--replicaof", strings.Replace(a.tcp, ":", " ", 1))
	bc := redis.NewClient(goblinOpts(b))
	defer bc.Close()
	linkUp(t, bc)
	testkit.Eventually(t, 30*time.Second, "A's INFO to list its chained replica B (connected_slaves:1, slave0)", func() (bool, string) {
		info := ac.Info(ctx, "replication").Val()
		return strings.Contains(info, "connected_slaves:1\r\n") && strings.Contains(info, "slave0:ip=127.0.0.1,"), info
	})

	set := func(c *redis.Client, name, value string) {
		t.Helper()
		if err := c.ConfigSet(ctx, name, value).Err(); err != nil {
			t.Fatalf("CONFIG SET %s %s: %v", name, value, err)
		}
		if got := c.ConfigGet(ctx, name).Val()[name]; got != value {
			t.Fatalf("CONFIG GET %s: %q after setting %q", name, got, value)
		}
	}
	if got := infoField(t, ac, "replication", "slave_priority"); got != "100" {
		t.Fatalf("default slave_priority:%s, want 100", got)
	}
	set(ac, "replica-priority", "7")
	set(ac, "replica-announced", "no")
	if got := infoField(t, ac, "replication", "slave_priority") + " " + infoField(t, ac, "replication", "replica_announced"); got != "7 0" {
		t.Fatalf("slave_priority and replica_announced: %s, want 7 0", got)
	}
	set(ac, "replica-priority", "0")
	if got := infoField(t, ac, "replication", "slave_priority"); got != "0" {
		t.Fatalf("slave_priority after replica-priority 0: %s", got)
	}
	if err := ac.ConfigSet(ctx, "replica-priority", "-1").Err(); err == nil || !strings.Contains(err.Error(), "argument must be between 0 and 2147483647") {
		t.Fatalf("CONFIG SET replica-priority -1: %v", err)
	}

	// The announced address: the primary lists A by it once A reconnects.
	set(ac, "replica-announce-ip", "10.9.8.7") // only a name the primary reports: nothing is sent there
	set(ac, "replica-announce-port", "7001")
	if n := pc.ClientKillByFilter(ctx, "TYPE", "replica").Val(); n != 1 {
		t.Fatalf("CLIENT KILL TYPE replica on the primary: %d", n)
	}
	testkit.Eventually(t, 30*time.Second, "the primary to list A as ip=10.9.8.7,port=7001", func() (bool, string) {
		info := pc.Info(ctx, "replication").Val()
		return strings.Contains(info, "slave0:ip=10.9.8.7,port=7001,state=online"), info
	})
	role := pc.Do(ctx, "ROLE").String()
	if !strings.Contains(role, "10.9.8.7 7001") {
		t.Fatalf("ROLE on the primary: %s", role)
	}

	// Writes on a replica.
	if err := ac.Set(ctx, "k", "v", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "READONLY") {
		t.Fatalf("SET on a read-only replica: %v", err)
	}
	set(ac, "replica-read-only", "no")
	if err := ac.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET with replica-read-only no: %v", err)
	}
	if got := infoField(t, ac, "replication", "slave_read_only"); got != "0" {
		t.Fatalf("slave_read_only:%s after replica-read-only no", got)
	}
	set(ac, "replica-serve-stale-data", "no")
	set(ac, "masteruser", "replicator")
	set(ac, "masterauth", "s3cret")
	set(ac, "repl-diskless-load", "swapdb")
	if err := ac.ConfigSet(ctx, "repl-diskless-load", "sometimes").Err(); err == nil {
		t.Fatal("CONFIG SET repl-diskless-load sometimes: no error")
	}
	set(pc, "repl-diskless-sync-delay", "2")
	set(pc, "repl-backlog-ttl", "60")
}
