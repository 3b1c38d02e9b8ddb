package ring

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/idle"
	"github.com/goblin-kv/goblin/internal/shm"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/transport"
)

// payloadFor is a deterministic message of varying length for sequence i.
func payloadFor(i int64, max int) []byte {
	n := 8 + int(i*7919%int64(max-8))
	b := make([]byte, n)
	binary.LittleEndian.PutUint64(b, uint64(i))
	for j := 8; j < n; j++ {
		b[j] = byte(i) ^ byte(j)
	}
	return b
}

func TestRingWrapAroundAndFull(t *testing.T) {
	const n, size = 4, 128
	mem := make([]byte, ringBytes(n, size))
	p := newProducer(mem, 0, n, size)
	c := newConsumer(mem, 0, n, size)
	var seq, got int64
	for round := 0; round < 50; round++ {
		k := 1 + round%n
		for range k {
			if !p.offer(payloadFor(seq, p.maxBytes)) {
				t.Fatalf("offer %d refused with %d in flight", seq, seq-got)
			}
			seq++
		}
		if k == n && p.offer([]byte("x")) {
			t.Fatal("offer into a full ring succeeded")
		}
		for range k {
			msg, tooLarge, ok := c.peek()
			if !ok || tooLarge {
				t.Fatalf("peek %d: ok=%v tooLarge=%v", got, ok, tooLarge)
			}
			if want := payloadFor(got, p.maxBytes); !bytes.Equal(msg, want) {
				t.Fatalf("message %d: got %d bytes, want %d", got, len(msg), len(want))
			}
			c.release()
			got++
		}
		if _, _, ok := c.peek(); ok {
			t.Fatal("peek on an empty ring found a message")
		}
	}
	if got < 3*n {
		t.Fatalf("only %d messages, the ring never wrapped", got)
	}
}

// TestRingTagWraps runs sequence numbers through 2^32, where the 32-bit
// tags in the header words wrap to 0.
func TestRingTagWraps(t *testing.T) {
	const n, size = 4, 64
	mem := make([]byte, ringBytes(n, size))
	p := newProducer(mem, 0, n, size)
	c := newConsumer(mem, 0, n, size)
	start := int64(1)<<32 - 10
	p.next, p.limit, c.next, c.published = start, start+n, start, start
	shm.StoreInt64Release(mem, offConsumed, start)
	for seq := start; seq < start+40; seq++ {
		if !p.offer(payloadFor(seq, p.maxBytes)) {
			t.Fatalf("offer %d refused", seq)
		}
		if _, _, ok := c.peek(); !ok {
			t.Fatalf("message %d not seen", seq)
		}
		msg, _, _ := c.peek()
		if !bytes.Equal(msg, payloadFor(seq, p.maxBytes)) {
			t.Fatalf("message %d wrong", seq)
		}
		c.release()
		if _, _, ok := c.peek(); ok {
			t.Fatalf("after %d (tag %#x) an empty ring shows a message", seq, uint32(seq+1))
		}
	}
}

// TestRingConcurrent runs a producer and a consumer goroutine over plain Go
// memory, where the race detector does see every access: the acquire/release
// pairs must order the payload writes before the reads.
func TestRingConcurrent(t *testing.T) {
	const n, size = 8, 256
	total := int64(100_000)
	if testing.Short() {
		total = 20_000
	}
	mem := make([]byte, ringBytes(n, size))
	p := newProducer(mem, 0, n, size)
	c := newConsumer(mem, 0, n, size)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := int64(0); i < total; {
			if p.offer(payloadFor(i, p.maxBytes)) {
				i++
			} else {
				runtime.Gosched()
			}
		}
	}()
	for i := int64(0); i < total; {
		msg, _, ok := c.peek()
		if !ok {
			c.commit()
			runtime.Gosched()
			continue
		}
		if want := payloadFor(i, p.maxBytes); !bytes.Equal(msg, want) {
			t.Fatalf("message %d torn or out of order: got seq %d len %d, want len %d",
				i, binary.LittleEndian.Uint64(msg), len(msg), len(want))
		}
		c.release()
		i++
	}
	<-done
}

// echo is a Handler whose sessions answer every message with itself, or
// with a reply of the size the message asks for ("big N").
type echo struct{ open, closed atomic.Int64 }

type echoSession struct{ h *echo }

func (h *echo) OpenMessage(proto.Protocol) transport.MessageSession {
	h.open.Add(1)
	return echoSession{h}
}
func (s echoSession) Close() { s.h.closed.Add(1) }
func (s echoSession) ServeMessage(msg, out []byte) ([]byte, bool) {
	if rest, ok := bytes.CutPrefix(msg, []byte("big ")); ok {
		var n int
		for _, d := range rest {
			n = n*10 + int(d-'0')
		}
		return append(out, bytes.Repeat([]byte{'b'}, n)...), false
	}
	if bytes.Equal(msg, []byte("quit")) {
		return append(out, "bye"...), true
	}
	return append(out, msg...), false
}

// loop polls srv on its own goroutine until stopped, yielding when idle so
// tests behave on a busy two-core machine. Stop returns only once the loop
// goroutine is done with srv.
type loop struct {
	srv  *Server
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex // held by the loop while polling; tests take it to read Stats
}

func startLoop(t testing.TB, srv *Server) *loop {
	l := &loop{srv: srv, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for {
			select {
			case <-l.stop:
				return
			default:
			}
			l.mu.Lock()
			n := srv.Poll(mono())
			l.mu.Unlock()
			if n == 0 {
				runtime.Gosched()
			}
		}
	}()
	t.Cleanup(l.halt)
	return l
}

func (l *loop) halt() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	<-l.done
}

func (l *loop) stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	var st Stats
	l.srv.Stats(&st)
	return st
}

func listenTest(t testing.TB, o Options) (*Server, string) {
	t.Helper()
	if o.Dir == "" {
		o.Dir = filepath.Join(t.TempDir(), "ring")
	}
	if o.Handler == nil {
		o.Handler = &echo{}
	}
	srv, err := Listen(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, o.Dir
}

func dialTest(t testing.TB, dir string, o DialOptions) *Conn {
	t.Helper()
	if o.Wait == idle.Spin {
		o.Wait = idle.Yield // the test machine is shared: do not hog a core
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func roundTrip(t testing.TB, c *Conn, msg string) string {
	t.Helper()
	if err := c.Write([]byte(msg)); err != nil {
		t.Fatalf("write %q: %v", msg, err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	got, err := c.ReadAppend(nil)
	if err != nil {
		t.Fatalf("read reply to %q: %v", msg, err)
	}
	return string(got)
}

func ringFiles(t testing.TB, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, filePrefix+"*"+fileSuffix))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// ringMaps counts this process's mappings of ring memfds: two per client
// while both the server and the client (both in this process) map it.
func ringMaps(t testing.TB) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "/memfd:"+memfdName)
}

func TestServeAndReclaim(t *testing.T) {
	h := &echo{}
	srv, dir := listenTest(t, Options{Handler: h, Records: 8, RecordSize: 256})
	l := startLoop(t, srv)
	a := dialTest(t, dir, DialOptions{})
	b := dialTest(t, dir, DialOptions{Wait: idle.Backoff})
	if got := roundTrip(t, a, "hello"); got != "hello" {
		t.Fatalf("a got %q", got)
	}
	if got := roundTrip(t, b, "world"); got != "world" {
		t.Fatalf("b got %q", got)
	}
	if files := ringFiles(t, dir); len(files) != 0 {
		t.Fatalf("ring files %v: the rings live in memfds", files)
	}
	if n := ringMaps(t); n != 4 {
		t.Fatalf("%d ring memfd mappings with two clients, want 4 (server's and client's)", n)
	}
	for _, f := range []string{filepath.Join(dir, socketName), filepath.Join(dir, lockName)} {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", f, st.Mode().Perm())
		}
	}
	// Pipelined: more requests than records, with replies read as we go.
	for i := 0; i < 100; i++ {
		if got := roundTrip(t, a, strings.Repeat("x", i)); got != strings.Repeat("x", i) {
			t.Fatalf("round %d: got %d bytes", i, len(got))
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Write([]byte("x")); !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("write after close: %v", err)
	}
	testkit.Eventually(t, 10*time.Second, "the closed client's ring to be reclaimed", func() (bool, string) {
		return ringMaps(t) == 2 && l.stats().Clients == 1, ""
	})
	if got := roundTrip(t, b, "still here"); got != "still here" {
		t.Fatalf("b after a left: %q", got)
	}
	l.halt()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		ents, _ := os.ReadDir(dir)
		t.Fatalf("directory survives a clean shutdown: %v %v", err, ents)
	}
	if h.open.Load() != 2 || h.closed.Load() != 2 {
		t.Fatalf("sessions opened %d closed %d, want 2 and 2", h.open.Load(), h.closed.Load())
	}
	// The server closed: b is told so, not left waiting.
	b.SetDeadline(time.Now().Add(10 * time.Second))
	b.Write([]byte("anyone?"))
	if _, err := b.ReadAppend(nil); !errors.Is(err, transport.ErrServerGone) {
		t.Fatalf("read after server close: %v, want ErrServerGone", err)
	}
}

// TestLongMessages sends messages around every fragment boundary of a
// small ring, up to many times the whole ring, and back: each comes back
// byte for byte, and the ring goes on carrying one-record messages.
func TestLongMessages(t *testing.T) {
	const records, size = 4, 128
	srv, dir := listenTest(t, Options{Records: records, RecordSize: size, MaxMessage: 100 << 10})
	l := startLoop(t, srv)
	c := dialTest(t, dir, DialOptions{})
	payload := size - recHeader
	if c.MaxMessage() != 100<<10 {
		t.Fatalf("MaxMessage %d, want the server's 100 KiB", c.MaxMessage())
	}
	sizes := []int{0, 1, payload - 1, payload, payload + 1, 2*payload - fragPrefix, 2*payload - fragPrefix + 1,
		records * payload, records*payload + 1, 10 * records * payload, 100<<10 - 1, 100 << 10}
	for _, n := range sizes {
		msg := make([]byte, n)
		for i := range msg {
			msg[i] = byte(i*7 + n)
		}
		if got := roundTrip(t, c, string(msg)); got != string(msg) {
			t.Fatalf("%d-byte message came back as %d bytes (equal prefix %d)", n, len(got), commonPrefix(got, string(msg)))
		}
	}
	// Replies longer than the ring, asked for by short requests.
	for _, n := range []int{payload + 1, 3 * records * payload} {
		if got := roundTrip(t, c, "big "+strconv.Itoa(n)); got != strings.Repeat("b", n) {
			t.Fatalf("reply of %d bytes came back as %d", n, len(got))
		}
	}
	st := l.stats()
	if st.FragmentedRequests == 0 || st.FragmentedReplies == 0 || st.Malformed != 0 {
		t.Fatalf("stats %+v: want fragmented requests and replies, nothing malformed", st)
	}
	err := c.Write(make([]byte, c.MaxMessage()+1))
	if !errors.Is(err, transport.ErrMessageTooLarge) || !strings.Contains(err.Error(), "at most 102400") {
		t.Fatalf("oversized write: %v", err)
	}
	for i := 0; i < 10; i++ {
		if got := roundTrip(t, c, "ok"); got != "ok" {
			t.Fatalf("after an oversized request: %q", got)
		}
	}
}

func commonPrefix(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// TestTryWrite: TryWrite fills the request ring without waiting, says so
// when a message does not fit, and never takes a message of more records
// than the ring holds; replies read make room again.
func TestTryWrite(t *testing.T) {
	const records, size = 4, 128
	srv, dir := listenTest(t, Options{Records: records, RecordSize: size})
	l := startLoop(t, srv) // for the handshake
	c := dialTest(t, dir, DialOptions{})
	l.halt()
	payload := size - recHeader
	// No loop runs now: nothing is consumed.
	for i := range records {
		if ok, err := c.TryWrite([]byte{byte('a' + i)}); !ok || err != nil {
			t.Fatalf("TryWrite %d into a ring of %d: %v %v", i, records, ok, err)
		}
	}
	if ok, err := c.TryWrite([]byte("x")); ok || err != nil {
		t.Fatalf("TryWrite into a full ring: %v %v", ok, err)
	}
	startLoop(t, srv)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	for i := range records {
		got, err := c.ReadAppend(nil)
		if err != nil || string(got) != string(rune('a'+i)) {
			t.Fatalf("reply %d: %q %v", i, got, err)
		}
	}
	two := make([]byte, 2*payload-fragPrefix) // exactly two records
	testkit.Eventually(t, 10*time.Second, "room for a two-record message", func() (bool, string) {
		ok, err := c.TryWrite(two)
		if err != nil {
			t.Fatal(err)
		}
		return ok, ""
	})
	if got, err := c.ReadAppend(nil); err != nil || len(got) != len(two) {
		t.Fatalf("two-record reply: %d bytes, %v", len(got), err)
	}
	huge := make([]byte, records*payload) // more records than the ring has
	for range 3 {
		if ok, err := c.TryWrite(huge); ok || err != nil {
			t.Fatalf("TryWrite of a message larger than the ring: %v %v", ok, err)
		}
	}
	if got := roundTrip(t, c, string(huge)); len(got) != len(huge) {
		t.Fatalf("Write of a message larger than the ring: %d bytes back", len(got))
	}
}

func TestQuitClosesOneClient(t *testing.T) {
	srv, dir := listenTest(t, Options{})
	l := startLoop(t, srv)
	a := dialTest(t, dir, DialOptions{})
	b := dialTest(t, dir, DialOptions{})
	if got := roundTrip(t, a, "quit"); got != "bye" {
		t.Fatalf("quit answered %q", got)
	}
	a.SetDeadline(time.Now().Add(10 * time.Second))
	a.Write([]byte("more"))
	if _, err := a.ReadAppend(nil); !errors.Is(err, transport.ErrServerGone) {
		t.Fatalf("after quit: %v", err)
	}
	if got := roundTrip(t, b, "b"); got != "b" {
		t.Fatalf("b: %q", got)
	}
	testkit.Eventually(t, 10*time.Second, "one client left", func() (bool, string) { return l.stats().Clients == 1, "" })
}

func TestDeadline(t *testing.T) {
	srv, dir := listenTest(t, Options{})
	startLoop(t, srv)
	c := dialTest(t, dir, DialOptions{})
	c.SetDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := c.ReadAppend(nil); !errors.Is(err, transport.ErrTimeout) {
		t.Fatalf("read with nothing asked: %v, want ErrTimeout", err)
	}
	c.SetDeadline(time.Time{})
	if got := roundTrip(t, c, "late"); got != "late" {
		t.Fatalf("after a timeout: %q", got)
	}
}

func TestHandshakeErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := Dial(ctx, filepath.Join(t.TempDir(), "none"), DialOptions{}); !errors.Is(err, ErrNoServer) {
		t.Fatalf("dial nowhere: %v", err)
	}
	_, dir := listenTest(t, Options{Proto: proto.SBE})
	srv2, err := Listen(Options{Dir: dir, Handler: &echo{}})
	if !errors.Is(err, ErrInUse) {
		srv2.Close()
		t.Fatalf("second server in the same directory: %v", err)
	}
}

// TestProtocolMismatchRefused: a client that asks for the other protocol
// is refused with both named and the fix, and one that asks for none
// speaks the server's.
func TestProtocolMismatchRefused(t *testing.T) {
	srv, dir := listenTest(t, Options{Proto: proto.SBE})
	startLoop(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	_, err := Dial(ctx, dir, DialOptions{Proto: proto.RESP})
	took := time.Since(start)
	if !errors.Is(err, ErrWrongProtocol) {
		t.Fatalf("resp client on an sbe ring: %v", err)
	}
	for _, want := range []string{"speaks sbe", "this client resp", "ring://" + dir + "?proto=sbe", "leave proto out"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	t.Logf("refused in %v: %v", took, err)
	c := dialTest(t, dir, DialOptions{Proto: proto.SBE})
	if got := roundTrip(t, c, "sbe"); got != "sbe" || c.Protocol() != proto.SBE {
		t.Fatalf("%q %v", got, c.Protocol())
	}
	learner := dialTest(t, dir, DialOptions{AnyProto: true})
	if learner.Protocol() != proto.SBE {
		t.Fatalf("a client of any protocol learned %v, want sbe", learner.Protocol())
	}
	if got := roundTrip(t, learner, "learned"); got != "learned" {
		t.Fatalf("%q", got)
	}
	tg, _ := transport.ParseTarget("ring://" + dir)
	if o, err := DialOptionsFor(tg); err != nil || !o.AnyProto {
		t.Fatalf("a target without proto: %+v %v, want AnyProto", o, err)
	}
	tg, _ = transport.ParseTarget("ring://" + dir + "?proto=resp")
	if o, err := DialOptionsFor(tg); err != nil || o.AnyProto {
		t.Fatalf("a target with proto: %+v %v, want it fixed", o, err)
	}
}

func TestSweepLeftovers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ring")
	os.Mkdir(dir, 0o700)
	for _, n := range []string{"c-dead-1.ring", "c-dead-2.ring", socketName, "unrelated.txt"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	srv, _ := listenTest(t, Options{Dir: dir})
	var st Stats
	srv.Stats(&st)
	if st.Swept != 3 {
		t.Fatalf("swept %d files, want 3", st.Swept)
	}
	if len(ringFiles(t, dir)) != 0 {
		t.Fatal("leftover ring files survive")
	}
	if _, err := os.Stat(filepath.Join(dir, "unrelated.txt")); err != nil {
		t.Fatalf("a file that is not goblin's was swept: %v", err)
	}
	srv.Close()
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("a directory the server did not make was removed: %v", err)
	}
}

func TestGroupMode(t *testing.T) {
	srv, dir := listenTest(t, Options{Group: strconv.Itoa(os.Getgid())})
	startLoop(t, srv)
	c := dialTest(t, dir, DialOptions{})
	roundTrip(t, c, "g")
	for _, f := range []string{filepath.Join(dir, socketName), filepath.Join(dir, lockName)} {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o660 {
			t.Errorf("%s has mode %v, want 0660", f, st.Mode().Perm())
		}
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o750 {
		t.Errorf("directory mode %v, want 0750", st.Mode().Perm())
	}
}

func TestConfigFor(t *testing.T) {
	tg, err := transport.ParseTarget("ring:///dev/shm/x?proto=sbe&records=64&record=512&wait=park&server_timeout=2s")
	if err != nil {
		t.Fatal(err)
	}
	o, err := ConfigFor(tg)
	if err != nil || o.Dir != "/dev/shm/x" || o.Records != 64 || o.RecordSize != 512 || o.Proto != proto.SBE {
		t.Fatalf("ConfigFor: %+v %v", o, err)
	}
	d, err := DialOptionsFor(tg)
	if err != nil || d.Wait != idle.Backoff || d.ServerTimeout != 2*time.Second || d.Proto != proto.SBE {
		t.Fatalf("DialOptionsFor: %+v %v", d, err)
	}
	// The names package idle and the Aeron target use, beside the older
	// spellings above.
	tg, _ = transport.ParseTarget("ring:///dev/shm/x?proto=sbe&wait=yield&server-timeout=5s")
	if d, err := DialOptionsFor(tg); err != nil || d.Wait != idle.Yield || d.ServerTimeout != 5*time.Second {
		t.Fatalf("DialOptionsFor(wait=yield&server-timeout=5s): %+v %v", d, err)
	}
	for _, bad := range []string{"ring:///x?records=3", "ring:///x?record=100", "ring:///x?colour=red"} {
		tg, _ := transport.ParseTarget(bad)
		if _, err := ConfigFor(tg); err == nil {
			t.Errorf("ConfigFor(%s) accepted", bad)
		}
	}
}

// TestNoAllocations proves the message path allocates nothing on either
// side: client Write, server Poll (serve + publish), client ReadAppend.
func TestNoAllocations(t *testing.T) {
	srv, dir := listenTest(t, Options{})
	// Handshake through a loop, then drive Poll by hand on this goroutine.
	l := startLoop(t, srv)
	c := dialTest(t, dir, DialOptions{})
	roundTrip(t, c, "warm")
	l.halt()
	msg := []byte("*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$16\r\n0123456789abcdef\r\n")
	buf := make([]byte, 0, 256)
	now := mono()
	allocs := testing.AllocsPerRun(1000, func() {
		if err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		srv.Poll(now) // same now: no housekeeping, only serving
		var err error
		if buf, err = c.ReadAppend(buf[:0]); err != nil || len(buf) != len(msg) {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per round trip, want 0", allocs)
	}
}

// TestIdlePollNoAllocations: an idle Poll that does housekeeping (accept
// attempt, heartbeat, liveness poll of every client) allocates nothing.
func TestIdlePollNoAllocations(t *testing.T) {
	srv, dir := listenTest(t, Options{})
	l := startLoop(t, srv)
	for range 3 {
		roundTrip(t, dialTest(t, dir, DialOptions{}), "x")
	}
	l.halt()
	now := mono()
	allocs := testing.AllocsPerRun(200, func() {
		now += int64(time.Second) // every call is due for housekeeping and liveness
		if srv.Poll(now) != 0 {
			t.Fatal("idle poll did work")
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per idle Poll, want 0", allocs)
	}
	if srv.Clients() != 3 {
		t.Fatalf("%d clients, want 3", srv.Clients())
	}
}

// TestWaitNoAllocations: a client waiting in vain (liveness checks every
// millisecond included) until its deadline allocates nothing.
func TestWaitNoAllocations(t *testing.T) {
	srv, dir := listenTest(t, Options{})
	startLoop(t, srv)
	c := dialTest(t, dir, DialOptions{Wait: idle.Backoff})
	buf := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(5, func() {
		c.SetDeadline(time.Now().Add(5 * time.Millisecond))
		if _, err := c.ReadAppend(buf); !errors.Is(err, transport.ErrTimeout) {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per wait, want 0", allocs)
	}
}

// rawHandshake connects to the server in dir as a client would and returns
// the handshake socket, the doorbell and the memfd the server hands over,
// closed in cleanup.
func rawHandshake(t *testing.T, dir string) (sock, bell, mfd int) {
	t.Helper()
	sock, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(sock) })
	if err := unix.Connect(sock, &unix.SockaddrUnix{Name: filepath.Join(dir, socketName)}); err != nil {
		t.Fatal(err)
	}
	unix.Write(sock, []byte(helloLine(proto.RESP, true)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	line, fds, err := readLine(ctx, sock)
	for _, f := range fds {
		t.Cleanup(func() { unix.Close(f) })
	}
	if err != nil || !strings.HasPrefix(line, answerOK) || len(fds) != 2 {
		t.Fatalf("handshake: %q with %d descriptors, %v", line, len(fds), err)
	}
	return sock, fds[0], fds[1]
}

// TestClientCannotResizeItsRings: the memfd a client gets is sealed, so no
// truncation, shrinking or growing of it can change what the server maps
// (truncating a ring file once killed the server with SIGBUS), and the seals cannot be lifted. Punching a hole, which a sealed
// size still allows, only zeroes memory; the server goes on serving.
func TestClientCannotResizeItsRings(t *testing.T) {
	srv, dir := listenTest(t, Options{})
	l := startLoop(t, srv)
	other := dialTest(t, dir, DialOptions{})
	_, _, mfd := rawHandshake(t, dir)
	var st unix.Stat_t
	if err := unix.Fstat(mfd, &st); err != nil {
		t.Fatal(err)
	}
	for _, size := range []int64{0, st.Size / 2, st.Size - 1, st.Size + 1, 2 * st.Size} {
		if err := unix.Ftruncate(mfd, size); !errors.Is(err, unix.EPERM) {
			t.Errorf("ftruncate of the ring memfd to %d bytes: %v, want EPERM", size, err)
		}
	}
	if err := unix.Fallocate(mfd, 0, st.Size, 4096); !errors.Is(err, unix.EPERM) {
		t.Errorf("growing the memfd with fallocate: %v, want EPERM", err)
	}
	seals, err := unix.FcntlInt(uintptr(mfd), unix.F_GET_SEALS, 0)
	if err != nil || seals&(unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_SEAL) != unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_SEAL {
		t.Errorf("seals %#x %v, want shrink, grow and seal", seals, err)
	}
	if _, err := unix.FcntlInt(uintptr(mfd), unix.F_ADD_SEALS, unix.F_SEAL_WRITE); !errors.Is(err, unix.EPERM) {
		t.Errorf("adding a seal after F_SEAL_SEAL: %v, want EPERM", err)
	}
	if err := unix.Fallocate(mfd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 0, st.Size); err != nil {
		t.Logf("punching a hole: %v", err)
	}
	for i := range 100 {
		if got := roundTrip(t, other, strconv.Itoa(i)); got != strconv.Itoa(i) {
			t.Fatalf("the other client after the attack: %q", got)
		}
	}
	if st := l.stats(); st.Clients != 2 || st.Faults != 0 {
		t.Fatalf("stats %+v: want both clients, no fault", st)
	}
}

// TestFaultDropsOnlyThatClient is the second line of defence: should an
// access to a client's mapping ever fault (here a client's rings are
// swapped for a file that is then truncated, what a version 1 client could
// do), the server drops that client and the others go on.
func TestFaultDropsOnlyThatClient(t *testing.T) {
	srv, dir := listenTest(t, Options{})
	l := startLoop(t, srv)
	victim := dialTest(t, dir, DialOptions{})
	other := dialTest(t, dir, DialOptions{})
	roundTrip(t, victim, "before")
	l.halt()
	c := srv.clients[0]
	path := filepath.Join(t.TempDir(), "victim.ring")
	m, err := shm.Create(path, len(c.mem))
	if err != nil {
		t.Fatal(err)
	}
	copy(m, c.mem)
	shm.Unmap(c.mem)
	c.mem, c.req.mem, c.rep.mem = m, m, m
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	// The victim's next request would be found in memory that is gone.
	srv.Poll(mono())
	var st Stats
	srv.Stats(&st)
	if st.Faults != 1 || st.Clients != 1 {
		t.Fatalf("stats %+v after a fault: want 1 fault and 1 client left", st)
	}
	startLoop(t, srv)
	if got := roundTrip(t, other, "after"); got != "after" {
		t.Fatalf("the other client after the fault: %q", got)
	}
}

// TestDialRejectsBadBackoff: backoff parameters Step cannot follow (a
// negative park would make Backoff poll in a tight loop with no park, a
// negative count skip the spins) are refused with idle.ErrParams before
// anything is dialled, as the server refuses them in its Options.
func TestDialRejectsBadBackoff(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, p := range []idle.Params{{MinPark: -time.Microsecond}, {Spins: -1}, {Yields: -1}, {MaxPark: -time.Microsecond}} {
		if c, err := Dial(ctx, t.TempDir(), DialOptions{Backoff: p}); !errors.Is(err, idle.ErrParams) {
			if c != nil {
				c.Close()
			}
			t.Errorf("Dial with backoff %+v: %v, want idle.ErrParams", p, err)
		}
	}
}

// TestRecordsStaggered: a record size that is a multiple of the page size
// is laid out two cache lines longer (LaidOutRecordSize), so no two consecutive
// records share a page offset; the client takes the size from the file's
// header and carries messages on either side of the record's payload,
// which grew by those lines. Other sizes are laid out as configured.
func TestRecordsStaggered(t *testing.T) {
	for _, tc := range []struct{ size, laid int }{
		{DefaultRecordSize, DefaultRecordSize + 128},
		{4096, 4096 + 128},
		{4096 + 64, 4096 + 64},
		{maxRecordCap, maxRecordCap},
	} {
		if got := LaidOutRecordSize(tc.size); got != tc.laid {
			t.Errorf("LaidOutRecordSize(%d) = %d, want %d", tc.size, got, tc.laid)
		}
	}
	srv, dir := listenTest(t, Options{Records: 4, RecordSize: 4096})
	startLoop(t, srv)
	c := dialTest(t, dir, DialOptions{})
	if c.req.size != 4096+128 || c.rep.size != 4096+128 || c.req.maxBytes != 4096+128-recHeader {
		t.Fatalf("client's records: %d and %d bytes, payload %d; want the server's %d", c.req.size, c.rep.size, c.req.maxBytes, 4096+128)
	}
	if off := c.req.slotOff(1) - c.req.slotOff(0); off%pageSize == 0 {
		t.Fatalf("records %d bytes apart: a multiple of the page size", off)
	}
	for _, n := range []int{1, c.req.maxBytes, c.req.maxBytes + 1, 3 * c.req.maxBytes} {
		msg := strings.Repeat("s", n)
		if got := roundTrip(t, c, msg); got != msg {
			t.Fatalf("%d-byte message came back as %d bytes", n, len(got))
		}
	}
}
