package aeron_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/proto/sbe"
	"github.com/goblin-kv/goblin/store"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/aeron"
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
	st, err := store.New(store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	o.Handler = engineHandler{e: command.NewEngine(st, command.Options{}), st: new(command.Stats)}
	if o.Dir == "" {
		o.Dir = shmDir(tb)
	}
	srv, err := aeron.Listen(o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { srv.Close() })
	return &manual{tb: tb, srv: srv, o: o}
}

// dial connects while polling the server, which must accept the client.
func (m *manual) dial(p proto.Protocol) *aeron.Conn {
	m.tb.Helper()
	type res struct {
		c   *aeron.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		o := aeron.DialOptions{Media: m.o.Media, Endpoint: m.o.Endpoint, Control: m.o.Control, Proto: p,
			Dir: m.o.Dir, TermLength: m.o.TermLength}
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
// reads its replies fills its reply stream; the server retries a bounded
// number of times, drops that client and counts it, and keeps serving the
// others. The dropped client sees ErrServerGone once it reads what it got.
func TestBackPressureDropsClient(t *testing.T) {
	needDriver(t)
	m := newManual(t, aeron.Options{Media: "ipc", Proto: proto.RESP, TermLength: 64 << 10})
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
	for i := 0; m.stats().Dropped == 0; i++ {
		if i > 100 {
			t.Fatalf("the server still serves a client that has not read %d replies: %+v", i, m.stats())
		}
		if err := hog.Write(get); err != nil {
			t.Fatal(err)
		}
		m.serve(1)
	}
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
	if !errors.Is(err, transport.ErrServerGone) {
		t.Fatalf("dropped client reads %v, want ErrServerGone", err)
	}
}

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
			set, get := benchRequest(p, "SET"), benchRequest(p, "GET")
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
			checkReply(t, p, "GET", buf)
		})
	}
}

// benchRequest encodes one depth-one request of op in p.
func benchRequest(p proto.Protocol, op string) []byte {
	key, val := []byte("bench:key"), []byte("0123456789abcdef")
	if p == proto.RESP {
		switch op {
		case "PING":
			return resp.AppendCommandString(nil, "PING")
		case "SET":
			return resp.AppendCommand(nil, []byte("SET"), key, val)
		}
		return resp.AppendCommand(nil, []byte("GET"), key)
	}
	// PING goes as the 16-byte Ping message, as the client library sends it.
	r := sbe.Request{CorrelationID: 1, Op: sbe.OpPing, Compact: true}
	switch op {
	case "SET":
		r.Op, r.Key, r.Value = sbe.OpSet, key, val
	case "GET":
		r.Op, r.Key = sbe.OpGet, key
	}
	var c sbe.Codec
	return c.AppendRequest(nil, &r)
}

func checkReply(tb testing.TB, p proto.Protocol, op string, got []byte) {
	tb.Helper()
	want := map[string]string{"PING": "PONG", "SET": "OK", "GET": "0123456789abcdef"}[op]
	if p == proto.RESP {
		r, _, err := resp.ReadReply(got)
		if err != nil || string(r.Data) != want {
			tb.Fatalf("%s answered %q (%v)", op, got, err)
		}
		return
	}
	var c sbe.Codec
	var r sbe.Reply
	if err := c.DecodeReply(got, &r); err != nil || string(r.Value) != want {
		tb.Fatalf("%s answered %+v (%v)", op, r, err)
	}
}
