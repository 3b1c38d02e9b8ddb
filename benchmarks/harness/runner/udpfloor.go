package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"time"

	"github.com/goblin-kv/goblin/benchmarks/harness"
	"github.com/goblin-kv/goblin/internal/rawpoll"
	"golang.org/x/sys/unix"
)

// udpFloor is the raw UDP floor of the aeron-udp transport: a 32-byte
// datagram bounced between two processes, each busy-polling a non-blocking
// socket (the server side is goblin-bench udp-echo, the measuring client
// the harness itself or a goblin-bench probe on the client host). No
// protocol, no loss repair, no copy beyond the kernel's: what an Aeron UDP
// round trip on the same path cannot beat.
type udpFloor struct{}

// NewUDPFloor returns the raw UDP socket ping-pong provider.
func NewUDPFloor() harness.Provider { return udpFloor{} }

func (udpFloor) System() string                { return harness.SysUDPFloor }
func (udpFloor) Transport() string             { return harness.TAeronUDP }
func (udpFloor) Protocols() []harness.Protocol { return []harness.Protocol{harness.Raw} }
func (udpFloor) Ops() []harness.Op             { return []harness.Op{harness.Ping} }

func (udpFloor) Check(cfg *harness.Config, _ harness.Protocol) error {
	_, err := cfg.ServerSideHost().Tool(cfg, "goblin-bench")
	return err
}

// floorMessage is the floor's datagram length, Aeron's Ping's message.
const floorMessage = 32

// echoInstance is a running goblin-bench udp-echo (or aeron-pong: the
// raw Go Aeron ping-pong shares it) and what its client dials.
type echoInstance struct {
	proc   harness.Proc
	spec   ProbeSpec
	info   map[string]string
	remove []string
}

func (u udpFloor) Start(ctx context.Context, cfg *harness.Config, _ harness.Protocol, dir string) (harness.Instance, error) {
	sh := cfg.ServerSideHost()
	bench, err := sh.Tool(cfg, "goblin-bench")
	if err != nil {
		return nil, err
	}
	port, err := sh.FreePort("udp", cfg.ServerHost)
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort(cfg.ServerHost, strconv.Itoa(port))
	prof := cfg.ForCase(harness.SysUDPFloor, harness.TAeronUDP)
	sdir := cfg.HostDir(sh, dir)
	p, err := cfg.Launch(ctx, sh, harness.ProcSpec{Name: "udp-echo", Dir: sdir, Argv: []string{bench, "udp-echo", addr},
		CPUs: prof.ServerCPU}, nil)
	if err != nil {
		return nil, err
	}
	if err := sh.WaitReady(ctx, p, harness.Readiness{What: "goblin-bench udp-echo " + addr, Log: echoReady}); err != nil {
		p.Stop(graceStop)
		return nil, err
	}
	cfg.Channel("udp echo", "udp://"+addr, 0)
	return &echoInstance{proc: p, spec: ProbeSpec{Client: harness.ClientUDPFloor, Target: addr, Proto: harness.Raw, Wait: "spin"},
		info: map[string]string{"server.command": p.CommandLine(), "server.idle": "spin (busy-polls a non-blocking socket)",
			"server.affinity": harness.OrAny(prof.ServerCPU)}}, nil
}

func (in *echoInstance) Dial(ctx context.Context) (harness.Prober, error) {
	cfg := harness.DefaultConfig()
	return dialProbe(ctx, &cfg, in.spec)
}

func (in *echoInstance) probeSpec() ProbeSpec    { return in.spec }
func (in *echoInstance) Info() map[string]string { return in.info }

func (in *echoInstance) Close() error {
	err := in.proc.Stop(graceStop)
	for _, d := range in.remove {
		os.RemoveAll(d)
	}
	return err
}

// echoReady is what udp-echo and aeron-pong log once they serve.
const echoReady = "echo: ready"

// ServeUDPEcho is goblin-bench udp-echo ADDR: it binds ADDR and sends
// every datagram back to its sender, busy-polling a non-blocking socket,
// until ctx ends. The first datagram's sender becomes the socket's peer
// (connect), so the loop reads and writes without building an address and
// allocates nothing; a datagram from elsewhere then never arrives (the
// harness runs one measuring client per echo process).
func ServeUDPEcho(ctx context.Context, addr string) error {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return fmt.Errorf("udp-echo: %q is not IP:PORT: %w", addr, err)
	}
	fd, err := udpSocket(ap, true)
	if err != nil {
		return fmt.Errorf("udp-echo: bind %s: %w", addr, err)
	}
	defer unix.Close(fd)
	fmt.Fprintf(os.Stderr, "%s on %s\n", echoReady, addr)
	buf := make([]byte, 64*1024)
	connected := false
	for i := 0; ; i++ {
		if i&0xffff == 0 && ctx.Err() != nil {
			return nil
		}
		var n int
		if connected {
			n, err = rawpoll.Read(fd, buf)
		} else {
			var from unix.Sockaddr
			n, from, err = unix.Recvfrom(fd, buf, 0)
			if err == nil {
				if err := unix.Connect(fd, from); err != nil {
					return fmt.Errorf("udp-echo: connect to the first sender: %w", err)
				}
				connected = true
			}
		}
		if err != nil {
			if err == unix.EAGAIN || err == unix.EINTR || err == unix.ECONNREFUSED {
				continue
			}
			return fmt.Errorf("udp-echo: read: %w", err)
		}
		if _, err := rawpoll.Write(fd, buf[:n]); err != nil && err != unix.EAGAIN && err != unix.ECONNREFUSED {
			return fmt.Errorf("udp-echo: write: %w", err)
		}
	}
}

// udpSocket opens a non-blocking UDP socket bound to (bind) or connected
// to ap.
func udpSocket(ap netip.AddrPort, bind bool) (int, error) {
	family, sa := unix.AF_INET, unix.Sockaddr(nil)
	if ap.Addr().Is4() {
		sa = &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	} else {
		family = unix.AF_INET6
		sa = &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
	}
	fd, err := unix.Socket(family, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if bind {
		err = unix.Bind(fd, sa)
	} else {
		err = unix.Connect(fd, sa)
	}
	if err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// udpFloorProber is the floor's measuring client: a connected non-blocking
// socket, busy-polled for each reply.
type udpFloorProber struct {
	fd       int
	msg, in  [floorMessage]byte
	seq      uint64
	deadline time.Time
}

func dialUDPFloor(addr string) (*udpFloorProber, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return nil, fmt.Errorf("udp floor: %q is not IP:PORT: %w", addr, err)
	}
	fd, err := udpSocket(ap, false)
	if err != nil {
		return nil, fmt.Errorf("udp floor: connect %s: %w", addr, err)
	}
	p := &udpFloorProber{fd: fd}
	// The echo answers its first sender only: make this one, and check it
	// answers at all, before the measurement (for up to 20 s: a datagram
	// may be lost, or the echo not bound yet, which refuses it).
	for give := time.Now().Add(20 * time.Second); time.Now().Before(give); time.Sleep(20 * time.Millisecond) {
		p.deadline = time.Now().Add(time.Second)
		if err = p.Do(harness.Ping); err == nil {
			p.deadline = time.Now().Add(time.Minute)
			return p, nil
		}
	}
	unix.Close(fd)
	return nil, fmt.Errorf("udp floor: no echo from %s: %w", addr, err)
}

func (p *udpFloorProber) Bound(deadline time.Time) { p.deadline = deadline }

// Do sends one numbered datagram and spins until the same one comes back.
// It allocates nothing.
func (p *udpFloorProber) Do(harness.Op) error {
	p.seq++
	putUint64(p.msg[:], p.seq)
	if _, err := rawpoll.Write(p.fd, p.msg[:]); err != nil {
		return fmt.Errorf("udp floor: send: %w", err)
	}
	for i := 1; ; i++ {
		n, err := rawpoll.Read(p.fd, p.in[:])
		if err == nil && n == floorMessage && getUint64(p.in[:]) == p.seq {
			return nil
		}
		if err != nil && err != unix.EAGAIN && err != unix.EINTR {
			return fmt.Errorf("udp floor: receive: %w", err)
		}
		if i&0xfff == 0 && time.Now().After(p.deadline) {
			return errFloorTimeout
		}
	}
}

var errFloorTimeout = errors.New("udp floor: no reply before the deadline (a lost datagram is not resent)")

func (p *udpFloorProber) Describe() string {
	return "raw UDP ping-pong: 32-byte datagrams, both sides busy-polling non-blocking sockets"
}

func (p *udpFloorProber) Close() error { return unix.Close(p.fd) }

func putUint64(b []byte, v uint64) {
	for i := range 8 {
		b[i] = byte(v >> (8 * i))
	}
}

func getUint64(b []byte) uint64 {
	var v uint64
	for i := range 8 {
		v |= uint64(b[i]) << (8 * i)
	}
	return v
}
