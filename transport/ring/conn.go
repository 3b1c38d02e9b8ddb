package ring

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/idle"
	"github.com/goblin-kv/goblin/internal/shm"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/transport"
)

// Defaults for DialOptions.
const (
	DefaultServerTimeout = 3 * time.Second
	// DefaultMaxReply is the longest reply a client accepts by default: a
	// value of up to 1 GiB and its encoding.
	DefaultMaxReply = 1<<30 + 64<<10
	// livenessEvery is how often (in nanoseconds of waiting) a waiting client
	// checks that the server still lives: one poll(2) on the handshake
	// socket and two loads from the header.
	livenessEvery = int64(time.Millisecond)
)

// DialOptions configure Dial. The zero value backs off (idle.Backoff) and
// speaks RESP.
type DialOptions struct {
	// Proto is the protocol to speak; the server must speak it too, or
	// Dial fails with ErrWrongProtocol.
	Proto proto.Protocol
	// AnyProto speaks whatever protocol the server speaks (Conn.Protocol
	// tells which); Proto is then ignored. DialOptionsFor sets it for a
	// target that names no protocol.
	AnyProto bool
	// Wait is how the client waits for a reply or for room in a full
	// request ring (see package idle): Backoff, the zero value, spins,
	// yields, then parks; Spin takes a whole core for the lowest latency.
	Wait idle.Strategy
	// Backoff tunes Yield and Backoff (zero fields: idle.DefaultParams;
	// what Params.Validate refuses, a negative field say, fails Dial with
	// idle.ErrParams).
	Backoff idle.Params
	// ServerTimeout is how long the server's heartbeat may stand still
	// while a client waits before the client gives up on it with
	// transport.ErrServerGone (a dead server is noticed sooner: its end of
	// the handshake socket hangs up).
	ServerTimeout time.Duration
	// MaxReply is the longest reply accepted; a longer one announced by
	// the server breaks the connection. Default DefaultMaxReply.
	MaxReply int
}

func (o *DialOptions) ensureDefaults() {
	o.Backoff = o.Backoff.WithDefaults(idle.DefaultParams)
	if o.ServerTimeout <= 0 {
		o.ServerTimeout = DefaultServerTimeout
	}
	if o.MaxReply <= 0 {
		o.MaxReply = DefaultMaxReply
	}
}

// Conn is the client side of one ring pair. It implements transport.Conn
// and, like it, is not safe for concurrent use.
type Conn struct {
	o        DialOptions
	dir      string
	fd       int    // handshake socket, held open for liveness both ways
	mem      []byte // the client's memfd, mapped
	req      producer
	rep      consumer
	proto    proto.Protocol // the server's
	maxMsg   int            // the longest request the server accepts
	frag     fragmentWriter // a request longer than a record, going out
	asm      assembler      // a reply longer than a record, coming in
	broken   error          // sticky: a message was cut off midway; the rings are out of step
	deadline int64          // monotonic ns since clockBase; 0 = none
	err      error          // sticky: set once the server is gone
	closed   bool
	lastBeat int64
	beatAt   int64
	pfd      [1]unix.PollFd
	bell     int           // the server's doorbell eventfd (doorbell.go); -1: none
	parked   *atomic.Int64 // the serverParked word in mem (layout.go), loaded after every request
	one      [8]byte       // what a ring writes: 1 as a native-endian uint64
	rang     bool          // rang the doorbell since the last reply: yield while waiting
	fenced   bool          // publish requests with a fence: no server membarrier (doorbell.go)
	zero     unix.Timespec // Ppoll's timeout: unix.Poll would allocate one
}

var clockBase = time.Now()

// mono is a monotonic clock in nanoseconds.
func mono() int64 { return int64(time.Since(clockBase)) }

// Errors of Dial besides ErrNoServer and ErrRejected.
var (
	// ErrWrongProtocol reports a server that speaks the other protocol.
	ErrWrongProtocol = errors.New("ring: wrong protocol")
	// ErrPermission reports a handshake socket this user may not connect
	// to; it also matches os.ErrPermission.
	ErrPermission = errors.New("ring: permission denied")
)

// Dial connects to the ring server in dir: it asks the server for a ring
// pair over the handshake socket, maps the memory it hands over, and keeps
// the socket open so each side notices when the other dies.
func Dial(ctx context.Context, dir string, o DialOptions) (*Conn, error) {
	o.ensureDefaults()
	if err := o.Backoff.Validate(); err != nil {
		return nil, fmt.Errorf("ring: DialOptions.Backoff: %w", err)
	}
	sock := filepath.Join(dir, socketName)
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("ring: socket: %w", err)
	}
	var fds []int // what came with the answer: the doorbell, the memfd
	ok := false
	defer func() {
		if !ok {
			unix.Close(fd)
			for _, f := range fds {
				unix.Close(f)
			}
		}
	}()
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: sock}); err != nil {
		if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
			return nil, fmt.Errorf("%w: %s: %w", ErrPermission, accessHint(dir, sock), err)
		}
		return nil, fmt.Errorf("%w at %s: %w", ErrNoServer, dir, err)
	}
	if _, err := unix.Write(fd, []byte(helloLine(o.Proto, o.AnyProto))); err != nil {
		return nil, fmt.Errorf("ring: hello to %s: %w", sock, err)
	}
	line, fds, err := readLine(ctx, fd)
	if err != nil {
		return nil, fmt.Errorf("ring: handshake with %s: %w", sock, err)
	}
	if msg, isErr := strings.CutPrefix(line, answerErr); isErr {
		return nil, fmt.Errorf("%w: %s", ErrRejected, msg)
	}
	if sp, isProto := strings.CutPrefix(line, answerProto); isProto {
		fix := transport.Target{Scheme: transport.Ring, Path: dir, Proto: o.Proto}
		if p, err := proto.Parse(sp); err == nil {
			fix.Proto = p
		}
		return nil, fmt.Errorf("%w: the server at %s speaks %s, this client %s: dial %s, or leave proto out to speak the server's",
			ErrWrongProtocol, dir, sp, o.Proto, fix)
	}
	rest, isOK := strings.CutPrefix(line, answerOK)
	name, _, _ := strings.Cut(rest, " ")
	if !isOK || !strings.HasPrefix(name, filePrefix) || len(fds) != 2 {
		return nil, fmt.Errorf("ring: handshake with %s: bad answer %q with %d descriptors (a server of another release?)", sock, line, len(fds))
	}
	bell, mfd := fds[0], fds[1]
	var st unix.Stat_t
	if err := unix.Fstat(mfd, &st); err != nil {
		return nil, fmt.Errorf("ring: the server's memfd: %w", err)
	}
	mem, err := shm.MapFD(mfd, int(st.Size))
	if err != nil {
		return nil, fmt.Errorf("ring: %w", err)
	}
	unix.Close(mfd) // the mapping holds the memory
	fds = fds[:1]
	g, err := readHeader(mem)
	// Protocol: written by the server (plain) before it sent the memfd;
	// read here (plain) after receiving it; the socket orders the two.
	fp := proto.Protocol(shm.GetInt32(mem, offProto))
	if err == nil && fp != o.Proto && !o.AnyProto {
		err = fmt.Errorf("%w: it speaks %v", errBadFile, fp)
	}
	if err != nil {
		shm.Unmap(mem)
		return nil, err
	}
	prefault(mem)
	c := &Conn{o: o, dir: dir, fd: fd, mem: mem, proto: fp,
		req:  newProducer(mem, g.reqBase, g.records, g.recordSize),
		rep:  newConsumer(mem, g.repBase, g.records, g.recordSize),
		asm:  newAssembler(g.recordSize-recHeader, o.MaxReply),
		bell: bell, parked: shm.Int64At(mem, offParked)}
	// Largest request: written by the server (plain) before it sent the
	// memfd; read here (plain) after.
	c.maxMsg = max(int(shm.GetInt64(mem, offMaxMsg)), c.req.maxBytes)
	binary.NativeEndian.PutUint64(c.one[:], 1)
	// Flags: written by the server (plain) before it sent the memfd,
	// read here (plain) after; the socket orders the two.
	c.fenced = shm.GetInt32(mem, offFlags)&flagBarrier == 0 || !clientBarrier()
	c.pfd[0] = unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}
	ok = true
	return c, nil
}

// accessHint says why this user may not connect to the handshake socket
// sock in dir: the socket, or the nearest directory above it this user
// may not enter, and who owns it.
func accessHint(dir, sock string) string {
	what := sock
	fi, err := os.Stat(sock)
	for p := sock; err != nil && filepath.Dir(p) != p; {
		// Stat fails below a directory we may not search: the first path
		// up from there that we can stat is that directory.
		p = filepath.Dir(p)
		what = p
		fi, err = os.Stat(p)
	}
	owner := ""
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && err == nil {
		owner = fmt.Sprintf(" (owner uid %d, group gid %d, mode %04o)", st.Uid, st.Gid, fi.Mode().Perm())
	}
	return fmt.Sprintf("this user (uid %d) may not use %s%s, on the way to the ring server at %s; run the client as "+
		"the server's user, or start the server with group=<a group of this user> in its ring target", os.Getuid(), what, owner, dir)
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
			left := time.Until(d)
			if left <= 0 {
				// The context's timer may fire late on a loaded machine;
				// a negative poll timeout would wait for ever.
				return "", fds, context.DeadlineExceeded
			}
			if left < 50*time.Millisecond {
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

// MaxMessage is the longest request the server accepts.
func (c *Conn) MaxMessage() int { return c.maxMsg }

// Protocol is the protocol the server speaks (transport.ProtocolConn).
func (c *Conn) Protocol() proto.Protocol { return c.proto }

// Write puts one request into the request ring. It waits (as ReadAppend
// does) only while the ring is full. A request longer than one record goes
// in fragments as room appears; should Write fail in the middle of one
// (deadline, server gone), the connection is broken for good.
func (c *Conn) Write(p []byte) error {
	if err := c.usable(); err != nil {
		return err
	}
	if len(p) > c.req.maxBytes {
		return c.writeFragments(p)
	}
	if !c.req.hasSpace() {
		if err := c.waitFor(false); err != nil {
			return err
		}
	}
	c.req.put(p, c.fenced)
	c.ringIfParked()
	return nil
}

// TryWrite writes p, as Write does, if the request ring has room for all
// of it now, and reports whether it did (transport.TryWriter). A message
// of more records than the ring holds never fits at once.
func (c *Conn) TryWrite(p []byte) (bool, error) {
	if err := c.usable(); err != nil {
		return false, err
	}
	if len(p) <= c.req.maxBytes {
		if !c.req.hasSpace() {
			return false, nil
		}
		c.req.put(p, c.fenced)
		c.ringIfParked()
		return true, nil
	}
	if err := c.checkSize(len(p)); err != nil {
		return false, err
	}
	k := int64(fragmentCount(len(p), c.req.maxBytes))
	if k > c.req.n || !c.req.hasRoom(k) {
		return false, nil
	}
	c.frag.start(p)
	for !c.frag.next(&c.req, c.fenced) {
	}
	c.ringIfParked()
	return true, nil
}

func (c *Conn) usable() error {
	switch {
	case c.closed:
		return transport.ErrClosed
	case c.err != nil:
		return c.err
	}
	return c.broken
}

func (c *Conn) checkSize(n int) error {
	if n > c.maxMsg {
		return fmt.Errorf("%w: request of %d bytes, the server at %s accepts at most %d", transport.ErrMessageTooLarge, n, c.dir, c.maxMsg)
	}
	return nil
}

// writeFragments writes a request longer than one record, a fragment at a
// time, waiting for room between them.
func (c *Conn) writeFragments(p []byte) error {
	if err := c.checkSize(len(p)); err != nil {
		return err
	}
	c.frag.start(p)
	for {
		if !c.req.hasSpace() {
			if err := c.waitFor(false); err != nil {
				if c.frag.off == 0 {
					c.frag = fragmentWriter{} // nothing went out: no harm done
					return err
				}
				c.frag = fragmentWriter{}
				c.broken = fmt.Errorf("%w, in the middle of a %d-byte request: the connection cannot go on", err, len(p))
				return c.broken
			}
		}
		done := c.frag.next(&c.req, c.fenced)
		c.ringIfParked()
		if done {
			return nil
		}
	}
}

// ReadAppend appends the next reply message to dst. It spins (or follows
// the Wait strategy) until the reply arrives, the deadline passes
// (transport.ErrTimeout) or the server goes (transport.ErrServerGone). A
// reply longer than a record is read a fragment at a time as the server
// writes them; should ReadAppend fail in the middle of one, the connection
// is broken for good.
func (c *Conn) ReadAppend(dst []byte) ([]byte, error) {
	if c.closed {
		return dst, transport.ErrClosed
	}
	if c.broken != nil {
		return dst, c.broken
	}
	msg, more, ok := c.rep.peek()
	if !ok {
		if err := c.waitFor(true); err != nil {
			return dst, err
		}
		msg, more, _ = c.rep.peek()
	}
	if more {
		return c.readFragments(dst, msg)
	}
	dst = append(dst, msg...)
	c.rep.release()
	c.rang = false
	return dst, nil
}

// readFragments reads a reply longer than a record, whose first fragment
// is first.
func (c *Conn) readFragments(dst, first []byte) ([]byte, error) {
	start := len(dst)
	rec, more := first, true
	for {
		var done bool
		var err error
		dst, done, err = c.asm.add(dst, rec, more)
		c.rep.release()
		if err != nil {
			c.broken = fmt.Errorf("ring: reply from the server at %s: %w", c.dir, err)
			return dst[:start], c.broken
		}
		if done {
			c.rang = false
			return dst, nil
		}
		var ok bool
		if rec, more, ok = c.rep.peek(); !ok {
			if err := c.waitFor(true); err != nil {
				c.broken = fmt.Errorf("%w, in the middle of a %d-byte reply: the connection cannot go on", err, c.asm.total)
				c.asm = newAssembler(c.asm.payload, c.asm.max)
				return dst[:start], c.broken
			}
			rec, more, _ = c.rep.peek()
		}
	}
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
			idle.ThreadYield()
		}
		spins++
		if spins&63 != 0 && c.o.Wait == idle.Spin {
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
		c.o.Wait.Pause(spins, c.o.Backoff)
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
	c.mem, c.parked = nil, nil
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
