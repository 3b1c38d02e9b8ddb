package ring_test

// Helpers shared by the end-to-end tests and the benchmarks: the command
// engine adapted to ring.Handler, an in-process server, a checked SET/GET
// workload, and the helper processes (the test binary re-executed in a
// role chosen by GOBLIN_RING_ROLE).

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/engine"
	"github.com/goblin-kv/goblin/idle"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/proto/sbe"
	"github.com/goblin-kv/goblin/server"
	"github.com/goblin-kv/goblin/store"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/ring"
)

func TestMain(m *testing.M) {
	switch os.Getenv("GOBLIN_RING_ROLE") {
	case "":
		testproc.Main(m)
	case "server":
		os.Exit(serverMain())
	case "client":
		os.Exit(clientMain())
	case "dial":
		os.Exit(dialMain())
	default:
		fmt.Fprintln(os.Stderr, "unknown GOBLIN_RING_ROLE")
		os.Exit(2)
	}
}

// newServer builds a store, an engine and a ring server in dir, and a real
// server loop over it with the given idle strategy.
func newServer(dir string, p proto.Protocol, idle string) (*ring.Server, *server.Loop, error) {
	st, err := store.New(store.Options{})
	if err != nil {
		return nil, nil, err
	}
	eng := engine.NewEngine(st, engine.Options{})
	rs, err := ring.Listen(ring.Options{Dir: dir, Proto: p, Handler: server.NewEngineHandler(eng, new(engine.Stats), "ring/"+p.String())})
	if err != nil {
		return nil, nil, err
	}
	loop, err := server.NewLoop(server.LoopConfig{Transports: []transport.Server{rs}, Idle: idle, Tick: st.Tick})
	if err != nil {
		rs.Close()
		return nil, nil, err
	}
	return rs, loop, nil
}

// serverMain is the "server" role: serve GOBLIN_RING_DIR until SIGTERM.
func serverMain() int {
	p, _ := proto.Parse(os.Getenv("GOBLIN_RING_PROTO"))
	idle := os.Getenv("GOBLIN_RING_IDLE")
	if idle == "" {
		idle = server.IdleBackoff
	}
	rs, loop, err := newServer(os.Getenv("GOBLIN_RING_DIR"), p, idle)
	if err != nil {
		fmt.Println("listen error:", err)
		return 1
	}
	var st ring.Stats
	rs.Stats(&st)
	fmt.Printf("ready pid=%d swept=%d\n", os.Getpid(), st.Swept)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-sig; loop.Stop() }()
	if err := loop.Run(); err != nil {
		fmt.Println("loop error:", err)
		return 1
	}
	fmt.Println("stopped")
	return 0
}

// clientMain is the "client" role: run the checked workload and say how it
// went.
func clientMain() int {
	p, _ := proto.Parse(os.Getenv("GOBLIN_RING_PROTO"))
	id, _ := strconv.Atoi(os.Getenv("GOBLIN_RING_ID"))
	n, _ := strconv.ParseInt(os.Getenv("GOBLIN_RING_N"), 10, 64)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// A server that stops beating for ServerTimeout is taken for gone:
	// the default 3 s is a stall a loaded CI machine can put on a server
	// loop serving 8 client processes under the race detector (TestStress
	// once failed so at load 13). These clients check replies; a server's
	// exit still reaches them at once (its socket hangs up), and the
	// timeout itself is TestStoppedServerHeartbeat's.
	c, err := ring.Dial(ctx, os.Getenv("GOBLIN_RING_DIR"), ring.DialOptions{Proto: p, Wait: idle.Backoff, Backoff: idle.Params{Spins: 256, Yields: 256},
		ServerTimeout: 30 * time.Second})
	if err != nil {
		fmt.Println("dial error:", err)
		return 1
	}
	w := newWorkload(id, p, 64)
	w.progress = func(done int64) {
		if done == 1000 {
			fmt.Println("running")
		}
	}
	if err := w.run(c, n); err != nil {
		fmt.Println("workload error:", err)
		return 3
	}
	if gate := os.Getenv("GOBLIN_RING_GATE"); gate != "" {
		// Hold the connection open until the test says go, then run as
		// many requests again.
		fmt.Println("phase1")
		err := testkit.Poll(5*time.Minute, "the test to create the gate file "+gate, func() (bool, string) {
			_, err := os.Stat(gate)
			return err == nil, fmt.Sprint(err)
		})
		if err != nil {
			fmt.Println("workload error:", err)
			return 3
		}
		if err := w.run(c, 2*n); err != nil {
			fmt.Println("workload error:", err)
			return 3
		}
	}
	fmt.Printf("done requests=%d\n", w.replies)
	c.Close()
	return 0
}

// dialMain is the "dial" role: dial GOBLIN_RING_DIR once and print the
// error, if any.
func dialMain() int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := ring.Dial(ctx, os.Getenv("GOBLIN_RING_DIR"), ring.DialOptions{AnyProto: true, Wait: idle.Backoff})
	if err != nil {
		fmt.Printf("dial error: %v (permission: %t)\n", err, errors.Is(err, ring.ErrPermission) && errors.Is(err, os.ErrPermission))
		return 1
	}
	c.Close()
	fmt.Println("dialled")
	return 0
}

// workload pipelines SET k v / GET k pairs, up to window requests in
// flight, with values that vary in length and content with every request,
// and checks every reply against what was written: a reply lost,
// duplicated, reordered or torn fails it.
type workload struct {
	id       int
	p        proto.Protocol
	window   int
	codec    sbe.Codec
	req      []byte
	rep      []byte
	sreq     command.Request
	srep     command.Reply
	sent     int64
	replies  int64
	progress func(done int64)
}

func newWorkload(id int, p proto.Protocol, window int) *workload {
	return &workload{id: id, p: p, window: window}
}

// keyFor and valueFor are what request i writes: request 2j is SET
// key(j) value(j), request 2j+1 is GET key(j).
func (w *workload) keyFor(j int64) []byte {
	return fmt.Appendf(nil, "c%d:k%d", w.id, j%509)
}

func (w *workload) valueFor(j int64) []byte {
	n := 1 + int(uint64(j*2654435761+int64(w.id)*40503)%200)
	v := make([]byte, n)
	binary.LittleEndian.AppendUint64(v[:0], uint64(j)) // first bytes name the request when long enough
	for i := 8; i < n; i++ {
		v[i] = byte('a' + (int64(i)+j+int64(w.id))%26)
	}
	if n < 8 {
		for i := range v {
			v[i] = byte('0' + (j+int64(i))%10)
		}
	}
	return v
}

func (w *workload) encode(i int64) []byte {
	j := i / 2
	key := w.keyFor(j)
	if w.p == proto.RESP {
		if i%2 == 0 {
			return resp.AppendCommand(w.req[:0], []byte("SET"), key, w.valueFor(j))
		}
		return resp.AppendCommand(w.req[:0], []byte("GET"), key)
	}
	w.sreq = command.Request{CorrelationID: uint64(i), Op: command.OpGet, Key: key}
	if i%2 == 0 {
		w.sreq.Op, w.sreq.Value = command.OpSet, w.valueFor(j)
	}
	return w.codec.AppendRequest(w.req[:0], &w.sreq)
}

func (w *workload) check(i int64, got []byte) error {
	j := i / 2
	if w.p == proto.RESP {
		want := []byte("+OK\r\n")
		if i%2 == 1 {
			want = resp.AppendBulk(nil, w.valueFor(j))
		}
		if !bytes.Equal(got, want) {
			return fmt.Errorf("client %d request %d: reply %q, want %q", w.id, i, got, want)
		}
		return nil
	}
	if err := w.codec.DecodeReply(got, &w.srep); err != nil {
		return fmt.Errorf("client %d request %d: %v", w.id, i, err)
	}
	r := &w.srep
	if r.CorrelationID != uint64(i) {
		return fmt.Errorf("client %d: reply to request %d where %d was due", w.id, r.CorrelationID, i)
	}
	if i%2 == 0 {
		if r.Status != command.OK || string(r.Value) != "OK" {
			return fmt.Errorf("client %d request %d: SET answered %v %q", w.id, i, r.Status, r.Value)
		}
		return nil
	}
	if r.Kind != command.Bulk || !bytes.Equal(r.Value, w.valueFor(j)) {
		return fmt.Errorf("client %d request %d: GET answered %v %q, want %q", w.id, i, r.Kind, r.Value, w.valueFor(j))
	}
	return nil
}

// run sends n requests (n rounded up to even) and checks all the replies.
func (w *workload) run(c transport.Conn, n int64) error {
	n += n % 2
	for w.replies < n {
		for w.sent < n && w.sent-w.replies < int64(w.window) {
			w.req = w.encode(w.sent)
			if err := c.Write(w.req); err != nil {
				return fmt.Errorf("write %d: %w", w.sent, err)
			}
			w.sent++
		}
		c.SetDeadline(time.Now().Add(30 * time.Second))
		var err error
		if w.rep, err = c.ReadAppend(w.rep[:0]); err != nil {
			return fmt.Errorf("read reply %d: %w", w.replies, err)
		}
		if err := w.check(w.replies, w.rep); err != nil {
			return err
		}
		w.replies++
		if w.progress != nil {
			w.progress(w.replies)
		}
	}
	return nil
}
