package uds

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/wiretest"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/transport"
)

// lineHandler is a trivial transport.StreamHandler for the transport's
// tests: every "\n"-terminated line is a request answered with
// "+line\r\n"; "BIG n" answers n bytes of 'x' and a newline; "QUIT"
// answers "+BYE" and closes.
type lineHandler struct {
	open, closed atomic.Int64
}

type lineSession struct{ h *lineHandler }

func (h *lineHandler) OpenStream(proto.Protocol) transport.StreamSession {
	h.open.Add(1)
	return lineSession{h}
}

func (s lineSession) Close() { s.h.closed.Add(1) }

func (s lineSession) Serve(in, out []byte, limit int) (int, []byte, bool) {
	consumed := 0
	for start := len(out); len(out)-start < limit; {
		i := bytes.IndexByte(in[consumed:], '\n')
		if i < 0 {
			return consumed, out, false
		}
		line := in[consumed : consumed+i]
		consumed += i + 1
		switch {
		case string(line) == "QUIT":
			return consumed, append(out, "+BYE\r\n"...), true
		case bytes.HasPrefix(line, []byte("BIG ")):
			n, _ := strconv.Atoi(string(line[4:]))
			for ; n > 0; n-- {
				out = append(out, 'x')
			}
			out = append(out, '\n')
		default:
			out = append(out, '+')
			out = append(out, line...)
			out = append(out, "\r\n"...)
		}
	}
	return consumed, out, false
}

// loop drives a Server from one goroutine, as the store loop does; do runs
// a function on that goroutine.
type loop struct {
	s    *Server
	fns  chan func()
	done chan struct{}
}

func startLoop(t *testing.T, cfg Config) (*loop, *lineHandler) {
	t.Helper()
	h := &lineHandler{}
	if cfg.Handler == nil {
		cfg.Handler = h
	}
	s, err := Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l := &loop{s: s, fns: make(chan func()), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for {
			select {
			case fn, ok := <-l.fns:
				if !ok {
					s.Close()
					return
				}
				fn()
			default:
			}
			if s.Poll(time.Now().UnixNano()) == 0 {
				runtime.Gosched()
			}
		}
	}()
	t.Cleanup(l.stop)
	return l, h
}

func (l *loop) do(fn func()) {
	ran := make(chan struct{})
	l.fns <- func() { fn(); close(ran) }
	<-ran
}

func (l *loop) stats() Stats {
	var st Stats
	l.do(func() { l.s.Stats(&st) })
	return st
}

func (l *loop) stop() {
	select {
	case <-l.done:
		return
	default:
	}
	close(l.fns)
	<-l.done
}

var networks = []string{"unix", "tcp"}

func cfgFor(t *testing.T, network string) Config {
	if network == "unix" {
		return Config{Network: "unix", Address: filepath.Join(t.TempDir(), "g.sock")}
	}
	return Config{Network: "tcp", Address: "127.0.0.1:0"}
}

func dial(t *testing.T, l *loop) net.Conn {
	t.Helper()
	c, err := net.Dial(l.s.cfg.Network, l.s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestPipelinedRequestsAnsweredInOrder(t *testing.T) {
	for _, nw := range networks {
		t.Run(nw, func(t *testing.T) {
			l, _ := startLoop(t, cfgFor(t, nw))
			c := dial(t, l)
			var req bytes.Buffer
			const n = 5000
			for i := range n {
				fmt.Fprintf(&req, "req-%d\n", i)
			}
			go c.Write(req.Bytes())
			r := bufio.NewReader(c)
			for i := range n {
				line, err := r.ReadString('\n')
				if err != nil {
					t.Fatal(err)
				}
				if want := fmt.Sprintf("+req-%d\r\n", i); line != want {
					t.Fatalf("reply %d = %q, want %q", i, line, want)
				}
			}
		})
	}
}

func TestPartialReadsAndWrites(t *testing.T) {
	for _, nw := range networks {
		t.Run(nw, func(t *testing.T) {
			l, _ := startLoop(t, cfgFor(t, nw))
			c := dial(t, l)
			// A request written one byte at a time.
			for _, b := range []byte("split\n") {
				if _, err := c.Write([]byte{b}); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Millisecond)
			}
			r := bufio.NewReader(c)
			if line, err := r.ReadString('\n'); err != nil || line != "+split\r\n" {
				t.Fatalf("got %q, %v", line, err)
			}
			// A reply far larger than the socket buffer, read slowly.
			const big = 8 << 20
			fmt.Fprintf(c, "BIG %d\nafter\n", big)
			got := 0
			buf := make([]byte, 64<<10)
			for got < big {
				n, err := r.Read(buf[:min(len(buf), big-got)])
				if err != nil {
					t.Fatal(err)
				}
				if bytes.Count(buf[:n], []byte("x")) != n {
					t.Fatalf("reply bytes corrupted at %d", got)
				}
				got += n
			}
			if line, err := r.ReadString('\n'); err != nil || line != "\n" {
				t.Fatalf("end of big reply %q, %v", line, err)
			}
			if line, err := r.ReadString('\n'); err != nil || line != "+after\r\n" {
				t.Fatalf("reply after big one %q, %v", line, err)
			}
		})
	}
}

func TestSlowConsumerDisconnectedOthersServed(t *testing.T) {
	cfg := cfgFor(t, "unix")
	cfg.MaxOutput = 1 << 20
	cfg.StallTimeout = 100 * time.Millisecond
	l, h := startLoop(t, cfg)
	slow := dial(t, l)
	// Ask for far more than MaxOutput plus the socket buffers, never read.
	go func() {
		for range 200 {
			if _, err := slow.Write([]byte("BIG 65536\n")); err != nil {
				return
			}
		}
	}()
	testkit.Eventually(t, 30*time.Second, "the slow consumer to be disconnected", func() (bool, string) { return l.stats().SlowConsumers == 1, "" })
	other := dial(t, l)
	fmt.Fprintf(other, "still-here\n")
	if line, err := bufio.NewReader(other).ReadString('\n'); err != nil || line != "+still-here\r\n" {
		t.Fatalf("other client got %q, %v", line, err)
	}
	other.Close()
	testkit.Eventually(t, 30*time.Second, "sessions to close", func() (bool, string) { return h.closed.Load() == h.open.Load() && l.stats().Clients == 0, "" })
}

func TestInputLimitDisconnects(t *testing.T) {
	cfg := cfgFor(t, "tcp")
	cfg.MaxInput = 256 << 10
	l, _ := startLoop(t, cfg)
	c := dial(t, l)
	go c.Write(bytes.Repeat([]byte("y"), 2<<20)) // no newline: one ever-growing request
	reply, _ := io.ReadAll(c)
	if !strings.HasPrefix(string(reply), "-ERR Protocol error: request too large") {
		t.Fatalf("got %q", reply)
	}
	// The refusal and the end of the stream came while the client was
	// still sending: the server lingers (reading and dropping) until the
	// client closes.
	c.Close()
	testkit.Eventually(t, 30*time.Second, "the refused client to be closed", func() (bool, string) { return l.stats().Clients == 0, "" })
	if st := l.stats(); st.InputTooLarge != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestMaxClients(t *testing.T) {
	cfg := cfgFor(t, "unix")
	cfg.MaxClients = 2
	l, _ := startLoop(t, cfg)
	a, b := dial(t, l), dial(t, l)
	testkit.Eventually(t, 30*time.Second, "two clients", func() (bool, string) { return l.stats().Clients == 2, "" })
	c := dial(t, l)
	reply, _ := io.ReadAll(c)
	if string(reply) != "-ERR max number of clients reached\r\n" {
		t.Fatalf("third client got %q", reply)
	}
	for _, cc := range []net.Conn{a, b} {
		fmt.Fprintf(cc, "ok\n")
		if line, err := bufio.NewReader(cc).ReadString('\n'); err != nil || line != "+ok\r\n" {
			t.Fatalf("got %q, %v", line, err)
		}
	}
	if st := l.stats(); st.Rejected != 1 {
		t.Fatalf("Rejected = %d", st.Rejected)
	}
}

func TestIdleTimeout(t *testing.T) {
	cfg := cfgFor(t, "tcp")
	cfg.IdleTimeout = 50 * time.Millisecond
	l, _ := startLoop(t, cfg)
	c := dial(t, l)
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("read on idle client: %v, want EOF", err)
	}
	if st := l.stats(); st.IdleTimeouts != 1 {
		t.Fatalf("IdleTimeouts = %d", st.IdleTimeouts)
	}
}

func TestQuitAnswersThenCloses(t *testing.T) {
	l, h := startLoop(t, cfgFor(t, "unix"))
	c := dial(t, l)
	fmt.Fprintf(c, "a\nQUIT\nnever\n")
	reply, err := io.ReadAll(c)
	if err != nil || string(reply) != "+a\r\n+BYE\r\n" {
		t.Fatalf("got %q, %v", reply, err)
	}
	testkit.Eventually(t, 30*time.Second, "the session to close", func() (bool, string) { return h.closed.Load() == 1, "" })
}

func TestHalfFrameThenVanish(t *testing.T) {
	l, h := startLoop(t, cfgFor(t, "unix"))
	for range 100 {
		c := dial(t, l)
		c.Write([]byte("half a reque"))
		c.Close()
	}
	testkit.Eventually(t, 30*time.Second, "every session to close", func() (bool, string) { return h.closed.Load() == 100 && l.stats().Clients == 0, "" })
}

func TestShutdownHalfClosedClientStillAnswered(t *testing.T) {
	l, _ := startLoop(t, cfgFor(t, "unix"))
	c := dial(t, l)
	fmt.Fprintf(c, "one\ntwo\n")
	c.(*net.UnixConn).CloseWrite()
	reply, err := io.ReadAll(c)
	if err != nil || string(reply) != "+one\r\n+two\r\n" {
		t.Fatalf("got %q, %v", reply, err)
	}
}

func TestCloseAnswersWhatWasRead(t *testing.T) {
	h := &lineHandler{}
	s, err := Listen(Config{Network: "unix", Address: filepath.Join(t.TempDir(), "g.sock"), Handler: h})
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("unix", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	testkit.Eventually(t, 30*time.Second, "the client to be accepted", func() (bool, string) { s.Poll(0); return s.Clients() == 1, "" })
	fmt.Fprintf(c, "late\n") // sent, never polled: Close must still answer it
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	reply, _ := io.ReadAll(c)
	if string(reply) != "+late\r\n" {
		t.Fatalf("got %q", reply)
	}
	if _, err := os.Stat(s.Addr()); !os.IsNotExist(err) {
		t.Fatalf("socket file left behind: %v", err)
	}
	if _, err := net.Dial("unix", s.Addr()); err == nil {
		t.Fatal("still accepting after Close")
	}
	if h.closed.Load() != 1 {
		t.Fatalf("sessions closed %d", h.closed.Load())
	}
}

func TestSocketFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "g.sock")

	// A stale socket file (its server died without removing it) is replaced.
	os.MkdirAll(filepath.Dir(path), 0o700)
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	l, _ := startLoop(t, Config{Network: "unix", Address: path})
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o660 {
		t.Fatalf("socket mode %v, want 0660", fi.Mode().Perm())
	}
	// A live server on the path is not stolen from.
	if _, err := Listen(Config{Network: "unix", Address: path, Handler: &lineHandler{}}); !errors.Is(err, ErrAddrInUse) {
		t.Fatalf("second Listen: %v, want ErrAddrInUse", err)
	}
	c := dial(t, l)
	fmt.Fprintf(c, "alive\n")
	if line, _ := bufio.NewReader(c).ReadString('\n'); line != "+alive\r\n" {
		t.Fatalf("first server broken after the second Listen: %q", line)
	}
	// A regular file is never removed.
	reg := filepath.Join(dir, "file")
	os.WriteFile(reg, []byte("data"), 0o600)
	if _, err := Listen(Config{Network: "unix", Address: reg, Handler: &lineHandler{}}); !errors.Is(err, ErrAddrInUse) {
		t.Fatalf("Listen on a regular file: %v", err)
	}
	if b, _ := os.ReadFile(reg); string(b) != "data" {
		t.Fatal("regular file clobbered")
	}
	// An explicit mode.
	path2 := filepath.Join(dir, "g2.sock")
	s2, err := Listen(Config{Network: "unix", Address: path2, Handler: &lineHandler{}, SocketMode: 0o600})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if fi, _ := os.Stat(path2); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode().Perm())
	}
}

func TestTCPBindsLoopbackAndReportsPort(t *testing.T) {
	s, err := Listen(Config{Network: "tcp", Address: ":0", Handler: &lineHandler{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	host, port, _ := net.SplitHostPort(s.Addr())
	if host != "127.0.0.1" || port == "0" {
		t.Fatalf("Addr = %s, want 127.0.0.1 and a real port", s.Addr())
	}
	if _, err := Listen(Config{Network: "tcp", Address: s.Addr(), Handler: &lineHandler{}}); !errors.Is(err, ErrAddrInUse) ||
		strings.Contains(err.Error(), "uds") {
		t.Fatalf("second Listen on %s: %v; want ErrAddrInUse, and no word of uds about a TCP listener", s.Addr(), err)
	}
	if _, err := Listen(Config{Network: "tcp", Address: "nohost.invalid:1", Handler: &lineHandler{}}); !errors.Is(err, ErrConfig) ||
		strings.Contains(err.Error(), "uds") {
		t.Fatalf("Listen on a host that does not resolve: %v; want ErrConfig, and no word of uds about a TCP listener", err)
	}
	if s.Name() != "tcp/resp" || s.Target().String() != "tcp://"+s.Addr()+"?proto=resp" {
		t.Fatalf("Name %q Target %q", s.Name(), s.Target())
	}
}

// TestTCPWildcardsOfBothFamiliesOnOnePort: 0.0.0.0:P and [::]:P listen
// side by side, as redis.conf's default "bind * -::*" asks (the IPv6
// socket is IPv6-only, as Redis makes it).
func TestTCPWildcardsOfBothFamiliesOnOnePort(t *testing.T) {
	fd, err := unix.Socket(unix.AF_INET6, unix.SOCK_STREAM, 0)
	testkit.Require(t, "an IPv6 socket", err)
	unix.Close(fd)
	s4, err := Listen(Config{Network: "tcp", Address: "0.0.0.0:0", Handler: &lineHandler{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s4.Close()
	_, port, _ := net.SplitHostPort(s4.Addr())
	s6, err := Listen(Config{Network: "tcp", Address: net.JoinHostPort("::", port), Handler: &lineHandler{}})
	if err != nil {
		t.Fatalf("[::]:%s beside 0.0.0.0:%s: %v", port, port, err)
	}
	s6.Close()
}

func TestListenErrors(t *testing.T) {
	for _, c := range []Config{
		{Network: "unix", Address: "/tmp/x.sock"}, // no handler
		{Network: "udp", Address: "127.0.0.1:0", Handler: &lineHandler{}},
		{Network: "tcp", Address: "127.0.0.1", Handler: &lineHandler{}},
		{Network: "unix", Address: "/" + strings.Repeat("a", 200), Handler: &lineHandler{}},
	} {
		if _, err := Listen(c); !errors.Is(err, ErrConfig) {
			t.Errorf("Listen(%+v) = %v, want ErrConfig", c, err)
		}
	}
}

func roundTrip(s *Server, fd int, req, buf []byte) int {
	unix.Write(fd, req)
	for {
		s.Poll(0)
		if n, err := unix.Read(fd, buf); err == nil && n > 0 {
			return n
		}
	}
}

func TestRoundTripDoesNotAllocateOnServer(t *testing.T) {
	s, err := Listen(Config{Network: "unix", Address: filepath.Join(t.TempDir(), "g.sock"), Handler: &lineHandler{}, CheckEvery: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fd := wiretest.RawUnix(t, s.Addr())
	defer unix.Close(fd)
	req, buf := []byte("ping\n"), make([]byte, 64)
	roundTrip(s, fd, req, buf) // accept, first buffers
	if n := roundTrip(s, fd, req, buf); string(buf[:n]) != "+ping\r\n" {
		t.Fatalf("got %q", buf[:n])
	}
	if a := testing.AllocsPerRun(1000, func() { roundTrip(s, fd, req, buf) }); a != 0 {
		t.Fatalf("%v allocations per round trip", a)
	}
}

// BenchmarkRoundTrip is one request and reply through Poll over a Unix
// socket, client and server on one goroutine: the transport's own cost
// plus two syscalls each way.
func BenchmarkRoundTrip(b *testing.B) {
	s, err := Listen(Config{Network: "unix", Address: filepath.Join(b.TempDir(), "g.sock"), Handler: &lineHandler{}, CheckEvery: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	fd := wiretest.RawUnix(b, s.Addr())
	defer unix.Close(fd)
	req, buf := []byte("ping\n"), make([]byte, 64)
	roundTrip(s, fd, req, buf)
	b.ReportAllocs()
	for b.Loop() {
		roundTrip(s, fd, req, buf)
	}
}

// BenchmarkPollQuiet is the cost Poll adds to a loop cycle when no socket
// has work: with CheckEvery=1 every cycle makes an epoll_wait syscall,
// with the default most cycles only count.
func BenchmarkPollQuiet(b *testing.B) {
	for _, every := range []int{1, DefaultCheckEvery, 64} {
		b.Run(fmt.Sprintf("CheckEvery=%d", every), func(b *testing.B) {
			s, err := Listen(Config{Network: "unix", Address: filepath.Join(b.TempDir(), "g.sock"), Handler: &lineHandler{}, CheckEvery: every})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.ReportAllocs()
			for b.Loop() {
				s.Poll(0)
			}
		})
	}
}

// TestRepliesBeyondOutputLimitForAReadingClient pipelines requests whose
// replies add up to ten times MaxOutput from a client that reads them all:
// the server holds the requests back while replies drain, and answers
// every one in order.
func TestRepliesBeyondOutputLimitForAReadingClient(t *testing.T) {
	cfg := cfgFor(t, "unix")
	cfg.MaxOutput = 1 << 20
	cfg.StallTimeout = time.Hour // however slowly the scheduler lets this client read
	l, _ := startLoop(t, cfg)
	c := dial(t, l)
	c.SetDeadline(time.Now().Add(60 * time.Second)) // a lost wake-up fails, not hangs
	go func() {
		var req bytes.Buffer
		for range 100 {
			req.WriteString("BIG 100000\n")
		}
		req.WriteString("end\n")
		c.Write(req.Bytes())
	}()
	r := bufio.NewReaderSize(c, 1<<20)
	for i := range 100 {
		line, err := r.ReadSlice('\n')
		if err != nil || len(line) != 100001 {
			t.Fatalf("reply %d: %d bytes, %v", i, len(line), err)
		}
	}
	if line, err := r.ReadString('\n'); err != nil || line != "+end\r\n" {
		t.Fatalf("last reply %q, %v", line, err)
	}
	if st := l.stats(); st.SlowConsumers != 0 {
		t.Fatalf("a reading client was disconnected: %+v", st)
	}
}

// manualServer listens on a Unix socket and is polled by the test itself
// with a clock the test chooses, so a loop "held off the CPU" is simulated
// by jumping now forward: nothing depends on real time.
func manualServer(t *testing.T, cfg Config) *Server {
	t.Helper()
	s, err := Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestReadyClientNotDroppedAsIdle: a client idle past IdleTimeout whose
// request is waiting in its socket when the loop gets to run is served,
// not dropped; the idle policy applies after the sockets are handled.
func TestReadyClientNotDroppedAsIdle(t *testing.T) {
	const t0 = int64(1e12)
	h := &lineHandler{}
	idle := time.Second
	s := manualServer(t, Config{Network: "unix", Address: filepath.Join(t.TempDir(), "g.sock"), Handler: h, IdleTimeout: idle})
	c, err := net.Dial("unix", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	testkit.Eventually(t, 30*time.Second, "the client to be accepted", func() (bool, string) { s.Poll(t0); return s.Clients() == 1, "" })
	// A Unix socket write is in the server's receive queue when it returns.
	if _, err := fmt.Fprintf(c, "late\n"); err != nil {
		t.Fatal(err)
	}
	s.Poll(t0 + 3*int64(idle)) // the loop wakes up long after the timeout
	var st Stats
	if s.Stats(&st); st.IdleTimeouts != 0 || s.Clients() != 1 {
		t.Fatalf("ready client dropped as idle: IdleTimeouts=%d Clients=%d", st.IdleTimeouts, s.Clients())
	}
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "+late\r\n" {
		t.Fatalf("reply %q, %v", line, err)
	}
	// Silent past the timeout with nothing ready: now it goes.
	s.Poll(t0 + 6*int64(idle))
	if s.Stats(&st); st.IdleTimeouts != 1 || s.Clients() != 0 {
		t.Fatalf("idle client kept: IdleTimeouts=%d Clients=%d", st.IdleTimeouts, s.Clients())
	}
}

// TestWritableClientNotDroppedAsStalled: a client whose replies stalled
// past StallTimeout but which has since read them, so its socket is
// writable when the loop gets to run, gets more of its replies instead of
// being dropped as a slow consumer.
func TestWritableClientNotDroppedAsStalled(t *testing.T) {
	const t0 = int64(1e12)
	const size = 4 << 20 // far more than the socket buffers hold
	h := &lineHandler{}
	stall := time.Second
	s := manualServer(t, Config{Network: "unix", Address: filepath.Join(t.TempDir(), "g.sock"), Handler: h,
		MaxOutput: 64 << 10, StallTimeout: stall})
	c, err := net.Dial("unix", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := fmt.Fprintf(c, "BIG %d\n", size); err != nil {
		t.Fatal(err)
	}
	pending := func() int {
		for _, cn := range s.conns {
			if cn != nil {
				return cn.pendBytes
			}
		}
		return 0
	}
	// Poll until the reply is queued and the socket buffers are full.
	var last int
	testkit.Eventually(t, 30*time.Second, "the reply to back up", func() (bool, string) {
		s.Poll(t0)
		p := pending()
		full := p >= s.cfg.MaxOutput && p == last
		last = p
		return full, ""
	})
	// The client reads everything written so far: its socket is writable.
	written := size + 1 - pending()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.ReadFull(c, make([]byte, written)); err != nil {
		t.Fatalf("reading the %d bytes written: %v", written, err)
	}
	s.Poll(t0 + 3*int64(stall)) // the loop wakes up long after the stall timeout
	var st Stats
	if s.Stats(&st); st.SlowConsumers != 0 || s.Clients() != 1 {
		t.Fatalf("writable client dropped: SlowConsumers=%d Clients=%d", st.SlowConsumers, s.Clients())
	}
	if p := pending(); p >= size+1-written {
		t.Fatalf("nothing more written: %d bytes still pending", p)
	}
}
