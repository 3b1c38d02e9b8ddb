package uds

import (
	"bufio"
	"crypto/tls"
	"net"
	"testing"
	"time"
)

// resumed dials the listener with cfg (whose ClientSessionCache carries
// sessions from one dial to the next), reads one answer so a TLS 1.3
// ticket sent after the handshake is taken, and reports whether the
// handshake resumed a session.
func resumed(t *testing.T, l *loop, cfg *tls.Config) bool {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", l.s.Addr(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("x\n")); err != nil {
		t.Fatal(err)
	}
	if got, err := bufio.NewReader(c).ReadString('\n'); err != nil || got != "+x\r\n" {
		t.Fatalf("answer: %q, %v", got, err)
	}
	return c.ConnectionState().DidResume
}

// TestTLSSessionCache: a client that kept its session resumes it (TLS 1.2
// and 1.3); tls-session-caching no, a session past
// tls-session-cache-timeout, one pushed out of a cache of
// tls-session-cache-size sessions, and one made under a replaced
// configuration (a rotated certificate) are not resumed.
func TestTLSSessionCache(t *testing.T) {
	f := writeCerts(t, t.TempDir(), "")
	client := func(version uint16) *tls.Config {
		c := clientTLS(t, ClientTLSFiles{CACert: f.CACert, Cert: f.ClientCert, Key: f.ClientKey})
		c.MinVersion, c.MaxVersion = version, version
		c.ClientSessionCache = tls.NewLRUClientSessionCache(4)
		return c
	}
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		name := tls.VersionName(v)
		l := startTLS(t, f, TLSOptions{})
		c := client(v)
		if resumed(t, l, c) {
			t.Fatalf("%s: the first connection resumed", name)
		}
		if !resumed(t, l, c) {
			t.Fatalf("%s: the second connection made a full handshake; want it resumed from the cache", name)
		}
		// A new configuration (CONFIG SET of a tls-* file) has a new,
		// empty cache.
		cfg, err := TLSOptions{CertFile: f.ServerCert, KeyFile: f.ServerKey, CACertFile: f.CACert}.ServerConfig()
		if err != nil {
			t.Fatal(err)
		}
		l.s.cfg.TLS.Replace(cfg)
		if resumed(t, l, c) {
			t.Fatalf("%s: a session made before the configuration was replaced was resumed", name)
		}
		if !resumed(t, l, c) {
			t.Fatalf("%s: no resumption under the new configuration", name)
		}

		off := startTLS(t, f, TLSOptions{SessionCachingOff: true})
		c = client(v)
		resumed(t, off, c)
		if resumed(t, off, c) {
			t.Fatalf("%s: tls-session-caching no, and a session was resumed", name)
		}
	}

	// Size 1: a second client's session pushes the first one's out.
	l := startTLS(t, f, TLSOptions{SessionCacheSize: 1})
	a, b := client(tls.VersionTLS13), client(tls.VersionTLS13)
	resumed(t, l, a)
	if !resumed(t, l, a) {
		t.Fatal("size 1: one client alone was not resumed")
	}
	resumed(t, l, b)
	if resumed(t, l, a) {
		t.Fatal("size 1: a session pushed out by another client's was resumed")
	}
}

// TestTLSSessionCacheTimeout: the cache refuses a session as old as the
// timeout and drops expired ones as new ones come, on its own clock.
func TestTLSSessionCacheTimeout(t *testing.T) {
	now := time.Unix(1000, 0)
	c := newSessionCache(0, 300*time.Second)
	c.now = func() time.Time { return now }
	f := writeCerts(t, t.TempDir(), "")
	l := startTLS(t, f, TLSOptions{SessionCacheTimeout: 300 * time.Second})
	src := l.s.cfg.TLS
	cfg := src.Config().Clone()
	c.install(cfg)
	src.Replace(cfg)
	cl := clientTLS(t, ClientTLSFiles{CACert: f.CACert, Cert: f.ClientCert, Key: f.ClientKey})
	cl.ClientSessionCache = tls.NewLRUClientSessionCache(4)
	resumed(t, l, cl)
	now = now.Add(299 * time.Second)
	if !resumed(t, l, cl) {
		t.Fatal("a session 299 s old with a 300 s timeout was not resumed")
	}
	// That handshake left a new ticket, made at 1299 s: the client
	// offers it next.
	n := c.len()
	now = now.Add(300 * time.Second)
	if resumed(t, l, cl) {
		t.Fatal("a session 300 s old with a 300 s timeout was resumed")
	}
	if got := c.len(); got != 1 || n != 2 {
		t.Fatalf("sessions held: %d before the expiry, %d after it and one new session; want 2, then 1 (the expired ones dropped)", n, got)
	}
}
