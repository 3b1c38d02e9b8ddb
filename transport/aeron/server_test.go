package aeron_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ae "github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/javadriver"
	"github.com/goblin-kv/goblin/internal/shm"
	"github.com/goblin-kv/goblin/internal/testkit/wiretest"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/aeron"
	"golang.org/x/sys/unix"
)

// manual is a server polled by the test goroutine itself (which is then
// the loop goroutine), so the test can read Stats and count allocations.
type manual struct {
	tb  testing.TB
	srv *aeron.Server
	o   aeron.Options
}

func newManual(tb testing.TB, o aeron.Options) *manual {
	tb.Helper()
	o.Handler = newEngineHandler(tb)
	return newManualWith(tb, o)
}

// newManualWith is newManual with o's own Handler (the engine when nil).
func newManualWith(tb testing.TB, o aeron.Options) *manual {
	tb.Helper()
	srv, o := listen(tb, o)
	tb.Cleanup(func() { srv.Close() })
	return &manual{tb: tb, srv: srv, o: o}
}

// dial connects while polling the server, which must accept the client.
func (m *manual) dial(p proto.Protocol) *aeron.Conn {
	m.tb.Helper()
	return m.dialWith(aeron.DialOptions{Media: m.o.Media, Endpoint: m.o.Endpoint, Control: m.o.Control, Proto: p,
		Dir: m.o.Dir, TermLength: m.o.TermLength})
}

// dialWith is dial with the given options.
func (m *manual) dialWith(o aeron.DialOptions) *aeron.Conn {
	m.tb.Helper()
	type res struct {
		c   *aeron.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := dialCtx(o)
		ch <- res{c, err}
	}()
	for {
		select {
		case r := <-ch:
			if r.err != nil {
				m.tb.Fatal(r.err)
			}
			m.tb.Cleanup(func() { r.c.Close() })
			return r.c
		default:
			m.srv.Poll(0)
			time.Sleep(50 * time.Microsecond)
		}
	}
}

// serve polls until the server has served n more requests.
func (m *manual) serve(n int64) {
	var st aeron.Stats
	m.srv.Stats(&st)
	want := st.Requests + n
	deadline := time.Now().Add(30 * time.Second)
	for st.Requests < want {
		if time.Now().After(deadline) {
			m.tb.Fatalf("served %d requests, want %d", st.Requests, want)
		}
		m.srv.Poll(0)
		m.srv.Stats(&st)
	}
}

func (m *manual) stats() aeron.Stats {
	var st aeron.Stats
	m.srv.Stats(&st)
	return st
}

// TestBackPressureDropsClient: a client that sends requests and never
// reads its replies fills its reply stream; its reply then waits (the
// server stops reading that client, retries the reply on every Poll and
// keeps serving the others), and after OfferTimeout the client is dropped
// and counted. The dropped client sees ErrServerGone once it reads what it
// got.
func TestBackPressureDropsClient(t *testing.T) {
	needDriver(t)
	m := newManual(t, aeron.Options{Media: "ipc", Proto: proto.RESP, TermLength: 64 << 10,
		OfferTimeout: 50 * time.Millisecond})
	good := m.dial(proto.RESP)
	hog := m.dial(proto.RESP)
	big := bytes.Repeat([]byte("x"), 6000)
	good.SetDeadline(time.Now().Add(30 * time.Second))
	if err := good.Write(resp.AppendCommand(nil, []byte("SET"), []byte("big"), big)); err != nil {
		t.Fatal(err)
	}
	m.serve(1)
	if r, err := good.ReadAppend(nil); err != nil || string(r) != "+OK\r\n" {
		t.Fatalf("SET: %q %v", r, err)
	}
	get := resp.AppendCommand(nil, []byte("GET"), []byte("big"))
	hog.SetDeadline(time.Now().Add(30 * time.Second))
	for i := 0; m.stats().Stalls == 0; i++ {
		if i > 100 {
			t.Fatalf("the server still sends to a client that has not read %d replies: %+v", i, m.stats())
		}
		if err := hog.Write(get); err != nil {
			t.Fatal(err)
		}
		m.serve(1)
	}
	// While the hog's reply waits, the other client is served.
	if err := good.Write(get); err != nil {
		t.Fatal(err)
	}
	m.serve(1)
	if r, err := good.ReadAppend(nil); err != nil || len(r) != len(big)+len("$6000\r\n\r\n") {
		t.Fatalf("the other client while one stalls: %d bytes, %v", len(r), err)
	}
	m.pollUntil("the stalled client to be dropped", func(st aeron.Stats) bool { return st.Dropped > 0 })
	st := m.stats()
	if st.Dropped != 1 || st.Clients != 1 {
		t.Fatalf("after the drop: %+v, want 1 dropped and 1 client left", st)
	}
	if err := good.Write(get); err != nil {
		t.Fatal(err)
	}
	m.serve(1)
	if r, err := good.ReadAppend(nil); err != nil || len(r) != len(big)+len("$6000\r\n\r\n") {
		t.Fatalf("the other client after the drop: %d bytes, %v", len(r), err)
	}
	var err error
	for range 100 {
		if _, err = hog.ReadAppend(nil); err != nil {
			break
		}
	}
	if !errors.Is(err, transport.ErrServerGone) || !strings.Contains(err.Error(), "end-of-stream=true") {
		t.Fatalf("dropped client reads %v, want ErrServerGone with the image at its end of stream", err)
	}
}

// TestReplyWaitsForTheDriver: a reply publication that is connected but
// whose limit the driver has not raised (as between the driver linking a
// new client and granting its first window, or while the driver is starved
// of CPU) makes the reply look back-pressured. The server must keep the
// reply and send it once the driver raises the limit, not drop a client
// that is only waiting on a slow driver. The test holds the reply
// publication's pub-lmt counter at 0 (the driver does not raise it again
// until the client has consumed an eighth of the window, which it cannot),
// then puts the driver's value back.
func TestReplyWaitsForTheDriver(t *testing.T) {
	needDriver(t)
	for _, p := range []proto.Protocol{proto.RESP, proto.SBE} {
		t.Run(p.String(), func(t *testing.T) {
			m := newManual(t, aeron.Options{Media: "ipc", Proto: p, OfferTimeout: time.Hour})
			c := m.dial(p)
			c.SetDeadline(time.Now().Add(time.Minute))
			ping := wiretest.Request(p, "PING")
			round := func() {
				t.Helper()
				if err := c.Write(ping); err != nil {
					t.Fatal(err)
				}
				m.serve(1)
				r, err := c.ReadAppend(nil)
				if err != nil {
					t.Fatal(err)
				}
				wiretest.CheckReply(t, p, "PING", r)
			}
			round()
			lim := findPubLimit(t, m.o.Dir, aeron.DefaultReplyStream)
			granted := lim.get()
			if granted <= 0 {
				t.Fatalf("the reply publication's limit is %d after a round trip", granted)
			}
			lim.set(0)
			if err := c.Write(ping); err != nil {
				t.Fatal(err)
			}
			m.serve(1)
			for range 1000 {
				m.srv.Poll(0)
			}
			if st := m.stats(); st.Stalls != 1 || st.Dropped != 0 || st.Gone != 0 || st.Clients != 1 {
				t.Fatalf("while the driver holds the limit: %+v, want 1 stall and the client still served", st)
			}
			lim.set(granted)
			m.srv.Poll(0)
			r, err := c.ReadAppend(nil)
			if err != nil {
				t.Fatalf("the reply after the driver raised the limit: %v", err)
			}
			wiretest.CheckReply(t, p, "PING", r)
			round()
			if st := m.stats(); st.Dropped != 0 || st.Gone != 0 || st.Clients != 1 || st.Requests != 3 {
				t.Fatalf("after the stall: %+v", st)
			}
		})
	}
}

// TestWaitingRepliesKeepOrder: pipelined requests whose replies cannot go
// (the reply publication's limit held at 0) are all answered, in order,
// once the limit rises; a QUIT among them closes the client only after its
// reply went out.
func TestWaitingRepliesKeepOrder(t *testing.T) {
	needDriver(t)
	m := newManual(t, aeron.Options{Media: "ipc", Proto: proto.RESP, OfferTimeout: time.Hour})
	c := m.dial(proto.RESP)
	c.SetDeadline(time.Now().Add(time.Minute))
	ping := resp.AppendCommandString(nil, "PING")
	if err := c.Write(ping); err != nil {
		t.Fatal(err)
	}
	m.serve(1)
	if r, err := c.ReadAppend(nil); err != nil || string(r) != "+PONG\r\n" {
		t.Fatalf("PING: %q %v", r, err)
	}
	lim := findPubLimit(t, m.o.Dir, aeron.DefaultReplyStream)
	granted := lim.get()
	lim.set(0)
	reqs := [][]byte{
		resp.AppendCommandString(nil, "SET", "a", "1"),
		resp.AppendCommandString(nil, "GET", "a"),
		ping,
		resp.AppendCommandString(nil, "QUIT"),
	}
	for _, req := range reqs {
		if err := c.Write(req); err != nil {
			t.Fatal(err)
		}
	}
	m.serve(int64(len(reqs)))
	for range 100 {
		m.srv.Poll(0)
	}
	if st := m.stats(); st.Stalls != 1 || st.Gone != 0 || st.Dropped != 0 || st.Clients != 1 {
		t.Fatalf("while the replies wait: %+v", st)
	}
	lim.set(granted)
	m.pollUntil("the client to be closed after QUIT", func(st aeron.Stats) bool { return st.Gone == 1 })
	for _, want := range []string{"+OK\r\n", "$1\r\n1\r\n", "+PONG\r\n", "+OK\r\n"} {
		r, err := c.ReadAppend(nil)
		if err != nil || string(r) != want {
			t.Fatalf("reply %q (%v), want %q", r, err, want)
		}
	}
	if _, err := c.ReadAppend(nil); !errors.Is(err, transport.ErrServerGone) {
		t.Fatalf("after QUIT: %v, want ErrServerGone", err)
	}
}

// TestServerGoneSaysWhy: a client of a server that closed (its driver
// lives on) gets ErrServerGone, not a timeout, and the error names the
// condition and the state of the publication, the image and the client.
func TestServerGoneSaysWhy(t *testing.T) {
	needDriver(t)
	d := startDriver(t, javadriver.Options{})
	m := newManual(t, aeron.Options{Media: "ipc", Proto: proto.SBE, Dir: d.Dir(), External: true})
	c := m.dial(proto.SBE)
	c.SetDeadline(time.Now().Add(time.Minute))
	ping := wiretest.Request(proto.SBE, "PING")
	if err := c.Write(ping); err != nil {
		t.Fatal(err)
	}
	m.serve(1)
	if _, err := c.ReadAppend(nil); err != nil {
		t.Fatal(err)
	}
	if err := m.srv.Close(); err != nil {
		t.Fatal(err)
	}
	var err error
	for range 1000 {
		if err = c.Write(ping); err == nil {
			_, err = c.ReadAppend(nil)
		}
		if err != nil {
			break
		}
	}
	if !errors.Is(err, transport.ErrServerGone) {
		t.Fatalf("after the server closed: %v, want ErrServerGone", err)
	}
	// The image ends (end of stream) and then goes (unavailable); which
	// one the client sees first depends on timing.
	for _, want := range []string{" response channel ", "request publication connected=",
		"response image session=", "aeron client open"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}

// pollUntil polls the server until cond holds for its stats.
func (m *manual) pollUntil(what string, cond func(aeron.Stats) bool) {
	m.tb.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for st := m.stats(); !cond(st); st = m.stats() {
		if time.Now().After(deadline) {
			m.tb.Fatalf("timed out waiting for %s: %+v", what, st)
		}
		m.srv.Poll(0)
		time.Sleep(100 * time.Microsecond)
	}
}

// pubLimit is the pub-lmt counter of a publication in a driver's CnC file,
// mapped for writing so that a test can play the driver's part.
type pubLimit struct {
	data []byte
	off  int
}

// findPubLimit finds the one publisher-limit counter of stream in the
// driver in dir.
func findPubLimit(tb testing.TB, dir string, stream int32) *pubLimit {
	tb.Helper()
	cnc, err := ae.OpenCnC(dir)
	if err != nil {
		tb.Fatal(err)
	}
	defer cnc.Close()
	id, n := int32(-1), 0
	cnc.Counters().ForEach(func(ci ae.CounterInfo) bool {
		// Stream counters' keys: registration id (int64), session id
		// (int32), stream id (int32).
		if ci.TypeID == ae.CounterTypePublisherLimit && int32(binary.LittleEndian.Uint32(ci.Key[12:])) == stream {
			id, n = ci.ID, n+1
		}
		return true
	})
	if n != 1 {
		tb.Fatalf("%d publisher limits of stream %d in %s, want 1", n, stream, dir)
	}
	data, err := shm.Map(filepath.Join(dir, ae.CnCFile))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { shm.Unmap(data) })
	// The CnC header holds the section lengths (to-driver, to-clients,
	// counters metadata at 4, 8, 12); the values section follows them after
	// the 128-byte header, one 128-byte record per counter.
	off := 128
	for _, at := range []int{4, 8, 12} {
		off += int(binary.LittleEndian.Uint32(data[at:]))
	}
	return &pubLimit{data: data, off: off + int(id)*128}
}

// get and set access the counter as the driver does: it stores the limit
// with release and the publisher loads it with acquire.
func (l *pubLimit) get() int64  { return shm.LoadInt64Acquire(l.data, l.off) }
func (l *pubLimit) set(v int64) { shm.StoreInt64Release(l.data, l.off, v) }

// TestNoAllocs: a depth-one round trip allocates nothing, on the client
// (Write, ReadAppend) or the server (Poll, engine, reply offer), in either
// protocol.
func TestNoAllocs(t *testing.T) {
	needDriver(t)
	for _, p := range []proto.Protocol{proto.RESP, proto.SBE} {
		t.Run(p.String(), func(t *testing.T) {
			m := newManual(t, aeron.Options{Media: "ipc", Proto: p})
			c := m.dial(p)
			c.SetDeadline(time.Now().Add(time.Minute))
			set, get := wiretest.Request(p, "SET"), wiretest.Request(p, "GET")
			buf := make([]byte, 0, 256)
			round := func(req []byte) {
				if err := c.Write(req); err != nil {
					t.Fatal(err)
				}
				m.serve(1)
				var err error
				if buf, err = c.ReadAppend(buf[:0]); err != nil {
					t.Fatal(err)
				}
			}
			round(set)
			for range 100 {
				round(get)
			}
			if a := testing.AllocsPerRun(500, func() { round(set); round(get) }); a != 0 {
				t.Fatalf("%v allocations per SET+GET round trip", a)
			}
			wiretest.CheckReply(t, p, "GET", buf)
		})
	}
}

// TestUDPReplyLeavesInThePollThatServedIt: with its media driver in
// process, a UDP server sends a reply in the Poll that served the request
// (it runs the driver's sender once more), so the reply does not wait for
// the loop's next pass, its maintenance and idle step first: here no Poll
// follows at all, and the client still gets the reply.
func TestUDPReplyLeavesInThePollThatServedIt(t *testing.T) {
	m := newManual(t, aeron.Options{Media: "udp", Proto: proto.RESP,
		Endpoint: loopback(freeUDPPort(t)), Control: loopback(freeUDPPort(t))})
	// The client on the process's own client driver (no Dir), not on the
	// server's, which its waiting would work.
	c := m.dialWith(aeron.DialOptions{Media: "udp", Endpoint: m.o.Endpoint, Control: m.o.Control, Proto: proto.RESP})
	for i := range 3 {
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if err := c.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
			t.Fatal(err)
		}
		m.serve(1)
		got, err := c.ReadAppend(nil)
		if err != nil || string(got) != "+PONG\r\n" {
			t.Fatalf("round trip %d: reply %q, %v: the reply waited for a Poll that never came", i, got, err)
		}
	}
}

// TestUDPServerWaitFDWakesAfterSpinning: the server's WaitFD (the loop
// parks on it, an epoll set holding the in-process driver's) holds no
// socket once the server has been polled for a while without a park, and
// after PrepareToWait a request arriving wakes it through both levels of
// nesting: the loop's default backoff profile loses no wake-up.
func TestUDPServerWaitFDWakesAfterSpinning(t *testing.T) {
	m := newManual(t, aeron.Options{Media: "udp", Proto: proto.RESP,
		Endpoint: loopback(freeUDPPort(t)), Control: loopback(freeUDPPort(t))})
	c := m.dialWith(aeron.DialOptions{Media: "udp", Endpoint: m.o.Endpoint, Control: m.o.Control, Proto: proto.RESP})
	ping := func() {
		t.Helper()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if err := c.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
			t.Fatal(err)
		}
	}
	pong := func() {
		t.Helper()
		m.serve(1)
		if got, err := c.ReadAppend(nil); err != nil || string(got) != "+PONG\r\n" {
			t.Fatalf("reply %q, %v", got, err)
		}
	}
	ready := func(timeout time.Duration) bool {
		t.Helper()
		ev := make([]unix.EpollEvent, 1)
		for {
			n, err := unix.EpollWait(m.srv.WaitFD(), ev, int(timeout/time.Millisecond))
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			return n > 0
		}
	}
	ping()
	pong()
	for i := range 3 {
		// The loop spins (polls without parking) for longer than the
		// driver keeps its sockets in the set.
		for end := time.Now().Add(20 * time.Millisecond); time.Now().Before(end); {
			m.srv.Poll(0)
		}
		if ready(0) {
			t.Fatalf("round %d: after 20 ms of polling without a park, WaitFD still watches the sockets", i)
		}
		m.srv.PrepareToWait()
		ping()
		if !ready(10 * time.Second) {
			t.Fatalf("round %d: prepared to wait, a request came, and WaitFD did not wake within 10 s", i)
		}
		pong()
	}
}
