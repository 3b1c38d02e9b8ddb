package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testcerts"
)

// TestTLSReplication: with tls-replication yes a goblin replica follows a
// primary's TLS port, presenting its client certificate and checking the
// primary's against the CA — a redis-server 7.0 primary that requires client
// certificates, and a goblin primary; a redis-server replica follows a
// goblin primary's TLS port the same way. A replica that trusts another CA
// never gets the link up and says why.
func TestTLSReplication(t *testing.T) {
	t.Parallel()
	f, err := testcerts.Write(t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	tlsArgs := []string{"--tls-cert-file", f.ServerCert, "--tls-key-file", f.ServerKey, "--tls-ca-cert-file", f.CACert}
	replicaTLS := []string{"--tls-replication", "yes", "--tls-ca-cert-file", f.CACert,
		"--tls-client-cert-file", f.ClientCert, "--tls-client-key-file", f.ClientKey}
	ctx := context.Background()

	t.Run("goblin-of-redis", func(t *testing.T) {
		t.Parallel()
		tlsPort := freeTCPPort(t)
		_, rc, _ := redisPrimary(t, append([]string{"--tls-port", strconv.Itoa(tlsPort), "--tls-auth-clients", "yes",
			"--tls-replication", "yes"}, tlsArgs...)...)
		fill(t, rc, 2000)
		g := startServer(t, append([]string{"--replicaof", "127.0.0.1 " + strconv.Itoa(tlsPort)}, replicaTLS...)...)
		gc := redis.NewClient(goblinOpts(g))
		defer gc.Close()
		linkUp(t, gc)
		rc.Set(ctx, "after-sync", "streamed over TLS", 0)
		caughtUp(t, rc, gc)
		sameData(t, rc, gc)
		if v := gc.Get(ctx, "after-sync").Val(); v != "streamed over TLS" {
			t.Fatalf("the stream after the sync: %q", v)
		}
		if got := infoField(t, gc, "replication", "master_port"); got != strconv.Itoa(tlsPort) {
			t.Errorf("master_port %s, want the TLS port %d", got, tlsPort)
		}
	})

	t.Run("goblin-of-goblin-and-redis-of-goblin", func(t *testing.T) {
		t.Parallel()
		tlsPort := freeTCPPort(t)
		primary := startServer(t, append([]string{"--tls-port", strconv.Itoa(tlsPort), "--tls-auth-clients", "yes"}, tlsArgs...)...)
		pc := redis.NewClient(goblinOpts(primary))
		defer pc.Close()
		fill(t, pc, 1000)
		g := startServer(t, append([]string{"--replicaof", "127.0.0.1 " + strconv.Itoa(tlsPort)}, replicaTLS...)...)
		gc := redis.NewClient(goblinOpts(g))
		defer gc.Close()
		redisPort := freeTCPPort(t)
		_, rr, _ := redisPrimary(t, "--port", strconv.Itoa(redisPort), "--tls-replication", "yes", "--tls-cert-file", f.ClientCert,
			"--tls-key-file", f.ClientKey, "--tls-ca-cert-file", f.CACert, "--replicaof", "127.0.0.1", strconv.Itoa(tlsPort))
		linkUp(t, gc)
		testkit.Eventually(t, 60*time.Second, "the redis-server replica's master_link_status:up", func() (bool, string) {
			st := infoField(t, rr, "replication", "master_link_status")
			return st == "up", "master_link_status:" + st
		})
		pc.Set(ctx, "after-sync", "streamed over TLS", 0)
		caughtUp(t, pc, gc)
		caughtUp(t, pc, rr)
		sameData(t, pc, gc)
		sameData(t, pc, rr)
		if n := infoInt(t, pc, "replication", "connected_slaves"); n != 2 {
			t.Errorf("the goblin primary lists %d replicas, want 2", n)
		}
	})

	t.Run("wrong-ca", func(t *testing.T) {
		t.Parallel()
		other, err := testcerts.Write(t.TempDir(), "other-")
		if err != nil {
			t.Fatal(err)
		}
		tlsPort := freeTCPPort(t)
		startServer(t, append([]string{"--tls-port", strconv.Itoa(tlsPort), "--tls-auth-clients", "no"}, tlsArgs...)...)
		g := startServer(t, "--replicaof", "127.0.0.1 "+strconv.Itoa(tlsPort), "--tls-replication", "yes", "--tls-ca-cert-file", other.CACert)
		line := g.p.WaitLog(t, `(?i)TLS handshake with the primary: .*certificate.*`, startTimeout)
		gc := redis.NewClient(goblinOpts(g))
		defer gc.Close()
		if st := infoField(t, gc, "replication", "master_link_status"); st != "down" {
			t.Errorf("master_link_status:%s with an untrusted primary, want down", st)
		}
		if !strings.Contains(strings.ToLower(line), "certificate") {
			t.Errorf("log line %q does not say what failed", line)
		}
	})
}
