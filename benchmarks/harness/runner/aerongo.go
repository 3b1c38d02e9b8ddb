package runner

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/driver"
	"github.com/goblin-kv/goblin/benchmarks/harness"
)

// aeronGo is the raw Aeron ping-pong over goblin's Go media driver running
// inside each of the two processes (aeron/driver, no driver thread): the
// pong side is goblin-bench aeron-pong, the ping side the measuring
// client, and each runs its own driver's duty cycle in the loop that polls
// its subscription, so one spinning thread per process moves every
// message. Same channels and 32-byte messages as the Java pair's
// aeron-raw case: ping to the server's endpoint, pong to the client's.
type aeronGo struct{}

// NewAeronGo returns the Go-driver raw Aeron ping-pong provider (aeron-udp).
func NewAeronGo() harness.Provider { return aeronGo{} }

func (aeronGo) System() string                { return harness.SysAeronGo }
func (aeronGo) Transport() string             { return harness.TAeronUDP }
func (aeronGo) Protocols() []harness.Protocol { return []harness.Protocol{harness.Raw} }
func (aeronGo) Ops() []harness.Op             { return []harness.Op{harness.Ping} }

func (aeronGo) Check(cfg *harness.Config, _ harness.Protocol) error {
	_, err := cfg.ServerSideHost().Tool(cfg, "goblin-bench")
	return err
}

// Stream ids of the raw ping-pong (Aeron's samples' defaults).
const (
	pingStream = 1002
	pongStream = 1003
)

func (aeronGo) Start(ctx context.Context, cfg *harness.Config, _ harness.Protocol, dir string) (harness.Instance, error) {
	sh, ch := cfg.ServerSideHost(), cfg.ClientSideHost()
	bench, err := sh.Tool(cfg, "goblin-bench")
	if err != nil {
		return nil, err
	}
	clientAddr := cfg.ClientHost
	if clientAddr == "" {
		clientAddr = cfg.ServerHost
	}
	p1, err := sh.FreePort("udp", cfg.ServerHost)
	if err != nil {
		return nil, err
	}
	p2, err := ch.FreePort("udp", clientAddr)
	if err != nil {
		return nil, err
	}
	pingCh := "aeron:udp?endpoint=" + net.JoinHostPort(cfg.ServerHost, strconv.Itoa(p1))
	pongCh := "aeron:udp?endpoint=" + net.JoinHostPort(clientAddr, strconv.Itoa(p2))
	prof := cfg.ForCase(harness.SysAeronGo, harness.TAeronUDP)
	sdir := cfg.HostDir(sh, dir)
	p, err := cfg.Launch(ctx, sh, harness.ProcSpec{Name: "aeron-pong", Dir: sdir, Argv: []string{bench,
		"aeron-pong", "-ping-channel", pingCh, "-pong-channel", pongCh, filepath.Join(sdir, "pong-driver")},
		CPUs: prof.ServerCPU}, nil)
	if err != nil {
		return nil, err
	}
	if err := sh.WaitReady(ctx, p, harness.Readiness{What: "goblin-bench aeron-pong", Log: echoReady}); err != nil {
		p.Stop(graceStop)
		return nil, err
	}
	cfg.Channel("ping (client→server)", pingCh, pingStream)
	cfg.Channel("pong (server→client)", pongCh, pongStream)
	return &echoInstance{proc: p, spec: ProbeSpec{Client: harness.ClientAeronGo, Target: pingCh + " " + pongCh, Proto: harness.Raw, Wait: "spin"},
		info: map[string]string{"server.command": p.CommandLine(),
			"server.idle":     "spin (the pong loop runs its in-process driver's duty cycle and polls)",
			"server.affinity": harness.OrAny(prof.ServerCPU), "channel.ping": pingCh + " stream 1002",
			"channel.pong": pongCh + " stream 1003"}}, nil
}

// goDriverOptions are the in-process drivers' options on both sides:
// socket buffers as the Java pair's (driverProperties), the rest the
// Java driver's defaults.
func goDriverOptions(dir string) driver.Options {
	return driver.Options{Dir: dir, DirDeleteOnStart: true, DirDeleteOnShutdown: true,
		SocketRcvbuf: 2 << 20, SocketSndbuf: 2 << 20}
}

// inProcess is a Go media driver inside this process, worked by the one
// goroutine that also uses its client (no driver thread).
type inProcess struct {
	d     *driver.Driver
	c     *aeron.Client
	start time.Time
}

func newInProcess(dir string) (*inProcess, error) {
	d, err := driver.New(goDriverOptions(dir))
	if err != nil {
		return nil, err
	}
	ip := &inProcess{d: d, start: time.Now()}
	// Connecting and adding wait for the driver: the waiting goroutine
	// runs its duty cycle meanwhile.
	ip.c, err = aeron.Connect(aeron.Options{Dir: dir, DriverTimeout: 30 * time.Second, WhileAwaiting: ip.work})
	if err != nil {
		d.Close()
		return nil, err
	}
	return ip, nil
}

// work runs one duty cycle of the driver.
func (ip *inProcess) work() int { return ip.d.DoWork(int64(time.Since(ip.start))) }

func (ip *inProcess) close() error {
	ip.c.Close()
	return ip.d.Close()
}

// ServeAeronPong is goblin-bench aeron-pong DIR: a Go media driver in DIR
// inside this process, a subscription to pingCh whose every message goes
// back on pongCh, one goroutine spinning on the driver's duty cycle and
// the subscription until ctx ends.
func ServeAeronPong(ctx context.Context, dir, pingCh, pongCh string) error {
	ip, err := newInProcess(dir)
	if err != nil {
		return fmt.Errorf("aeron-pong: %w", err)
	}
	defer ip.close()
	sub, err := ip.c.AddSubscription(pingCh, pingStream)
	if err != nil {
		return fmt.Errorf("aeron-pong: subscribe %s: %w", pingCh, err)
	}
	pub, err := ip.c.AddExclusivePublication(pongCh, pongStream)
	if err != nil {
		return fmt.Errorf("aeron-pong: publish %s: %w", pongCh, err)
	}
	fmt.Fprintf(os.Stderr, "%s: %s -> %s, Go driver in %s\n", echoReady, pingCh, pongCh, dir)
	var failed error
	echo := func(b []byte, _ *aeron.Header) {
		for i := 0; ; i++ {
			r := pub.Offer(b)
			if r > 0 {
				return
			}
			if r == aeron.Closed || r == aeron.MaxPositionExceeded {
				failed = fmt.Errorf("aeron-pong: offer: %d", r)
				return
			}
			ip.work()
			if i&0xffff == 0xffff && ctx.Err() != nil {
				return
			}
		}
	}
	for i := 0; failed == nil; i++ {
		ip.work()
		sub.Poll(echo, 10)
		if i&0xffff == 0 && ctx.Err() != nil {
			return nil
		}
	}
	return failed
}

// aeronGoProber is the Go ping: its own in-process driver, an exclusive
// publication to the server's endpoint and a subscription on its own.
type aeronGoProber struct {
	ip       *inProcess
	pub      *aeron.ExclusivePublication
	sub      *aeron.Subscription
	own      string // the driver's private directory
	msg      [floorMessage]byte
	seq      uint64
	got      bool
	onPong   aeron.FragmentHandler
	deadline time.Time
}

// dialAeronGo starts the client's driver and waits until both streams are
// connected. target is "PING_CHANNEL PONG_CHANNEL".
func dialAeronGo(target string) (*aeronGoProber, error) {
	var pingCh, pongCh string
	if _, err := fmt.Sscan(target, &pingCh, &pongCh); err != nil {
		return nil, fmt.Errorf("aeron-go: target %q: want PING_CHANNEL PONG_CHANNEL", target)
	}
	base := os.TempDir()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		base = "/dev/shm"
	}
	own, err := os.MkdirTemp(base, "goblin-bench-aeron-go-")
	if err != nil {
		return nil, err
	}
	ip, err := newInProcess(filepath.Join(own, "aeron"))
	if err != nil {
		os.RemoveAll(own)
		return nil, fmt.Errorf("aeron-go: %w", err)
	}
	p := &aeronGoProber{ip: ip, own: own}
	p.onPong = p.pong
	fail := func(err error) (*aeronGoProber, error) {
		p.Close()
		return nil, err
	}
	if p.sub, err = ip.c.AddSubscription(pongCh, pongStream); err != nil {
		return fail(fmt.Errorf("aeron-go: subscribe %s: %w", pongCh, err))
	}
	if p.pub, err = ip.c.AddExclusivePublication(pingCh, pingStream); err != nil {
		return fail(fmt.Errorf("aeron-go: publish %s: %w", pingCh, err))
	}
	deadline := time.Now().Add(60 * time.Second)
	for !p.pub.IsConnected() || p.sub.ImageCount() == 0 {
		if ip.work() == 0 {
			time.Sleep(100 * time.Microsecond)
		}
		if time.Now().After(deadline) {
			return fail(fmt.Errorf("aeron-go: the pong side did not connect within 60 s (ping connected %v, pong images %d)",
				p.pub.IsConnected(), p.sub.ImageCount()))
		}
	}
	p.deadline = time.Now().Add(time.Minute)
	return p, nil
}

func (p *aeronGoProber) pong(b []byte, _ *aeron.Header) {
	if len(b) == floorMessage && getUint64(b) == p.seq {
		p.got = true
	}
}

func (p *aeronGoProber) Bound(deadline time.Time) { p.deadline = deadline }

// Do offers one numbered message and runs the driver and polls until the
// same one comes back. It allocates nothing.
func (p *aeronGoProber) Do(harness.Op) error {
	p.seq++
	putUint64(p.msg[:], p.seq)
	for i := 1; ; i++ {
		r := p.pub.Offer(p.msg[:])
		if r > 0 {
			break
		}
		if r == aeron.Closed || r == aeron.MaxPositionExceeded {
			return fmt.Errorf("aeron-go: offer: %d", r)
		}
		p.ip.work()
		if i&0xfff == 0 && time.Now().After(p.deadline) {
			return fmt.Errorf("aeron-go: back pressured until the deadline")
		}
	}
	p.got = false
	for i := 1; !p.got; i++ {
		p.ip.work()
		p.sub.Poll(p.onPong, 1)
		if i&0xfff == 0 && time.Now().After(p.deadline) {
			return fmt.Errorf("aeron-go: no pong before the deadline")
		}
	}
	return nil
}

func (p *aeronGoProber) Describe() string {
	return "goblin's Go Aeron client and Go media driver in-process (ping: one thread runs the driver's duty cycle and polls), 32-byte messages"
}

func (p *aeronGoProber) Close() error {
	err := p.ip.close()
	os.RemoveAll(p.own)
	return err
}
