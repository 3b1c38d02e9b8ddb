package ring

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/internal/shm"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/transport"
)

// Wait is how a client waits for a reply (or for room in a full request
// ring).
type Wait uint8

const (
	// Spin busy-polls the reply ring: the lowest latency, and one whole CPU
	// core while waiting.
	Spin Wait = iota
	// Yield spins SpinLimit times, then calls runtime.Gosched between polls.
	Yield
	// Park spins SpinLimit times, yields as long again, then sleeps ParkTime
	// between polls: cheap on CPU, adds up to ParkTime of latency to waits
	// that outlast the spin.
	Park
)

// ParseWait turns "spin", "yield" or "park" into a Wait.
func ParseWait(s string) (Wait, error) {
	switch s {
	case "spin", "":
		return Spin, nil
	case "yield":
		return Yield, nil
	case "park":
		return Park, nil
	}
	return 0, fmt.Errorf("ring: wait %q: want spin, yield or park", s)
}

func (w Wait) String() string {
	switch w {
	case Spin:
		return "spin"
	case Yield:
		return "yield"
	case Park:
		return "park"
	}
	return fmt.Sprintf("wait(%d)", uint8(w))
}

// Defaults for DialOptions.
const (
	DefaultSpinLimit     = 1 << 14
	DefaultParkTime      = 50 * time.Microsecond
	DefaultServerTimeout = 3 * time.Second
	// livenessEvery is how often (in nanoseconds of waiting) a waiting client
	// checks that the server still lives: one poll(2) on the handshake
	// socket and two loads from the header.
	livenessEvery = int64(time.Millisecond)
)

// DialOptions configure Dial. The zero value spins and speaks RESP.
type DialOptions struct {
	// Proto is the protocol to speak; the server must speak it too.
	Proto proto.Protocol
	// Wait is the waiting strategy. Default Spin.
	Wait Wait
	// SpinLimit is how many empty polls Yield and Park spin first.
	SpinLimit int
	// ParkTime is how long Park sleeps between polls.
	ParkTime time.Duration
	// ServerTimeout is how long the server's heartbeat may stand still
	// while a client waits before the client gives up on it with
	// transport.ErrServerGone (a dead server is noticed sooner: its end of
	// the handshake socket hangs up).
	ServerTimeout time.Duration
}

func (o *DialOptions) ensureDefaults() {
	if o.SpinLimit <= 0 {
		o.SpinLimit = DefaultSpinLimit
	}
	if o.ParkTime <= 0 {
		o.ParkTime = DefaultParkTime
	}
	if o.ServerTimeout <= 0 {
		o.ServerTimeout = DefaultServerTimeout
	}
}

// Conn is the client side of one ring pair. It implements transport.Conn
// and, like it, is not safe for concurrent use.
type Conn struct {
	o        DialOptions
	dir      string
	fd       int    // handshake socket, held open for liveness both ways
	mem      []byte // the client's file
	req      producer
	rep      consumer
	deadline int64 // monotonic ns since clockBase; 0 = none
	err      error // sticky: set once the server is gone
	closed   bool
	lastBeat int64
	beatAt   int64
	pfd      [1]unix.PollFd
	bell     int           // the server's doorbell eventfd (doorbell.go); -1: none
	one      [8]byte       // what a ring writes: 1 as a native-endian uint64
	rang     bool          // rang the doorbell since the last reply: yield while waiting
	fenced   bool          // publish requests with a fence: no server membarrier (doorbell.go)
	zero     unix.Timespec // Ppoll's timeout: unix.Poll would allocate one
}

var clockBase = time.Now()

// mono is a monotonic clock in nanoseconds.
func mono() int64 { return int64(time.Since(clockBase)) }

// Dial connects to the ring server in dir: it asks the server for a ring
// pair over the handshake socket, maps the file it names, and keeps the
// socket open so each side notices when the other dies.
func Dial(ctx context.Context, dir string, o DialOptions) (*Conn, error) {
	o.ensureDefaults()
	sock := filepath.Join(dir, socketName)
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("ring: socket: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			unix.Close(fd)
		}
	}()
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: sock}); err != nil {
		return nil, fmt.Errorf("%w at %s: %v", ErrNoServer, dir, err)
	}
	if _, err := unix.Write(fd, []byte(helloLine(o.Proto))); err != nil {
		return nil, fmt.Errorf("ring: hello to %s: %w", sock, err)
	}
	line, fds, err := readLine(ctx, fd)
	// The answer carries the server's doorbell; a server without one sends
	// none, and the client then never rings.
	bell := -1
	for _, f := range fds {
		if bell < 0 && err == nil {
			bell = f
		} else {
			unix.Close(f)
		}
	}
	defer func() {
		if !ok && bell >= 0 {
			unix.Close(bell)
		}
	}()
	if err != nil {
		return nil, fmt.Errorf("ring: handshake with %s: %w", sock, err)
	}
	if msg, isErr := strings.CutPrefix(line, "ERR "); isErr {
		return nil, fmt.Errorf("%w: %s", ErrRejected, msg)
	}
	name, isOK := strings.CutPrefix(line, "OK ")
	if !isOK || name != filepath.Base(name) || !strings.HasPrefix(name, filePrefix) || !strings.HasSuffix(name, fileSuffix) {
		return nil, fmt.Errorf("ring: handshake with %s: bad answer %q", sock, line)
	}
	mem, err := shm.Map(filepath.Join(dir, name))
	if err != nil {
		return nil, fmt.Errorf("ring: %w", err)
	}
	g, err := readHeader(mem)
	// Protocol: written by the server (plain) before it sent the file name;
	// read here (plain) after receiving it; the socket orders the two.
	if fp := proto.Protocol(shm.GetInt32(mem, offProto)); err == nil && fp != o.Proto {
		err = fmt.Errorf("%w: file speaks %v", errBadFile, fp)
	}
	if err != nil {
		shm.Unmap(mem)
		return nil, err
	}
	prefault(mem)
	c := &Conn{o: o, dir: dir, fd: fd, mem: mem,
		req: newProducer(mem, g.reqBase, g.records, g.recordSize),
		rep: newConsumer(mem, g.repBase, g.records, g.recordSize), bell: bell}
	binary.NativeEndian.PutUint64(c.one[:], 1)
	// Flags: written by the server (plain) before it sent the file name,
	// read here (plain) after; the socket orders the two.
	c.fenced = shm.GetInt32(mem, offFlags)&flagBarrier == 0 || !clientBarrier()
	c.pfd[0] = unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}
	ok = true
	return c, nil
}

// readLine reads the server's one-line answer, honouring ctx, and the
// descriptors that came with it (the doorbell). The caller owns the
// descriptors, error or not.
func readLine(ctx context.Context, fd int) (line string, fds []int, err error) {
	var buf []byte
	var b [256]byte
	oob := make([]byte, unix.CmsgSpace(4*4))
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		if err := ctx.Err(); err != nil {
			return "", fds, err
		}
		wait := 50 // ms, so a cancelled ctx is seen soon
		if d, ok := ctx.Deadline(); ok {
			if left := time.Until(d); left < 50*time.Millisecond {
				wait = int(left/time.Millisecond) + 1
			}
		}
		if n, err := unix.Poll(pfd, wait); err != nil && !errors.Is(err, unix.EINTR) {
			return "", fds, err
		} else if n == 0 {
			continue
		}
		n, oobn, _, _, err := unix.Recvmsg(fd, b[:], oob, unix.MSG_CMSG_CLOEXEC)
		if err != nil {
			if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
				continue
			}
			return "", fds, err
		}
		if oobn > 0 {
			fds = append(fds, takeRights(oob[:oobn])...)
		}
		if n == 0 {
			return "", fds, fmt.Errorf("%w: closed during handshake", transport.ErrServerGone)
		}
		buf = append(buf, b[:n]...)
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			return string(buf[:i]), fds, nil
		}
		if len(buf) > 4096 {
			return "", fds, errors.New("answer too long")
		}
	}
}

// MaxMessage is the largest message one record carries, either way.
func (c *Conn) MaxMessage() int { return c.req.maxBytes }

// Write puts one request into the request ring. It waits (as ReadAppend
// does) only while the ring is full.
func (c *Conn) Write(p []byte) error {
	if c.closed {
		return transport.ErrClosed
	}
	if c.err != nil {
		return c.err
	}
	if len(p) > c.req.maxBytes {
		return fmt.Errorf("%w: request of %d bytes, ring records carry at most %d", transport.ErrMessageTooLarge, len(p), c.req.maxBytes)
	}
	if !c.req.hasSpace() {
		if err := c.waitFor(false); err != nil {
			return err
		}
	}
	copy(c.req.claim()[:len(p)], p)
	if c.fenced {
		c.req.publishFenced(len(p), false)
	} else {
		c.req.publish(len(p), false)
	}
	c.ringIfParked()
	return nil
}

// ReadAppend appends the next reply message to dst. It spins (or follows
// the Wait strategy) until the reply arrives, the deadline passes
// (transport.ErrTimeout) or the server goes (transport.ErrServerGone). A
// reply too large for a record is consumed and reported as
// transport.ErrMessageTooLarge.
func (c *Conn) ReadAppend(dst []byte) ([]byte, error) {
	if c.closed {
		return dst, transport.ErrClosed
	}
	msg, tooLarge, ok := c.rep.peek()
	if !ok {
		if err := c.waitFor(true); err != nil {
			return dst, err
		}
		msg, tooLarge, _ = c.rep.peek()
	}
	if tooLarge {
		n := c.rep.headLen()
		c.rep.release()
		return dst, fmt.Errorf("%w: reply of %d bytes, ring records carry at most %d", transport.ErrMessageTooLarge, n, c.rep.size-recHeader)
	}
	dst = append(dst, msg...)
	c.rep.release()
	c.rang = false
	return dst, nil
}

// waitFor waits until a reply is ready (reply) or the request ring has room
// (!reply).
func (c *Conn) waitFor(reply bool) error {
	// Hand back the replies read so far before waiting: the server may be
	// waiting for room in the reply ring.
	c.rep.commit()
	// The server may have parked since Write looked, and room just made in
	// the reply ring may be what it waits for.
	c.ringIfParked()
	start := mono()
	nextCheck := start + livenessEvery
	c.beatAt = start
	spins := 0
	for {
		if reply {
			if _, _, ok := c.rep.peek(); ok {
				c.rang = false
				return nil
			}
		} else if c.req.hasSpace() {
			c.rang = false
			return nil
		}
		if c.rang {
			// This client woke a parked server, whose thread the kernel
			// often queues on the waker's CPU: spinning here would keep it
			// from running for up to a time slice. Give the CPU up between
			// polls until it answers (a system call of about a
			// microsecond when nothing else wants the CPU).
			schedYield()
		}
		spins++
		if spins&63 != 0 && c.o.Wait == Spin {
			continue
		}
		now := mono()
		if c.deadline != 0 && now >= c.deadline {
			return transport.ErrTimeout
		}
		if now >= nextCheck {
			nextCheck = now + livenessEvery
			c.ringIfParked()
			if err := c.checkServer(now); err != nil {
				if reply { // a reply published before the server went is still good
					if _, _, ok := c.rep.peek(); ok {
						return nil
					}
				}
				c.err = err
				return err
			}
		}
		switch {
		case c.o.Wait == Spin || spins < c.o.SpinLimit:
		case c.o.Wait == Yield || spins < 2*c.o.SpinLimit:
			runtime.Gosched()
		default:
			time.Sleep(c.o.ParkTime)
		}
	}
}

// checkServer reports transport.ErrServerGone when the server closed this
// client, died (its end of the socket hung up) or stopped beating.
func (c *Conn) checkServer(now int64) error {
	// Server state: written by the server (release) when it drops this
	// client or closes; read here (acquire).
	if shm.LoadInt64Acquire(c.mem, offSrvState) == stateClosed {
		return fmt.Errorf("%w: server at %s closed the connection", transport.ErrServerGone, c.dir)
	}
	// The server never writes to the socket after the handshake, so any
	// readiness is its end hanging up: it exited or was killed.
	if n, err := unix.Ppoll(c.pfd[:], &c.zero, nil); err == nil && n > 0 && c.pfd[0].Revents != 0 {
		return fmt.Errorf("%w: server at %s hung up (exited or was killed)", transport.ErrServerGone, c.dir)
	}
	// Heartbeat: written by the server (release) every liveness interval,
	// read here (acquire). Only change matters, not the value.
	if b := shm.LoadInt64Acquire(c.mem, offBeat); b != c.lastBeat {
		c.lastBeat, c.beatAt = b, now
	} else if now-c.beatAt > int64(c.o.ServerTimeout) {
		return fmt.Errorf("%w: server at %s stopped its heartbeat %v ago", transport.ErrServerGone, c.dir, time.Duration(now-c.beatAt))
	}
	return nil
}

// SetDeadline bounds the following Write and ReadAppend calls; the zero
// time means none.
func (c *Conn) SetDeadline(t time.Time) error {
	if c.closed {
		return transport.ErrClosed
	}
	if t.IsZero() {
		c.deadline = 0
		return nil
	}
	c.deadline = int64(t.Sub(clockBase))
	if c.deadline <= 0 {
		c.deadline = 1
	}
	return nil
}

// Close tells the server this client is done and releases the mapping and
// the socket; the server then removes the file.
func (c *Conn) Close() error {
	if c.closed {
		return transport.ErrClosed
	}
	c.closed = true
	// Client state: written by the client only (release), read by the server
	// (acquire) when it checks liveness. Nothing touches the rings after it.
	shm.StoreInt64Release(c.mem, offCliState, stateClosed)
	err := shm.Unmap(c.mem)
	c.mem = nil
	if c.bell >= 0 {
		unix.Close(c.bell)
		c.bell = -1
	}
	if cerr := unix.Close(c.fd); err == nil && cerr != nil {
		err = fmt.Errorf("ring: close: %w", cerr)
	}
	return err
}

var _ transport.Conn = (*Conn)(nil)
