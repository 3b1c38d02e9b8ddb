package uds

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testcerts"
)

// startTLSWith runs a TLS listener with f's files and cfg's limits.
func startTLSWith(t *testing.T, f testcerts.Files, cfg Config) *loop {
	t.Helper()
	tc, err := TLSOptions{CertFile: f.ServerCert, KeyFile: f.ServerKey, CACertFile: f.CACert}.ServerConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Network, cfg.Address, cfg.TLS = "tcp", "127.0.0.1:0", NewTLSSource(tc)
	l, _ := startLoop(t, cfg)
	return l
}

// trickleConn writes a few bytes at a time with a pause between, so every
// TLS record reaches the server in pieces, over several readable events.
type trickleConn struct {
	net.Conn
	chunk int
}

func (c trickleConn) Write(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := c.Conn.Write(b[n:min(len(b), n+c.chunk)])
		n += m
		if err != nil {
			return n, err
		}
		time.Sleep(50 * time.Microsecond)
	}
	return n, nil
}

// TestTLSLoopRecordsSplitAcrossReads: records (the handshake's and the
// requests') that arrive a few bytes at a time are put together across
// the loop's reads: a partial record waits in the tls.Conn for the rest.
func TestTLSLoopRecordsSplitAcrossReads(t *testing.T) {
	f := writeCerts(t, t.TempDir(), "")
	l := startTLSWith(t, f, Config{})
	raw, err := net.Dial("tcp", l.s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetDeadline(time.Now().Add(20 * time.Second))
	cfg := clientTLS(t, ClientTLSFiles{CACert: f.CACert, Cert: f.ClientCert, Key: f.ClientKey})
	cfg.ServerName = "127.0.0.1"
	c := tls.Client(trickleConn{raw, 7}, cfg)
	r := bufio.NewReader(c)
	for _, req := range []string{"PING", "two\nthree", strings.Repeat("long", 1000)} {
		if _, err := c.Write([]byte(req + "\n")); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(req, "\n") {
			if got, err := r.ReadString('\n'); err != nil || got != "+"+line+"\r\n" {
				t.Fatalf("request %.20q: got %.40q, %v", line, got, err)
			}
		}
	}
}

// TestTLSLoopPipelineOverTheReadBudget: a client pipelining more than one
// read's budget (readBudget) and more replies than one Poll passes
// (PassOutput) gets every answer, in order: the records left in its
// tls.Conn when the loop turns to others are read on a later Poll, though
// no epoll event announces them.
func TestTLSLoopPipelineOverTheReadBudget(t *testing.T) {
	f := writeCerts(t, t.TempDir(), "")
	l := startTLSWith(t, f, Config{})
	c, err := dialTLS(t, l, clientTLS(t, ClientTLSFiles{CACert: f.CACert, Cert: f.ClientCert, Key: f.ClientKey}))
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	const lines = 300_000 // 3.3 MB of requests, as many replies
	var req bytes.Buffer
	for i := range lines {
		fmt.Fprintf(&req, "line-%06d\n", i)
	}
	nc := c.NetConn()
	errs := make(chan error, 1)
	go func() { _, err := nc.Write(req.Bytes()); errs <- err }()
	r := bufio.NewReader(nc)
	for i := range lines {
		want := fmt.Sprintf("+line-%06d\r\n", i)
		if got, err := r.ReadString('\n'); err != nil || got != want {
			t.Fatalf("reply %d: got %q, %v; want %q", i, got, err, want)
		}
	}
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}

// TestTLSLoopSlowReader: a client that asks for more than MaxOutput and
// reads late gets all of it: the ciphertext its socket does not take waits
// for a writable event, its requests wait while its replies fill
// MaxOutput, and both resume as it reads.
func TestTLSLoopSlowReader(t *testing.T) {
	f := writeCerts(t, t.TempDir(), "")
	l := startTLSWith(t, f, Config{MaxOutput: 1 << 20})
	c, err := dialTLS(t, l, clientTLS(t, ClientTLSFiles{CACert: f.CACert, Cert: f.ClientCert, Key: f.ClientKey}))
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	const reqs, size = 12, 2_000_000 // 24 MB: more than the sockets' kernel buffers hold
	nc := c.NetConn()
	if _, err := nc.Write([]byte(strings.Repeat(fmt.Sprintf("BIG %d\n", size), reqs) + "after\n")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the replies back up: socket buffers, ciphertext, MaxOutput
	r := bufio.NewReaderSize(nc, 1<<20)
	for i := range reqs {
		got, err := r.ReadString('\n')
		if err != nil || len(got) != size+1 || strings.Trim(got, "x\n") != "" {
			t.Fatalf("reply %d: %d bytes, %v; want %d x's and a newline", i, len(got), err, size)
		}
	}
	if got, err := r.ReadString('\n'); err != nil || got != "+after\r\n" {
		t.Fatalf("the request after the big ones: %q, %v", got, err)
	}
	if st := l.stats(); st.SlowConsumers != 0 || st.Clients != 1 {
		t.Fatalf("stats: %d slow consumers, %d clients; want 0 and 1", st.SlowConsumers, st.Clients)
	}
}

// TestTLSLoopStalledReaderIsCutOff: a TLS client that asks for one reply
// larger than MaxOutput and never reads is disconnected as a slow consumer
// after StallTimeout, as a plain one is. The reply is encrypted at once,
// so it waits as ciphertext the socket does not take: the output limits
// must count that too, not only queued plaintext.
func TestTLSLoopStalledReaderIsCutOff(t *testing.T) {
	f := writeCerts(t, t.TempDir(), "")
	l := startTLSWith(t, f, Config{MaxOutput: 1 << 20, StallTimeout: 100 * time.Millisecond})
	c, err := dialTLS(t, l, clientTLS(t, ClientTLSFiles{CACert: f.CACert, Cert: f.ClientCert, Key: f.ClientKey}))
	if err != nil {
		t.Fatal(err)
	}
	// 16 MB: more than MaxOutput plus what the sockets' kernel buffers hold.
	if _, err := c.NetConn().Write([]byte("BIG 16000000\n")); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, "the TLS client that never reads its 16 MB reply to be cut off as a slow consumer",
		func() (bool, string) {
			st := l.stats()
			return st.SlowConsumers == 1 && st.Clients == 0, fmt.Sprintf("%d slow consumers, %d clients", st.SlowConsumers, st.Clients)
		})
}

// TestTLSLoopKeyUpdate: a TLS 1.3 KeyUpdate from the client that asks the
// server to update its keys too (openssl s_client's "K" command) is
// handled on the loop: the server's KeyUpdate is written from inside the
// read, and requests before and after it are answered.
func TestTLSLoopKeyUpdate(t *testing.T) {
	openssl := testkit.Need(t, "openssl", "a TLS 1.3 KeyUpdate from the client")
	f := writeCerts(t, t.TempDir(), "")
	l := startTLSWith(t, f, Config{})
	cmd := exec.Command(openssl, "s_client", "-connect", l.s.Addr(), "-tls1_3",
		"-CAfile", f.CACert, "-cert", f.ClientCert, "-key", f.ClientKey)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() }()
	lines := make(chan string, 100)
	var once sync.Once
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		once.Do(func() { close(lines) })
	}()
	expect := func(want string) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("s_client ended before %q; stderr: %s", want, stderr.String())
				}
				if strings.TrimSpace(line) == want {
					return
				}
			case <-deadline:
				t.Fatalf("s_client never printed %q; stderr: %s", want, stderr.String())
			}
		}
	}
	// s_client takes a line that starts with K as its command and drops
	// the rest of what it read with it: each command goes alone, and the
	// next line only once it said KEYUPDATE.
	keyUpdate := func(cmd string, count int) {
		t.Helper()
		io.WriteString(stdin, cmd+"\n")
		testkit.Eventually(t, 10*time.Second, "s_client sends KeyUpdate "+cmd, func() (bool, string) {
			s := stderr.String()
			return strings.Count(s, "KEYUPDATE") == count, s
		})
	}
	io.WriteString(stdin, "before\n")
	expect("+before")
	keyUpdate("K", 1) // the server must update its keys too
	io.WriteString(stdin, "after\n")
	expect("+after")
	keyUpdate("k", 2)
	io.WriteString(stdin, "again\n")
	expect("+again")
}

// lockedBuffer is a bytes.Buffer a command writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// tlsLoopClient is a TLS client on the test's goroutine that never blocks:
// a tls.Conn over a loopConn, as the server's, after a handshake made on
// a goroutine while the server is polled.
func tlsLoopClient(tb testing.TB, s *Server, f testcerts.Files) (*tls.Conn, func()) {
	tb.Helper()
	nc, err := net.Dial("tcp", s.Addr())
	if err != nil {
		tb.Fatal(err)
	}
	cfg, err := ClientTLSConfig(ClientTLSFiles{CACert: f.CACert, Cert: f.ClientCert, Key: f.ClientKey})
	if err != nil {
		tb.Fatal(err)
	}
	cfg.ServerName = "127.0.0.1"
	lc := &loopConn{hs: nc, fd: -1}
	tc := tls.Client(lc, cfg)
	done := make(chan error, 1)
	go func() { done <- tc.Handshake() }()
	deadline := time.Now().Add(10 * time.Second)
	for hs := false; !hs; {
		s.Poll(time.Now().UnixNano())
		select {
		case err := <-done:
			if err != nil {
				tb.Fatal(err)
			}
			hs = true
		default:
			if time.Now().After(deadline) {
				tb.Fatal("the client's TLS handshake did not finish in 10s")
			}
		}
	}
	f2, err := nc.(*net.TCPConn).File()
	if err != nil {
		tb.Fatal(err)
	}
	lc.fd, lc.hs = int(f2.Fd()), nil
	unix.SetNonblock(lc.fd, true)
	return tc, func() { f2.Close(); nc.Close() }
}

// tlsRoundTrip sends req from the client and polls the server until the
// client has the reply.
func tlsRoundTrip(s *Server, c *tls.Conn, req, buf []byte) int {
	c.Write(req)
	for {
		s.Poll(0)
		c.NetConn().(*loopConn).drained = false
		if n, _ := c.Read(buf); n > 0 {
			return n
		}
	}
}

// TestTLSRoundTripAllocatesOnlyInCryptoTLS: serving a TLS client, records
// decrypted and encrypted on the loop, allocates nothing of goblin's per
// request. crypto/tls itself allocates one 24-byte reader (atLeastReader,
// which escapes through bytes.Buffer.ReadFrom) each time a tls.Conn.Read
// must go to its connection for bytes: twice per request on the server
// (the request's record, then the read that finds the socket empty) and
// once on this client, which runs crypto/tls the same way: three in all.
// (The bridge this replaced allocated the same reader on its goroutine.)
func TestTLSRoundTripAllocatesOnlyInCryptoTLS(t *testing.T) {
	f := writeCerts(t, t.TempDir(), "")
	tc, err := TLSOptions{CertFile: f.ServerCert, KeyFile: f.ServerKey, CACertFile: f.CACert}.ServerConfig()
	if err != nil {
		t.Fatal(err)
	}
	s, err := Listen(Config{Network: "tcp", Address: "127.0.0.1:0", TLS: NewTLSSource(tc), Handler: &lineHandler{}, CheckEvery: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, closeClient := tlsLoopClient(t, s, f)
	defer closeClient()
	req, buf := []byte("ping\n"), make([]byte, 64)
	for range 10 { // the handshake's hand-over, first buffers
		tlsRoundTrip(s, c, req, buf)
	}
	if n := tlsRoundTrip(s, c, req, buf); string(buf[:n]) != "+ping\r\n" {
		t.Fatalf("got %q", buf[:n])
	}
	if a := testing.AllocsPerRun(1000, func() { tlsRoundTrip(s, c, req, buf) }); a > 3 && !raceEnabled {
		t.Fatalf("%v allocations per round trip, want crypto/tls's 3", a)
	}
}

// BenchmarkTLSRoundTrip is BenchmarkRoundTrip over TLS on TCP: one request
// and reply through Poll, client and server on one goroutine, both running
// crypto/tls's record layer over a loopConn.
func BenchmarkTLSRoundTrip(b *testing.B) {
	f, err := testcerts.Write(b.TempDir(), "")
	if err != nil {
		b.Fatal(err)
	}
	tc, err := TLSOptions{CertFile: f.ServerCert, KeyFile: f.ServerKey, CACertFile: f.CACert}.ServerConfig()
	if err != nil {
		b.Fatal(err)
	}
	s, err := Listen(Config{Network: "tcp", Address: "127.0.0.1:0", TLS: NewTLSSource(tc), Handler: &lineHandler{}, CheckEvery: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	c, closeClient := tlsLoopClient(b, s, f)
	defer closeClient()
	req, buf := []byte("ping\n"), make([]byte, 64)
	tlsRoundTrip(s, c, req, buf)
	b.ReportAllocs()
	for b.Loop() {
		tlsRoundTrip(s, c, req, buf)
	}
}
