package aeron_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/engine"
	"github.com/goblin-kv/goblin/idle"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/server"
	"github.com/goblin-kv/goblin/store"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/aeron"
)

// inProcess is a server (store, engine, Aeron transport, real loop) in this
// process.
type inProcess struct {
	srv  *aeron.Server
	loop *server.Loop
	o    aeron.Options
}

// newEngineHandler is the command engine of a fresh store, as goblin-server
// serves it.
func newEngineHandler(tb testing.TB) transport.MessageHandler {
	tb.Helper()
	st, err := store.New(store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return server.NewEngineHandler(engine.NewEngine(st, engine.Options{}), new(engine.Stats), "aeron")
}

// listen fills in o's Handler (an engine) and Dir (a fresh one) when
// unset and listens with it; it returns the server and the options used.
func listen(tb testing.TB, o aeron.Options) (*aeron.Server, aeron.Options) {
	tb.Helper()
	if o.Handler == nil {
		o.Handler = newEngineHandler(tb)
	}
	if o.Dir == "" {
		o.Dir = shmDir(tb)
	}
	srv, err := aeron.Listen(o)
	if err != nil {
		tb.Fatal(err)
	}
	return srv, o
}

// newInProcess listens with o (Handler and Dir filled in when unset) and
// runs a loop with the idle strategy; stopped in cleanup.
func newInProcess(tb testing.TB, o aeron.Options, idle string) *inProcess {
	tb.Helper()
	srv, o := listen(tb, o)
	loop, err := server.NewLoop(server.LoopConfig{Transports: []transport.Server{srv}, Idle: idle})
	if err != nil {
		srv.Close()
		tb.Fatal(err)
	}
	go loop.Run()
	tb.Cleanup(func() { loop.Stop(); <-loop.Done() })
	return &inProcess{srv: srv, loop: loop, o: o}
}

func (p *inProcess) dialOptions(pr proto.Protocol) aeron.DialOptions {
	return aeron.DialOptions{Media: p.o.Media, Endpoint: p.o.Endpoint, Control: p.o.Control, Proto: pr,
		Stream: p.o.Stream, ReplyStream: p.o.ReplyStream, Dir: p.o.Dir, Wait: idle.Backoff}
}

func dial(tb testing.TB, o aeron.DialOptions) *aeron.Conn {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := aeron.Dial(ctx, o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// roundTrip sends req and returns the reply.
func roundTrip(c *aeron.Conn, req []byte) ([]byte, error) {
	// A hang guard, not a timing assertion: a 4 MiB chunked echo (513
	// chunks each way) took over 30 s beside the parallel tests on a
	// machine at load 50, and the 1 MiB one 19 s.
	c.SetDeadline(time.Now().Add(2 * time.Minute))
	if err := c.Write(req); err != nil {
		return nil, err
	}
	return c.ReadAppend(nil)
}

// TestManyClientsInProcess: several connections at once, each checking
// its own replies, over IPC.
func TestManyClientsInProcess(t *testing.T) {
	needDriver(t)
	p := newInProcess(t, aeron.Options{Media: "ipc", Proto: proto.RESP}, server.IdleYield)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 6 {
		c := dial(t, p.dialOptions(proto.RESP))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 200 {
				key := []byte{'k', byte('0' + i)}
				val := []byte{byte(j), byte(i)}
				r, err := roundTrip(c, resp.AppendCommand(nil, []byte("SET"), key, val))
				if err != nil || string(r) != "+OK\r\n" {
					errs <- errors.Join(err, errors.New("SET: "+string(r)))
					return
				}
				r, err = roundTrip(c, resp.AppendCommand(nil, []byte("GET"), key))
				want := "$2\r\n" + string(val) + "\r\n"
				if err != nil || string(r) != want {
					errs <- errors.Join(err, errors.New("GET: "+string(r)))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func dialCtx(o aeron.DialOptions) (*aeron.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return aeron.Dial(ctx, o)
}
