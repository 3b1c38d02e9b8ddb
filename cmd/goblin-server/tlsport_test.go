package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testcerts"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
	"github.com/goblin-kv/goblin/transport/uds"
)

// TestTLSConfigSetAtRunTime runs one script of CONFIG SETs of the TLS
// parameters against goblin-server and redis-server 7.0, each started with
// a plain port only, and compares what each step answers and does:
// tls-port refused without certificate files, then opened with them in one
// CONFIG SET, moved to another port (the old one refuses connections, a
// go-redis client connected before stays served), refused on a port in use
// (nothing changes), closed with 0 (the connected client still served);
// the session cache parameters (size and timeout, 0 included) and
// tls-prefer-server-ciphers set and read back; a Go client resuming its
// session, and not once tls-session-caching is no. redis-cli --tls checks
// each port that should accept. goblin's CONFIG REWRITE then writes the
// new values into its file.
func TestTLSConfigSetAtRunTime(t *testing.T) {
	needTool(t, "redis-cli")
	redisBin := testkit.Need(t, "redis-server", "the reference for CONFIG SET of the TLS parameters")
	dir := t.TempDir()
	f, err := testcerts.Write(dir, "")
	if err != nil {
		t.Fatal(err)
	}

	gport := freePort(t)
	conf := filepath.Join(dir, "goblin.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("# the TLS settings come by CONFIG SET\nport %s\nbind 127.0.0.1\ndir %s\n", gport, dir)), 0o600); err != nil {
		t.Fatal(err)
	}
	gp := startProc(t, buildServer(t), conf, "--metrics", "off")
	gp.WaitLog(t, `msg=ready`, startTimeout)
	rport := freePort(t)
	rdir := t.TempDir()
	rp := testproc.Start(t, redisBin, "--port", rport, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", rdir)
	t.Cleanup(func() { rp.Stop(5 * time.Second) })
	testproc.WaitDial(t, "tcp", "127.0.0.1:"+rport, startTimeout)

	clientCfg, err := uds.ClientTLSConfig(uds.ClientTLSFiles{CACert: f.CACert, Cert: f.ClientCert, Key: f.ClientKey})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	script := func(name, plain string) []string {
		var log []string
		note := func(format string, args ...any) {
			log = append(log, fmt.Sprintf(format, args...))
		}
		c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + plain, MaxRetries: -1})
		defer c.Close()
		do := func(args ...any) string {
			v, err := c.Do(ctx, args...).Result()
			if err != nil {
				msg := err.Error()
				t.Logf("%s: %v: %s", name, args, msg)
				if i := strings.Index(msg, ") - "); i >= 0 {
					msg = msg[:i+1] // the parameter named; the reason is each server's own
				}
				return "error " + msg
			}
			return fmt.Sprint(v)
		}
		get := func(p string) string { return c.ConfigGet(ctx, p).Val()[p] }
		accepts := func(port string) bool {
			out, err := tool(t, "redis-cli", "--tls", "--cacert", f.CACert, "--cert", f.ClientCert, "--key", f.ClientKey,
				"-h", "127.0.0.1", "-p", port, "PING")
			return err == nil && out == "PONG\n"
		}
		p1, p2, p3 := freePort(t), freePort(t), freePort(t)
		port := func(p string) string { // the step's port, the same name for both servers
			switch p {
			case p1:
				return "P1"
			case p2:
				return "P2"
			case p3:
				return "P3"
			case plain:
				return "PLAIN"
			}
			return p
		}

		note("tls-port at start: %s", get("tls-port"))
		note("CONFIG SET tls-port P1 without certificate files: %s", do("CONFIG", "SET", "tls-port", p1))
		note("tls-port after: %s", port(get("tls-port")))
		note("CONFIG SET certificate files and tls-port P1: %s", do("CONFIG", "SET", "tls-cert-file", f.ServerCert,
			"tls-key-file", f.ServerKey, "tls-ca-cert-file", f.CACert, "tls-port", p1))
		note("tls-port: %s; P1 accepts: %v", port(get("tls-port")), accepts(p1))
		held := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + p1, TLSConfig: clientCfg, PoolSize: 1, MaxRetries: -1})
		defer held.Close()
		note("go-redis over TLS on P1: %v", held.Ping(ctx).Err())

		note("CONFIG SET tls-port P2: %s", do("CONFIG", "SET", "tls-port", p2))
		note("tls-port: %s; P1 accepts: %v; P2 accepts: %v", port(get("tls-port")), accepts(p1), accepts(p2))
		note("the go-redis client connected on P1: %v", held.Ping(ctx).Err())
		note("CONFIG SET tls-port PLAIN (in use): %s", do("CONFIG", "SET", "tls-port", plain))
		note("tls-port: %s; P2 accepts: %v", port(get("tls-port")), accepts(p2))

		for _, p := range []string{"tls-session-cache-size", "tls-session-cache-timeout", "tls-prefer-server-ciphers", "tls-session-caching"} {
			note("%s: %s", p, get(p))
		}
		note("CONFIG SET tls-session-cache-size 5 tls-session-cache-timeout 7: %s",
			do("CONFIG", "SET", "tls-session-cache-size", "5", "tls-session-cache-timeout", "7"))
		note("size %s, timeout %s", get("tls-session-cache-size"), get("tls-session-cache-timeout"))
		note("CONFIG SET tls-session-cache-size -1: %s", do("CONFIG", "SET", "tls-session-cache-size", "-1"))
		note("CONFIG SET tls-session-cache-size 0: %s; size %s", do("CONFIG", "SET", "tls-session-cache-size", "0"), get("tls-session-cache-size"))
		note("CONFIG SET tls-prefer-server-ciphers yes: %s; %s", do("CONFIG", "SET", "tls-prefer-server-ciphers", "yes"), get("tls-prefer-server-ciphers"))

		note("CONFIG SET tls-port 0: %s", do("CONFIG", "SET", "tls-port", "0"))
		note("tls-port: %s; P2 accepts: %v", get("tls-port"), accepts(p2))
		note("the go-redis client connected on P1: %v", held.Ping(ctx).Err())

		note("CONFIG SET tls-port P3: %s; P3 accepts: %v", do("CONFIG", "SET", "tls-port", p3), accepts(p3))
		if name != "goblin" {
			// redis-server 7.0.15 fails a Go client's handshake with a
			// client certificate once a CONFIG SET rebuilt its context
			// ("session id context uninitialized"): resumption is
			// checked on goblin alone.
			return log
		}
		resumes := func() bool {
			conn, err := tls.Dial("tcp", "127.0.0.1:"+p3, clientCfg)
			if err != nil {
				t.Fatalf("%s: dial P3: %v", name, err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			conn.Write([]byte("PING\r\n"))
			buf := make([]byte, 7)
			if _, err := conn.Read(buf); err != nil || string(buf) != "+PONG\r\n" {
				t.Fatalf("%s: PING over TLS: %q, %v", name, buf, err)
			}
			// A TLS 1.3 ticket comes after the handshake: let it in.
			conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			conn.Read(buf)
			return conn.ConnectionState().DidResume
		}
		clientCfg.ClientSessionCache = tls.NewLRUClientSessionCache(8)
		note("Go client, first connection resumed: %v; second: %v", resumes(), resumes())
		note("CONFIG SET tls-session-caching no: %s", do("CONFIG", "SET", "tls-session-caching", "no"))
		clientCfg.ClientSessionCache = tls.NewLRUClientSessionCache(8)
		note("Go client, first connection resumed: %v; second: %v", resumes(), resumes())
		clientCfg.ClientSessionCache = nil
		return log
	}
	got := script("goblin", gport)
	want := script("redis", rport)
	if len(got) != len(want)+3 {
		t.Fatalf("goblin's script has %d steps, redis's %d: want 3 more (the resumption steps)", len(got), len(want))
	}
	for i, want := range []string{"Go client, first connection resumed: false; second: true", "CONFIG SET tls-session-caching no: OK",
		"Go client, first connection resumed: false; second: false"} {
		if g := got[len(got)-3+i]; g != want {
			t.Errorf("goblin: %q, want %q", g, want)
		}
	}
	for i := range want {
		if g, w := got[i], want[i]; g != w {
			t.Errorf("step %d:\n goblin: %s\n redis:  %s", i, g, w)
		} else {
			t.Logf("%s", got[i])
		}
	}

	// goblin's CONFIG REWRITE keeps what the script set.
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + gport})
	defer c.Close()
	if err := c.ConfigRewrite(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(conf)
	for _, line := range []string{"tls-port ", "tls-session-cache-size 0\n", "tls-session-cache-timeout 7\n", "tls-session-caching no\n", "tls-cert-file \"" + f.ServerCert + "\"\n"} {
		if !strings.Contains(string(b), "\n"+line) {
			t.Errorf("CONFIG REWRITE: no %q line in\n%s", line, b)
		}
	}
	if _, err := net.DialTimeout("tcp", "127.0.0.1:"+gport, time.Second); err != nil {
		t.Fatal(err)
	}
}
