package uds

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testcerts"
	"github.com/goblin-kv/goblin/transport"
)

func writeCerts(t *testing.T, dir, name string) testcerts.Files {
	t.Helper()
	f, err := testcerts.Write(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// startTLS runs a TLS listener with o (files from f when o names none).
func startTLS(t *testing.T, f testcerts.Files, o TLSOptions) *loop {
	t.Helper()
	if o.CertFile == "" {
		o.CertFile, o.KeyFile, o.CACertFile = f.ServerCert, f.ServerKey, f.CACert
	}
	cfg, err := o.ServerConfig()
	if err != nil {
		t.Fatal(err)
	}
	l, _ := startLoop(t, Config{Network: "tcp", Address: "127.0.0.1:0", TLS: NewTLSSource(cfg)})
	return l
}

func clientTLS(t *testing.T, files ClientTLSFiles) *tls.Config {
	t.Helper()
	c, err := ClientTLSConfig(files)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func dialTLS(t *testing.T, l *loop, cfg *tls.Config) (*Conn, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := DialTLS(ctx, l.s.Addr(), DialOptions{TLS: cfg})
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

// roundTrip sends one line and reads its answer.
func tlsLine(c *Conn, line string) (string, error) {
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if err := c.Write([]byte(line + "\n")); err != nil {
		return "", err
	}
	return bufio.NewReader(c.NetConn()).ReadString('\n')
}

func TestTLSServesAClientWithACertificate(t *testing.T) {
	f := writeCerts(t, t.TempDir(), "")
	l := startTLS(t, f, TLSOptions{})
	if got := l.s.Target().Scheme; got != transport.TLS {
		t.Fatalf("Target().Scheme = %q, want tls", got)
	}
	c, err := dialTLS(t, l, clientTLS(t, ClientTLSFiles{CACert: f.CACert, Cert: f.ClientCert, Key: f.ClientKey}))
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []string{"PING", "again"} {
		if got, err := tlsLine(c, req); err != nil || got != "+"+req+"\r\n" {
			t.Fatalf("%s: got %q, %v", req, got, err)
		}
	}
	if st := l.stats(); st.Clients != 1 || st.TLSHandshakeFailures != 0 {
		t.Fatalf("stats: %d clients, %d handshake failures; want 1 and 0", st.Clients, st.TLSHandshakeFailures)
	}
}

func TestTLSRefusesAClientWithoutACertificate(t *testing.T) {
	f := writeCerts(t, t.TempDir(), "")
	l := startTLS(t, f, TLSOptions{AuthClients: "yes"})
	c, err := dialTLS(t, l, clientTLS(t, ClientTLSFiles{CACert: f.CACert}))
	if err == nil {
		// TLS 1.3: the client's side of the handshake ends before the
		// server checks its (missing) certificate; the refusal comes as
		// an alert on the first read.
		_, err = tlsLine(c, "PING")
	}
	if err == nil || !strings.Contains(err.Error(), "certificate required") {
		t.Fatalf("a client without a certificate: err %v, want the certificate-required alert", err)
	}
	testkit.Eventually(t, 5*time.Second, "the failed handshake counted", func() (bool, string) {
		st := l.stats()
		return st.TLSHandshakeFailures == 1, "failures " + strconv.FormatInt(st.TLSHandshakeFailures, 10)
	})
	var ts transport.Stats
	l.do(func() { l.s.UpdateStats(&ts) })
	if ts.Rejected != 1 {
		t.Fatalf("transport stats: %d rejected, want the failed handshake", ts.Rejected)
	}

	// tls-auth-clients optional serves it.
	l = startTLS(t, f, TLSOptions{AuthClients: "optional"})
	c, err = dialTLS(t, l, clientTLS(t, ClientTLSFiles{CACert: f.CACert}))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := tlsLine(c, "PING"); err != nil || got != "+PING\r\n" {
		t.Fatalf("optional: got %q, %v", got, err)
	}
}

func TestTLSTellsAPlaintextClient(t *testing.T) {
	f := writeCerts(t, t.TempDir(), "")
	l := startTLS(t, f, TLSOptions{})
	c, err := net.Dial("tcp", l.s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil || string(got) != PlaintextOnTLS {
		t.Fatalf("a plaintext client read %q, %v; want %q and the end of the stream", got, err, PlaintextOnTLS)
	}
}

// TestTLSSilentClientDoesNotHoldTheLoop: a client that connects and never
// makes its handshake costs the loop nothing: another is served at once.
func TestTLSSilentClientDoesNotHoldTheLoop(t *testing.T) {
	f := writeCerts(t, t.TempDir(), "")
	l := startTLS(t, f, TLSOptions{})
	for range 3 {
		silent, err := net.Dial("tcp", l.s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer silent.Close()
	}
	start := time.Now()
	c, err := dialTLS(t, l, clientTLS(t, ClientTLSFiles{CACert: f.CACert, Cert: f.ClientCert, Key: f.ClientKey}))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := tlsLine(c, "PING"); err != nil || got != "+PING\r\n" {
		t.Fatalf("got %q, %v", got, err)
	}
	if d := time.Since(start); d > TLSHandshakeTimeout/2 {
		t.Fatalf("served after %v, with silent clients waiting on their handshakes", d)
	}
}

// TestTLSReplaceKeepsConnectedClients: a new certificate (from another CA)
// serves the clients that connect after it; the one connected before keeps
// its session.
func TestTLSReplaceKeepsConnectedClients(t *testing.T) {
	dir := t.TempDir()
	f1, f2 := writeCerts(t, dir, "old-"), writeCerts(t, dir, "new-")
	l := startTLS(t, f1, TLSOptions{})
	old, err := dialTLS(t, l, clientTLS(t, ClientTLSFiles{CACert: f1.CACert, Cert: f1.ClientCert, Key: f1.ClientKey}))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := TLSOptions{CertFile: f2.ServerCert, KeyFile: f2.ServerKey, CACertFile: f2.CACert}.ServerConfig()
	if err != nil {
		t.Fatal(err)
	}
	l.s.cfg.TLS.Replace(cfg)
	if got, err := tlsLine(old, "still"); err != nil || got != "+still\r\n" {
		t.Fatalf("the client connected before the reload: %q, %v", got, err)
	}
	if _, err := dialTLS(t, l, clientTLS(t, ClientTLSFiles{CACert: f1.CACert, Cert: f1.ClientCert, Key: f1.ClientKey})); err == nil {
		t.Fatal("a client trusting only the old CA connected after the reload")
	}
	c, err := dialTLS(t, l, clientTLS(t, ClientTLSFiles{CACert: f2.CACert, Cert: f2.ClientCert, Key: f2.ClientKey}))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := tlsLine(c, "new"); err != nil || got != "+new\r\n" {
		t.Fatalf("new client: %q, %v", got, err)
	}
}

func TestTLSOptionsRefused(t *testing.T) {
	f := writeCerts(t, t.TempDir(), "")
	base := TLSOptions{CertFile: f.ServerCert, KeyFile: f.ServerKey, CACertFile: f.CACert}
	cases := []struct {
		name string
		edit func(*TLSOptions)
		want string
	}{
		{"no cert", func(o *TLSOptions) { o.CertFile = "" }, "needs tls-cert-file and tls-key-file"},
		{"no CA", func(o *TLSOptions) { o.CACertFile = "" }, "tls-auth-clients yes needs tls-ca-cert-file"},
		{"auth mode", func(o *TLSOptions) { o.AuthClients = "maybe" }, "want yes, no or optional"},
		{"protocol", func(o *TLSOptions) { o.Protocols = "TLSv1.4" }, "unknown protocol"},
		{"protocol gap", func(o *TLSOptions) { o.Protocols = "TLSv1 TLSv1.3" }, "leaves a gap"},
		{"cipher keyword", func(o *TLSOptions) { o.Ciphers = "HIGH:!aNULL" }, "not a cipher suite Go's crypto/tls implements"},
		{"ciphersuites subset", func(o *TLSOptions) { o.Ciphersuites = "TLS_AES_128_GCM_SHA256" }, "cannot restrict TLS 1.3 suites"},
		{"missing file", func(o *TLSOptions) { o.KeyFile = filepath.Join(f.Dir, "nope") }, "no such file"},
		{"key mismatch", func(o *TLSOptions) { o.KeyFile = f.ClientKey }, "private key does not match"},
	}
	for _, tc := range cases {
		o := base
		tc.edit(&o)
		if _, err := o.ServerConfig(); err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrTLS) {
			t.Errorf("%s: err %v, want ErrTLS saying %q", tc.name, err, tc.want)
		}
	}
	o := base
	o.AuthClients, o.CACertFile, o.CACertDir = "no", "", ""
	o.Protocols, o.Ciphers = "TLSv1.2", "ECDHE-ECDSA-AES128-GCM-SHA256:TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"
	o.Ciphersuites = "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384:TLS_AES_128_GCM_SHA256"
	cfg, err := o.ServerConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MinVersion != tls.VersionTLS12 || cfg.MaxVersion != tls.VersionTLS12 || len(cfg.CipherSuites) != 2 || cfg.ClientAuth != tls.NoClientCert {
		t.Fatalf("config %+v", cfg)
	}
	// The CA as a directory.
	caDir := t.TempDir()
	b, _ := os.ReadFile(f.CACert)
	os.WriteFile(filepath.Join(caDir, "ca.pem"), b, 0o600)
	o = base
	o.CACertFile, o.CACertDir = "", caDir
	if _, err := o.ServerConfig(); err != nil {
		t.Fatalf("tls-ca-cert-dir: %v", err)
	}
}

// TestTLSEncryptedKey: tls-key-file-pass decrypts a key in the legacy
// encrypted PEM format.
func TestTLSEncryptedKey(t *testing.T) {
	f := writeCerts(t, t.TempDir(), "")
	raw, _ := os.ReadFile(f.ServerKey)
	block, _ := pem.Decode(raw)
	//lint:ignore SA1019 the test writes the legacy format tls-key-file-pass reads.
	enc, err := x509.EncryptPEMBlock(rand.Reader, block.Type, block.Bytes, []byte("sekrit"), x509.PEMCipherAES256)
	if err != nil {
		t.Fatal(err)
	}
	encPath := filepath.Join(f.Dir, "enc.key")
	os.WriteFile(encPath, pem.EncodeToMemory(enc), 0o600)
	o := TLSOptions{CertFile: f.ServerCert, KeyFile: encPath, AuthClients: "no"}
	if _, err := o.ServerConfig(); err == nil || !strings.Contains(err.Error(), "tls-key-file-pass is not set") {
		t.Fatalf("no password: %v", err)
	}
	o.KeyFilePass = "wrong"
	if _, err := o.ServerConfig(); err == nil {
		t.Fatal("a wrong password was accepted")
	}
	o.KeyFilePass = "sekrit"
	if _, err := o.ServerConfig(); err != nil {
		t.Fatal(err)
	}
}

// TestTLSClientAtItsOutputLimitWaits: a TLS client whose replies, counted
// with the ciphertext its socket has not taken, reach MaxOutput is not
// served again until they drain, as a plain client is not. Counting the
// plaintext alone, its waiting PING was re-served (and re-queued) on every
// Poll: a loop at full CPU for as long as the client did not read.
func TestTLSClientAtItsOutputLimitWaits(t *testing.T) {
	f := writeCerts(t, t.TempDir(), "")
	cfg, err := (&TLSOptions{CertFile: f.ServerCert, KeyFile: f.ServerKey, CACertFile: f.CACert}).ServerConfig()
	if err != nil {
		t.Fatal(err)
	}
	l, _ := startLoop(t, Config{Network: "tcp", Address: "127.0.0.1:0", TLS: NewTLSSource(cfg), MaxOutput: 1 << 20})
	c, err := dialTLS(t, l, clientTLS(t, ClientTLSFiles{CACert: f.CACert, Cert: f.ClientCert, Key: f.ClientKey}))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Write([]byte("BIG 40000000\nPING\n")); err != nil {
		t.Fatal(err)
	}
	before := l.stats().Deferred
	time.Sleep(300 * time.Millisecond) // the client reads nothing
	if d := l.stats().Deferred - before; d > 20 {
		t.Fatalf("the PING behind a reply past MaxOutput was re-served %d times in 300 ms while the client read nothing", d)
	}
	// Reading drains the replies and the PING is answered.
	c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReaderSize(c.NetConn(), 1<<16)
	big, err := r.ReadSlice('\n')
	for err == bufio.ErrBufferFull {
		_, err = r.ReadSlice('\n')
		big = nil
	}
	if err != nil {
		t.Fatalf("reading the large reply: %v", err)
	}
	_ = big
	if got, err := r.ReadString('\n'); err != nil || got != "+PING\r\n" {
		t.Fatalf("after the large reply: %q, %v", got, err)
	}
}
