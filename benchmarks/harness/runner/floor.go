package runner

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/goblin-kv/goblin/benchmarks/harness"
)

// shmFloor is the raw shared-memory floor: two threads of this process
// bounce a counter through two cache lines with no protocol, no framing and
// no copy. A goblin ring round trip cannot beat it; the ratio to it says how
// close the transport comes to the hardware.
type shmFloor struct{}

// NewShmFloor returns the shared-memory floor provider.
func NewShmFloor() harness.Provider { return shmFloor{} }

func (shmFloor) System() string                                { return harness.SysShmFloor }
func (shmFloor) Transport() string                             { return harness.TRing }
func (shmFloor) Protocols() []harness.Protocol                 { return []harness.Protocol{harness.Raw} }
func (shmFloor) Ops() []harness.Op                             { return []harness.Op{harness.Ping} }
func (shmFloor) Check(*harness.Config, harness.Protocol) error { return nil }

// floorLines holds the two counters a cache line apart on each side, so
// the request and the reply each cost exactly one cache-line transfer.
type floorLines struct {
	_    [64]byte
	ping atomic.Uint64 // written by the measuring client, read by the echo thread
	_    [120]byte
	pong atomic.Uint64 // written by the echo thread, read by the measuring client
	_    [120]byte
	stop atomic.Bool // written by Close, read by the echo thread
}

type floorInstance struct {
	lines *floorLines
	done  chan struct{}
	cpu   string
	idle  string
	echo  string
	err   error
}

func (shmFloor) Start(ctx context.Context, cfg *harness.Config, _ harness.Protocol, _ string) (harness.Instance, error) {
	prof := cfg.Profile
	in := &floorInstance{lines: new(floorLines), done: make(chan struct{}), cpu: prof.ServerCPU, idle: prof.ServerIdle}
	started := make(chan error, 1)
	go in.serve(started)
	if err := <-started; err != nil {
		return nil, err
	}
	return in, nil
}

// serve is the echo thread: it waits for ping to move past what it last
// answered and publishes the same value in pong. Store and load are
// sequentially consistent (sync/atomic), which on amd64 is a plain load and
// an XCHG store: the reply is visible only after the request was seen.
func (in *floorInstance) serve(started chan<- error) {
	defer close(in.done)
	restore, err := harness.PinThread(in.cpu)
	if err != nil {
		started <- err
		return
	}
	defer restore()
	in.echo = harness.ThreadAffinity()
	started <- nil
	var last uint64
	idle := 0
	for !in.lines.stop.Load() {
		v := in.lines.ping.Load()
		if v == last {
			idleWait(in.idle, &idle)
			continue
		}
		idle = 0
		last = v
		in.lines.pong.Store(v)
	}
}

// idleWait applies an idle strategy after n consecutive empty polls.
func idleWait(strategy string, n *int) {
	*n++
	switch strategy {
	case "spin", "noop":
	case "yield":
		runtime.Gosched()
	default: // backoff: spin, then yield, then park briefly
		switch {
		case *n < 100:
		case *n < 200:
			runtime.Gosched()
		default:
			time.Sleep(50 * time.Microsecond)
		}
	}
}

func (in *floorInstance) Dial(context.Context) (harness.Prober, error) {
	return &floorProber{lines: in.lines, wait: "spin"}, nil
}

func (in *floorInstance) Info() map[string]string {
	return map[string]string{
		"channel":         "two cache lines in this process's memory (sync/atomic load and store)",
		"server.idle":     in.idle,
		"server.affinity": in.echo,
	}
}

func (in *floorInstance) Close() error {
	in.lines.stop.Store(true)
	<-in.done
	return in.err
}

type floorProber struct {
	lines *floorLines
	wait  string
	seq   uint64
}

// Do publishes the next sequence number and spins until the echo thread
// returns it.
func (p *floorProber) Do(harness.Op) error {
	p.seq++
	p.lines.ping.Store(p.seq)
	for i := 0; p.lines.pong.Load() != p.seq; i++ {
		if i&(1<<20) != 0 && p.lines.stop.Load() {
			return fmt.Errorf("%w: the floor's echo thread stopped", harness.ErrBadReply)
		}
	}
	return nil
}

func (p *floorProber) Describe() string {
	return "raw shared-memory ping-pong (one spinning thread each side)"
}
func (p *floorProber) Close() error { return nil }
