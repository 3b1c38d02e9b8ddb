package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/latency"
	"github.com/goblin-kv/goblin/internal/testkit/testcerts"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
	"github.com/goblin-kv/goblin/transport/uds"
)

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) string { t.Helper(); return freePortTB(t) }

// tool runs a program and returns its combined output and error, for the
// cases that are meant to fail.
func tool(t *testing.T, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	return string(out), err
}

// TestTLSRealClients starts goblin-server from a redis.conf-style file
// with tls-port and the tls-* directives and drives it over TLS with
// redis-cli 7.0 (--tls --cacert --cert --key), go-redis (TLSConfig) and
// goblin-client (--tls): a client without a certificate is refused while
// tls-auth-clients is yes, a plaintext client is told what the port
// speaks, and CONFIG SET of the certificate files reloads them while a
// client stays connected.
func TestTLSRealClients(t *testing.T) {
	cli := needTool(t, "redis-cli")
	dir := t.TempDir()
	f1, err := testcerts.Write(dir, "a-")
	if err != nil {
		t.Fatal(err)
	}
	f2, err := testcerts.Write(dir, "b-")
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	conf := filepath.Join(dir, "goblin.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf(`port 0
bind 127.0.0.1
tls-port %s
tls-cert-file %s
tls-key-file %s
tls-ca-cert-file %s
tls-auth-clients yes
tls-protocols "TLSv1.2 TLSv1.3"
tls-session-caching no
unixsocket %s
dir %s
`, port, f1.ServerCert, f1.ServerKey, f1.CACert, filepath.Join(dir, "g.sock"), dir)), 0o600)
	p := startProc(t, buildServer(t), conf, "--metrics", "off")
	p.WaitLog(t, `msg=listening target="?tls://127\.0\.0\.1:`+port, startTimeout)
	p.WaitLog(t, `msg=ready`, startTimeout)
	addr := "127.0.0.1:" + port

	withCert := func(f testcerts.Files) []string {
		return []string{"--tls", "--cacert", f.CACert, "--cert", f.ClientCert, "--key", f.ClientKey, "-h", "127.0.0.1", "-p", port}
	}
	if out := runTool(t, nil, "redis-cli", append(withCert(f1), "PING")...); string(out) != "PONG\n" {
		t.Fatalf("redis-cli --tls PING: %q", out)
	}
	if out := runTool(t, nil, "redis-cli", append(withCert(f1), "SET", "k", "over tls")...); string(out) != "OK\n" {
		t.Fatalf("redis-cli --tls SET: %q", out)
	}
	if out := runTool(t, nil, "redis-cli", append(withCert(f1), "CONFIG", "GET", "tls-*")...); !strings.Contains(string(out), "tls-port\n"+port+"\n") || !strings.Contains(string(out), "tls-auth-clients\nyes\n") {
		t.Fatalf("CONFIG GET tls-*: %s", out)
	}

	// No client certificate: refused.
	out, err := tool(t, cli, "--tls", "--cacert", f1.CACert, "-h", "127.0.0.1", "-p", port, "PING")
	if err == nil && strings.Contains(out, "PONG") {
		t.Fatalf("redis-cli without a client certificate was served: %q", out)
	}
	t.Logf("redis-cli without a certificate: %s", strings.TrimSpace(out))
	// Plaintext on the TLS port: told so.
	out, _ = tool(t, cli, "-h", "127.0.0.1", "-p", port, "PING")
	if !strings.Contains(out, "this port speaks TLS") {
		t.Fatalf("plaintext redis-cli on the TLS port: %q, want the server's explanation", out)
	}
	p.WaitLog(t, `level=WARN msg="client spoke plaintext to a TLS listener" transport=tls/resp client=127\.0\.0\.1:\d+`, startTimeout)
	p.WaitLog(t, `level=WARN msg="TLS handshake failed" transport=tls/resp client=127\.0\.0\.1:\d+ err=.*certificate`, startTimeout)

	// go-redis with a tls.Config; one connection held across the reload.
	tlsCfg := func(f testcerts.Files) *tls.Config {
		c, err := uds.ClientTLSConfig(uds.ClientTLSFiles{CACert: f.CACert, Cert: f.ClientCert, Key: f.ClientKey})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: addr, TLSConfig: tlsCfg(f1), PoolSize: 1})
	defer rdb.Close()
	held := rdb.Conn()
	defer held.Close()
	if v, err := held.Get(ctx, "k").Result(); err != nil || v != "over tls" {
		t.Fatalf("go-redis GET over TLS: %q, %v", v, err)
	}
	list, err := held.ClientList(ctx).Result()
	if err != nil || !strings.Contains(list, "laddr="+addr) {
		t.Fatalf("CLIENT LIST over TLS: %q, %v; want laddr=%s (the TLS socket, not the bridge's pair)", list, err, addr)
	}

	// A bad file is refused and changes nothing.
	if err := held.ConfigSet(ctx, "tls-cert-file", filepath.Join(dir, "missing.crt")).Err(); err == nil || !strings.Contains(err.Error(), "unable to update TLS configuration") {
		t.Fatalf("CONFIG SET tls-cert-file missing: %v", err)
	}
	if v := held.ConfigGet(ctx, "tls-cert-file").Val()["tls-cert-file"]; v != f1.ServerCert {
		t.Fatalf("after a refused CONFIG SET, tls-cert-file = %q, want %q", v, f1.ServerCert)
	}
	// Rotate to the second CA's certificate, in one CONFIG SET.
	if err := held.Do(ctx, "CONFIG", "SET", "tls-cert-file", f2.ServerCert, "tls-key-file", f2.ServerKey, "tls-ca-cert-file", f2.CACert).Err(); err != nil {
		t.Fatalf("CONFIG SET of the new certificate: %v", err)
	}
	p.WaitLog(t, `msg="TLS configuration reloaded"`, startTimeout)
	// CONFIG REWRITE keeps the new files in place of the old lines.
	if err := held.ConfigRewrite(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(conf); !strings.Contains(string(b), "tls-cert-file \""+f2.ServerCert+"\"\n") || strings.Contains(string(b), f1.ServerCert) {
		t.Fatalf("CONFIG REWRITE after the rotation:\n%s", b)
	}
	if err := held.Ping(ctx).Err(); err != nil {
		t.Fatalf("the connection made before the reload: %v", err)
	}
	if out, err := tool(t, cli, append(withCert(f1), "PING")...); err == nil && strings.Contains(out, "PONG") {
		t.Fatalf("a client trusting the old CA was served after the reload: %q", out)
	}
	if out := runTool(t, nil, "redis-cli", append(withCert(f2), "PING")...); string(out) != "PONG\n" {
		t.Fatalf("redis-cli with the new CA: %q", out)
	}
	newer := redis.NewClient(&redis.Options{Addr: addr, TLSConfig: tlsCfg(f2), PoolSize: 1, MaxRetries: -1})
	defer newer.Close()
	if err := newer.Ping(ctx).Err(); err != nil {
		t.Fatalf("go-redis with the new CA: %v", err)
	}
	// CLIENT KILL reaches a TLS client through its bridge.
	id, err := newer.ClientID(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if n, err := held.ClientKillByFilter(ctx, "ID", strconv.FormatInt(id, 10)).Result(); err != nil || n != 1 {
		t.Fatalf("CLIENT KILL ID %d: %d, %v", id, n, err)
	}
	if err := newer.Ping(ctx).Err(); err == nil {
		t.Fatal("the killed TLS client's connection still answers")
	}

	// tls-auth-clients no: a client without a certificate is served.
	if err := held.ConfigSet(ctx, "tls-auth-clients", "no").Err(); err != nil {
		t.Fatal(err)
	}
	if out := runTool(t, nil, "redis-cli", "--tls", "--cacert", f2.CACert, "-h", "127.0.0.1", "-p", port, "PING"); string(out) != "PONG\n" {
		t.Fatalf("tls-auth-clients no, no certificate: %q", out)
	}

	// goblin-client --tls.
	gc := testproc.Build(t, "./cmd/goblin-client")
	if out := runTool(t, nil, gc, "--target", addr, "--tls", "--cacert", f2.CACert, "--cert", f2.ClientCert, "--key", f2.ClientKey, "get", "k"); string(out) != "\"over tls\"\n" {
		t.Fatalf("goblin-client --tls get: %q", out)
	}
	if out := runTool(t, nil, gc, "--target", "rediss://"+addr, "--cacert", f2.CACert, "ping"); string(out) != "PONG\n" {
		t.Fatalf("goblin-client rediss://: %q", out)
	}
}

// BenchmarkTLSPing measures one PING and one GET round trip (one client,
// no pipelining) over plain TCP and over TLS, against goblin-server and
// redis-server 7.0 in the same run, with each side's p50 and p99. The
// client is the same for all: a bare connection writing "PING\r\n" or
// "GET k\r\n" and reading the reply (a 16-byte value). goblin decrypts and encrypts on its
// loop (transport/uds/tls.go); docs/security.md has figures.
//
//	go test -run '^$' -bench TLSPing -benchtime 20000x ./cmd/goblin-server/
func BenchmarkTLSPing(b *testing.B) {
	dir := b.TempDir()
	f, err := testcerts.Write(dir, "")
	if err != nil {
		b.Fatal(err)
	}
	clientCfg, err := uds.ClientTLSConfig(uds.ClientTLSFiles{CACert: f.CACert, Cert: f.ClientCert, Key: f.ClientKey})
	if err != nil {
		b.Fatal(err)
	}
	gp := testproc.Start(b, testproc.Build(b, "./cmd/goblin-server"), "--metrics", "off", "--dir", dir,
		"--listen", "tcp://127.0.0.1:0", "--listen", "tls://127.0.0.1:0",
		"--tls-cert-file", f.ServerCert, "--tls-key-file", f.ServerKey, "--tls-ca-cert-file", f.CACert)
	gp.WaitLog(b, `msg=ready`, startTimeout)
	addrs := map[string]string{}
	for _, t := range testproc.ListeningTargets(gp.Log()) {
		scheme, rest, _ := strings.Cut(t, "://")
		addrs["goblin/"+scheme], _, _ = strings.Cut(rest, "?")
	}
	redisBin := testkit.Need(b, "redis-server", "the TLS latency of the reference server")
	rp, rtp := freePortTB(b), freePortTB(b)
	rs := testproc.Start(b, redisBin, "--port", rp, "--tls-port", rtp, "--bind", "127.0.0.1",
		"--tls-cert-file", f.ServerCert, "--tls-key-file", f.ServerKey, "--tls-ca-cert-file", f.CACert,
		"--save", "", "--appendonly", "no", "--dir", dir)
	b.Cleanup(func() { rs.Stop(5 * time.Second) })
	testproc.WaitDial(b, "tcp", "127.0.0.1:"+rtp, 20*time.Second)
	addrs["redis/tcp"], addrs["redis/tls"] = "127.0.0.1:"+rp, "127.0.0.1:"+rtp

	// GET reads a 16-byte value set beforehand on each server.
	reqs := []struct{ name, req, reply string }{
		{"PING", "PING\r\n", "+PONG\r\n"},
		{"GET", "GET k\r\n", "$16\r\n0123456789abcdef\r\n"},
	}
	for _, name := range []string{"goblin/tcp", "goblin/tls", "redis/tcp", "redis/tls"} {
		for _, rq := range reqs {
			b.Run(name+"/"+rq.name, func(b *testing.B) {
				var c net.Conn
				var err error
				if strings.HasSuffix(name, "/tls") {
					c, err = tls.Dial("tcp", addrs[name], clientCfg)
				} else {
					c, err = net.Dial("tcp", addrs[name])
				}
				if err != nil {
					b.Fatalf("%s at %q: %v", name, addrs[name], err)
				}
				defer c.Close()
				buf := make([]byte, 64)
				roundTrip := func(req, reply string) {
					if _, err := c.Write([]byte(req)); err != nil {
						b.Fatal(err)
					}
					for got := 0; got < len(reply); {
						n, err := c.Read(buf[got:])
						if err != nil {
							b.Fatal(err)
						}
						got += n
					}
					if string(buf[:len(reply)]) != reply {
						b.Fatalf("%s: %q, want %q", name, buf[:len(reply)], reply)
					}
				}
				roundTrip("SET k 0123456789abcdef\r\n", "+OK\r\n")
				req := []byte(rq.req)
				round := func() {
					if _, err := c.Write(req); err != nil {
						b.Fatal(err)
					}
					for got := 0; got < len(rq.reply); {
						n, err := c.Read(buf[got:])
						if err != nil {
							b.Fatal(err)
						}
						got += n
					}
				}
				for range 2000 { // warm-up: connections, caches, the scheduler
					round()
				}
				rec := latency.New()
				b.ReportAllocs()
				b.ResetTimer()
				rec.Rounds(b.N, round)
				b.StopTimer()
				rec.Report(b)
			})
		}
	}
}

func freePortTB(tb testing.TB) string {
	tb.Helper()
	return strconv.Itoa(freeTCPPort(tb))
}
