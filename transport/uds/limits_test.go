package uds

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/sbe"
	"github.com/goblin-kv/goblin/transport"
)

// clientMem returns what the listener's clients hold in buffers, from the
// loop goroutine.
func clientMem(l *loop) (held int64, clients int) {
	l.do(func() {
		for _, c := range l.s.conns {
			if c != nil {
				held += int64(cap(c.in)*boolInt(!c.inShared) + c.pendCap)
				clients++
			}
		}
	})
	return held, clients
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestServedClientsHoldNoBuffers: 100 clients that each make round trips,
// small and with a 256 KiB reply, hold no buffer of their own afterwards:
// they were served from the listener's shared buffers, and the budget
// agrees.
func TestServedClientsHoldNoBuffers(t *testing.T) {
	l, _ := startLoop(t, cfgFor(t, "unix"))
	for i := 0; i < 100; i++ {
		c := dial(t, l) // stays connected until the test ends
		r := bufio.NewReader(c)
		fmt.Fprintf(c, "hello%d\nBIG %d\n", i, 256<<10)
		if line, err := r.ReadString('\n'); err != nil || line != fmt.Sprintf("+hello%d\r\n", i) {
			t.Fatalf("client %d: %q %v", i, line, err)
		}
		if n, err := io.CopyN(io.Discard, r, 256<<10+1); err != nil {
			t.Fatalf("client %d: %d bytes of the big reply: %v", i, n, err)
		}
	}
	held, clients := clientMem(l)
	st := l.stats()
	var bs BudgetStats
	l.do(func() { l.s.budget.Stats(&bs) })
	t.Logf("%d clients hold %d bytes; budget used %d, peak %d, released %d", clients, held, bs.Used, bs.Peak, bs.Released)
	if clients != 100 || held != 0 || st.Buffered != 0 || bs.Used != 0 {
		t.Fatalf("%d clients hold %d bytes (stats %d, budget %d), want 0", clients, held, st.Buffered, bs.Used)
	}
}

// TestBudgetEvictsTheBiggestClient: with a 1 MiB budget, a client holding
// a 900 KiB unfinished request and another holding 300 KiB pass it
// together; the bigger one is told why and disconnected, the smaller one
// is served on.
func TestBudgetEvictsTheBiggestClient(t *testing.T) {
	cfg := cfgFor(t, "unix")
	cfg.Budget = &Budget{Limit: 1 << 20}
	l, _ := startLoop(t, cfg)
	small, big := dial(t, l), dial(t, l)
	small.Write(bytes.Repeat([]byte("s"), 300<<10)) // no newline: an unfinished request
	testkit.Eventually(t, 30*time.Second, "the small client's request to be held", func() (bool, string) { h, _ := clientMem(l); return h >= 300<<10, "" })
	go big.Write(bytes.Repeat([]byte("b"), 900<<10))
	reply, _ := io.ReadAll(big)
	if !strings.HasPrefix(string(reply), "-ERR client memory limit reached") {
		t.Fatalf("the big client got %q", reply)
	}
	fmt.Fprintf(small, "\n")
	line, err := bufio.NewReaderSize(small, 1<<20).ReadString('\n')
	if err != nil || len(line) != 300<<10+3 {
		t.Fatalf("the small client got %d bytes, %v", len(line), err)
	}
	st := l.stats()
	var bs BudgetStats
	l.do(func() { l.s.budget.Stats(&bs) })
	t.Logf("stats: %+v; budget %+v", st, bs)
	if st.Evicted != 1 || bs.Evicted != 1 || st.Clients != 1 || bs.Peak > 1<<20 {
		t.Fatalf("evicted %d (budget %d), %d clients left, peak %d bytes", st.Evicted, bs.Evicted, st.Clients, bs.Peak)
	}
}

// TestBudgetSharedByListeners: one budget spans two listeners; the
// biggest client of either goes.
func TestBudgetSharedByListeners(t *testing.T) {
	b := &Budget{Limit: 1 << 20}
	cfgA := cfgFor(t, "unix")
	cfgA.Budget = b
	la, _ := startLoop(t, cfgA)
	// The second listener is polled on la's goroutine too: one budget,
	// one owner.
	sb, err := Listen(Config{Network: "tcp", Address: "127.0.0.1:0", Handler: &lineHandler{}, Budget: b})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			la.do(func() { sb.Poll(time.Now().UnixNano()) })
		}
	}()
	t.Cleanup(func() { close(stop); wg.Wait(); la.do(func() { sb.Close() }) })
	a := dial(t, la)
	a.Write(bytes.Repeat([]byte("a"), 700<<10))
	testkit.Eventually(t, 30*time.Second, "the first client's request to be held", func() (bool, string) { h, _ := clientMem(la); return h >= 700<<10, "" })
	c, err := net.Dial("tcp", sb.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write(bytes.Repeat([]byte("c"), 500<<10))
	reply, _ := io.ReadAll(a)
	if !strings.HasPrefix(string(reply), "-ERR client memory limit reached") {
		t.Fatalf("the bigger client, on the other listener, got %q", reply)
	}
}

// TestPassOutputSharesTheLoop: a client whose pipelined requests ask for
// 6.4 MB of replies gets at most PassOutput (plus one reply) per Poll, so
// a client that sent one request at the same moment is answered in the
// first Poll, and the first client still gets every reply, in order.
func TestPassOutputSharesTheLoop(t *testing.T) {
	const t0 = int64(1e12)
	s := manualServer(t, Config{Network: "unix", Address: filepath.Join(t.TempDir(), "g.sock"), Handler: &lineHandler{},
		CheckEvery: 1, PassOutput: 64 << 10, StallTimeout: time.Hour})
	greedy, err := net.Dial("unix", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer greedy.Close()
	other, err := net.Dial("unix", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	testkit.Eventually(t, 30*time.Second, "both clients to be accepted", func() (bool, string) { s.Poll(t0); return s.Clients() == 2, "" })
	var req bytes.Buffer
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&req, "BIG 65536\n")
	}
	req.WriteString("end\n")
	greedy.Write(req.Bytes())
	other.Write([]byte("hi\n"))
	s.Poll(t0)
	var produced int
	for _, c := range s.conns {
		if c != nil && c.pass == s.pass && c.passOut > 0 && c.passOut > produced {
			produced = c.passOut
		}
	}
	if produced > 64<<10+65537 {
		t.Fatalf("one client produced %d reply bytes in one Poll, want at most PassOutput plus one reply", produced)
	}
	// No epoll event announces the requests left at PassOutput: the
	// deadline says the loop must poll again at once (no park, no rest).
	if d := s.Deadline(); d > t0 {
		t.Errorf("Deadline() = now+%d with %d clients' requests left at PassOutput, want now at once", d-t0, len(s.backlog))
	}
	other.SetReadDeadline(time.Now().Add(10 * time.Second))
	if line, err := bufio.NewReader(other).ReadString('\n'); err != nil || line != "+hi\r\n" {
		t.Fatalf("the other client, after one Poll: %q %v", line, err)
	}
	// The greedy client gets everything as the loop goes on.
	done := make(chan error, 1)
	go func() {
		r := bufio.NewReaderSize(greedy, 1<<20)
		for i := 0; i < 100; i++ {
			line, err := r.ReadSlice('\n')
			if err != nil || len(line) != 65537 {
				done <- fmt.Errorf("reply %d: %d bytes, %v", i, len(line), err)
				return
			}
		}
		line, err := r.ReadString('\n')
		if err == nil && line != "+end\r\n" {
			err = fmt.Errorf("last reply %q", line)
		}
		done <- err
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			var st Stats
			if s.Stats(&st); st.Deferred == 0 {
				t.Fatalf("no request waited for a later Poll: %+v", st)
			}
			return
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the greedy client's replies did not all arrive")
		}
		s.Poll(t0)
	}
}

// sniffHandler records the protocol each session was opened with.
type sniffHandler struct {
	lineHandler
	mu     sync.Mutex
	protos []proto.Protocol
}

func (h *sniffHandler) OpenStream(p proto.Protocol) transport.StreamSession {
	h.mu.Lock()
	h.protos = append(h.protos, p)
	h.mu.Unlock()
	return h.lineHandler.OpenStream(p)
}

// TestProtocolRecognisedPerConnection: a listener announced as RESP opens
// an SBE session for a client whose first bytes are a SOFH header, and a
// RESP one for a client sending text, however the bytes are split.
func TestProtocolRecognisedPerConnection(t *testing.T) {
	h := &sniffHandler{}
	cfg := cfgFor(t, "tcp")
	cfg.Handler = h
	l, _ := startLoop(t, cfg)
	sofh := []byte{0, 0, 0, 6, 0xEB, 0x50}
	for _, c := range []struct {
		first [][]byte
		want  proto.Protocol
	}{
		{[][]byte{sofh}, proto.SBE},
		{[][]byte{sofh[:2], sofh[2:5], sofh[5:]}, proto.SBE},
		{[][]byte{[]byte("PI"), []byte("NG\n")}, proto.RESP},
		{[][]byte{[]byte("*1\r\n")}, proto.RESP},
	} {
		h.mu.Lock()
		h.protos = nil
		h.mu.Unlock()
		conn := dial(t, l)
		for _, p := range c.first {
			conn.Write(p)
			time.Sleep(5 * time.Millisecond)
		}
		testkit.Eventually(t, 30*time.Second, "a session to open", func() (bool, string) { h.mu.Lock(); defer h.mu.Unlock(); return len(h.protos) == 1, "" })
		h.mu.Lock()
		got := h.protos[0]
		h.mu.Unlock()
		if got != c.want {
			t.Errorf("first bytes %q: session opened as %v, want %v", c.first, got, c.want)
		}
		conn.Close()
	}
}

// TestInputLimitSBEErrorFrame: an SBE client whose request passes
// MaxInput gets a framed SBE error reply naming the limit before the
// connection closes (it once closed without one; RESP clients got their
// error line already).
func TestInputLimitSBEErrorFrame(t *testing.T) {
	cfg := cfgFor(t, "unix")
	cfg.MaxInput = 256 << 10
	l, _ := startLoop(t, cfg)
	c := dial(t, l)
	hdr := make([]byte, 6)
	binary.BigEndian.PutUint32(hdr, 8<<20) // an 8 MiB frame, of which 2 MiB is sent
	binary.BigEndian.PutUint16(hdr[4:], sbe.EncodingTypeSBE10LE)
	go c.Write(append(hdr, make([]byte, 2<<20)...))
	answer, _ := io.ReadAll(c)
	msg, n, err := sbe.ReadFrame(answer, 0)
	if err != nil || n == 0 {
		t.Fatalf("reply %q is not an SBE frame: n %d, %v", answer, n, err)
	}
	var codec sbe.Codec
	var rep command.Reply
	if err := codec.DecodeReply(msg, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Status != command.Protocol || rep.Kind != command.Error || !strings.Contains(string(rep.Value), "request too large") {
		t.Fatalf("reply %+v %q", rep, rep.Value)
	}
	if st := l.stats(); st.InputTooLarge != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestSocketDirectoryInSharedDir: a socket directory inside a
// world-writable one is created 0700 and must be the server user's own:
// one another user owns, one others may write, or a link is refused.
func TestSocketDirectoryInSharedDir(t *testing.T) {
	shared := filepath.Join(t.TempDir(), "tmp")
	if err := os.Mkdir(shared, 0o1777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(shared, 0o1777)
	listen := func(dir string) error {
		s, err := Listen(Config{Network: "unix", Address: filepath.Join(dir, "g.sock"), Handler: &lineHandler{}})
		if err == nil {
			s.Close()
		}
		return err
	}
	own := filepath.Join(shared, "mine")
	if err := listen(own); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(own); fi.Mode().Perm() != 0o700 {
		t.Fatalf("created with mode %04o, want 0700", fi.Mode().Perm())
	}
	if err := listen(own); err != nil {
		t.Fatalf("a second start in its own directory: %v", err)
	}
	open := filepath.Join(shared, "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	link := filepath.Join(shared, "link")
	os.Symlink(own, link)
	cases := map[string]string{open: "may be written by other users", link: "is a symbolic link"}
	if os.Geteuid() == 0 {
		theirs := filepath.Join(shared, "theirs")
		os.Mkdir(theirs, 0o700)
		os.Chown(theirs, 65534, 65534)
		cases[theirs] = "belongs to uid 65534"
	} else {
		t.Log("not root: the directory of another user is tested by reliability's TestSocketSquatting only")
	}
	for dir, why := range cases {
		if err := listen(dir); !errors.Is(err, ErrUnsafeDir) || !strings.Contains(err.Error(), why) {
			t.Errorf("Listen in %s: %v, want ErrUnsafeDir saying %q", filepath.Base(dir), err, why)
		}
	}
}

// delayHandler's sessions answer lines like lineHandler's, and "WAIT ms"
// asks the transport to hold the client back that long.
type delayHandler struct{ lineHandler }

type delaySession struct {
	lineSession
	delay time.Duration
}

func (h *delayHandler) OpenStream(p proto.Protocol) transport.StreamSession {
	return &delaySession{lineSession: lineSession{&h.lineHandler}}
}

func (s *delaySession) Serve(in, out []byte, limit int) (int, []byte, bool) {
	i := bytes.IndexByte(in, '\n')
	if i < 0 {
		return 0, out, false
	}
	if ms, ok := strings.CutPrefix(string(in[:i]), "WAIT "); ok {
		d, _ := time.ParseDuration(ms + "ms")
		s.delay = d
		return i + 1, append(out, "+waiting\r\n"...), false
	}
	return s.lineSession.Serve(in[:i+1], out, limit)
}

func (s *delaySession) Delay() time.Duration { d := s.delay; s.delay = 0; return d }

// TestDelayerHoldsOneClientBack: a session that asks for a delay gets its
// reply at once, its next request only after the delay, and other clients
// are served meanwhile.
func TestDelayerHoldsOneClientBack(t *testing.T) {
	cfg := cfgFor(t, "unix")
	cfg.Handler = &delayHandler{}
	l, _ := startLoop(t, cfg)
	c, other := dial(t, l), dial(t, l)
	r := bufio.NewReader(c)
	start := time.Now()
	fmt.Fprintf(c, "WAIT 400\nafter\n")
	if line, err := r.ReadString('\n'); err != nil || line != "+waiting\r\n" {
		t.Fatalf("%q %v", line, err)
	}
	fmt.Fprintf(other, "meanwhile\n")
	if line, err := bufio.NewReader(other).ReadString('\n'); err != nil || line != "+meanwhile\r\n" {
		t.Fatalf("the other client: %q %v", line, err)
	}
	if line, err := r.ReadString('\n'); err != nil || line != "+after\r\n" {
		t.Fatalf("%q %v", line, err)
	}
	if waited := time.Since(start); waited < 400*time.Millisecond {
		t.Fatalf("the request after the delay was answered after %v, want at least 400ms", waited)
	}
}

// TestDeadlineWhileHeld: while a client's requests are held (a Delayer's
// delay), Deadline is the next scan, so a loop that dozes wakes for it;
// once the client is served again, or when a held client disconnects,
// Deadline is never.
func TestDeadlineWhileHeld(t *testing.T) {
	cfg := cfgFor(t, "unix")
	cfg.Handler = &delayHandler{}
	l, _ := startLoop(t, cfg)
	deadline := func() (held int, d, next int64) {
		l.do(func() { held, d, next = l.s.held, l.s.Deadline(), l.s.lastScan+int64(scanEvery)+1 })
		return
	}
	if held, d, _ := deadline(); held != 0 || d != math.MaxInt64 {
		t.Fatalf("no client: %d held, Deadline %d; want 0, never", held, d)
	}
	for _, hangUp := range []bool{false, true} {
		c := dial(t, l)
		r := bufio.NewReader(c)
		fmt.Fprintf(c, "WAIT 300\nafter\n")
		if line, err := r.ReadString('\n'); err != nil || line != "+waiting\r\n" {
			t.Fatalf("%q %v", line, err)
		}
		if held, d, next := deadline(); held != 1 || d != next {
			t.Fatalf("a client held: %d held, Deadline %d; want 1, the next scan %d", held, d, next)
		}
		if hangUp {
			c.Close()
			testkit.Eventually(t, 30*time.Second, "the held client's disconnection to release it", func() (bool, string) {
				held, d, _ := deadline()
				return held == 0 && d == math.MaxInt64, fmt.Sprintf("%d held, Deadline %d", held, d)
			})
			continue
		}
		if line, err := r.ReadString('\n'); err != nil || line != "+after\r\n" {
			t.Fatalf("%q %v", line, err)
		}
		if held, d, _ := deadline(); held != 0 || d != math.MaxInt64 {
			t.Fatalf("the client served again: %d held, Deadline %d; want 0, never", held, d)
		}
		c.Close()
	}
}

// TestPushWritesAtOnce: a push to a client with nothing queued goes
// straight to its socket (no block queued, no EPOLLOUT asked for), so a
// replica's stream pushed every loop cycle costs one write; a push behind
// queued bytes still queues, in order.
func TestPushWritesAtOnce(t *testing.T) {
	l, _ := startLoop(t, cfgFor(t, "unix"))
	c := dial(t, l)
	r := bufio.NewReader(c)
	fmt.Fprintf(c, "hello\n")
	if line, err := r.ReadString('\n'); err != nil || line != "+hello\r\n" {
		t.Fatalf("%q %v", line, err)
	}
	var queued, pend int
	var events uint32
	l.do(func() {
		for _, cn := range l.s.conns {
			if cn != nil && cn.sess != nil {
				if !l.s.push(cn, []byte("+pushed\r\n")) {
					t.Error("push refused")
				}
				queued, pend, events = len(cn.pend), cn.pendBytes, cn.events
			}
		}
	})
	if queued != 0 || pend != 0 || events&0x4 != 0 { // 0x4: EPOLLOUT
		t.Fatalf("after a push to an idle client: %d blocks, %d bytes queued, events %#x", queued, pend, events)
	}
	if line, err := r.ReadString('\n'); err != nil || line != "+pushed\r\n" {
		t.Fatalf("pushed: %q %v", line, err)
	}
}
