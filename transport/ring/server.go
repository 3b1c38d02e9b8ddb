package ring

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/internal/shm"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/transport"
)

// Names inside the server's directory. Only these are ever created or swept.
const (
	lockName   = "lock"     // flock'ed by the live server; holds its pid and epoch
	socketName = "ctl.sock" // the handshake socket
	filePrefix = "c-"       // client files: c-<epoch>-<id>.ring
	fileSuffix = ".ring"
)

// Defaults for Options.
const (
	DefaultRecords          = 64
	DefaultRecordSize       = 16 << 10
	DefaultBatch            = 32
	DefaultMaxClients       = 1024
	DefaultHousekeeping     = time.Millisecond
	DefaultLivenessInterval = 10 * time.Millisecond
	handshakeTimeout        = 2 * time.Second
)

// Errors.
var (
	// ErrInUse reports that another live server owns the directory.
	ErrInUse = errors.New("ring: directory in use by another server")
	// ErrNoServer reports that no server listens in the directory.
	ErrNoServer = errors.New("ring: no server")
	// ErrRejected reports that the server refused the client's handshake.
	ErrRejected = errors.New("ring: handshake rejected")
)

// Handler executes the requests of a ring server's clients. The server
// package adapts the command engine to it; tests use small fakes. The
// method is named OpenMessage (not Open) so one adapter type can serve both
// this and the stream transports' handler.
type Handler interface {
	// OpenMessage returns the state of a newly connected client that
	// speaks p.
	OpenMessage(p proto.Protocol) Session
}

// Session serves the messages of one connected client. The server calls it
// from the loop goroutine only.
type Session interface {
	// ServeMessage executes one request message and appends its reply to
	// out, returning the extended slice; closeConn asks the server to close
	// the client after sending the reply. msg aliases shared memory and is
	// valid only during the call.
	ServeMessage(msg, out []byte) (reply []byte, closeConn bool)
	// Close releases the session when its client goes.
	Close()
}

// Options configure a Server. The zero value of every field but Dir and
// Handler works.
type Options struct {
	// Dir is the server's directory, e.g. /dev/shm/goblin. It is created
	// (mode 0700, or 0750 with Group) if missing, and removed again by Close
	// if it was created (by this server or by one that crashed and left its
	// lock file) and holds nothing else.
	Dir string
	// Proto is the protocol the server speaks on its rings; clients asking
	// for another are refused.
	Proto proto.Protocol
	// Records is the number of records in each ring, a power of two.
	// Default DefaultRecords.
	Records int
	// RecordSize is the size of one record, its 8-byte header included: a
	// multiple of 64. A message longer than RecordSize-8 bytes is refused
	// with transport.ErrMessageTooLarge. Default DefaultRecordSize.
	RecordSize int
	// Group, when set (a group name or numeric gid), makes the directory,
	// socket and ring files group-accessible (0750/0660) and owned by that
	// group, so processes of other users in the group can connect.
	// Otherwise everything is owner-only (0700/0600).
	Group string
	// Batch is the most requests served from one client per Poll, so one
	// busy client cannot starve the others. Default DefaultBatch.
	Batch int
	// MaxClients bounds the connected clients. Default DefaultMaxClients.
	MaxClients int
	// Housekeeping is how often an idle loop with no clients looks at the
	// handshake socket; with clients connected it looks ten times less
	// often, and a busy loop eight times less often again. Default
	// DefaultHousekeeping.
	Housekeeping time.Duration
	// LivenessInterval is how often the server checks for dead clients and
	// bumps its heartbeat. Default DefaultLivenessInterval.
	LivenessInterval time.Duration
	// Handler makes the session of each new client. Required.
	Handler Handler
}

func (o *Options) ensureDefaults() {
	if o.Records == 0 {
		o.Records = DefaultRecords
	}
	if o.RecordSize == 0 {
		o.RecordSize = DefaultRecordSize
	}
	if o.Batch <= 0 {
		o.Batch = DefaultBatch
	}
	if o.MaxClients <= 0 {
		o.MaxClients = DefaultMaxClients
	}
	if o.Housekeeping <= 0 {
		o.Housekeeping = DefaultHousekeeping
	}
	if o.LivenessInterval <= 0 {
		o.LivenessInterval = DefaultLivenessInterval
	}
}

func (o *Options) validate() error {
	if o.Dir == "" {
		return errors.New("ring: Options.Dir is empty")
	}
	if o.Handler == nil {
		return errors.New("ring: Options.Handler is nil")
	}
	if o.Proto != proto.RESP && o.Proto != proto.SBE {
		return fmt.Errorf("ring: unknown protocol %v", o.Proto)
	}
	return checkGeometry(o.Records, o.RecordSize)
}

// Stats counts what a Server did. Fill it with Server.Stats.
type Stats struct {
	Clients   int   // connected now
	Accepted  int64 // clients that completed the handshake
	Rejected  int64 // handshakes refused or abandoned
	Reclaimed int64 // clients whose rings were reclaimed after they went
	Swept     int   // leftover files removed when the server started
	Requests  int64 // requests served
	TooLarge  int64 // replies that did not fit a record
	// The doorbell (see doorbell.go).
	Parks        int64 // parks announced to the clients (PrepareToPark)
	ParksSkipped int64 // of them, called off because a request was waiting
	Rings        int64 // doorbell rings received from clients
}

// Server is the loop side of the ring transport. All methods but Stats'
// caller-owned fill are for the loop goroutine only.
type Server struct {
	o         Options
	geo       geometry
	epoch     int64
	lockFile  *os.File
	madeDir   bool
	lfd       int // listening handshake socket, non-blocking
	bell      int // the doorbell eventfd, non-blocking; -1 when closed
	bellBuf   [8]byte
	barrier   bool // membarrier(GLOBAL_EXPEDITED) works here: see doorbell.go
	fileMode  os.FileMode
	gid       int
	name      string
	clients   []*client
	pending   []pendingConn
	pfds      []unix.PollFd // one per client, same order as clients
	nextID    int64
	beat      int64
	lastHouse int64
	lastLive  int64
	stats     Stats
	closed    bool
	scratch   [256]byte
	zero      unix.Timespec // Ppoll's timeout: unix.Poll would allocate one
}

// client is one connected client, server side.
type client struct {
	id   int64
	fd   int // handshake socket, held open: it hangs up when the client dies
	pid  int32
	path string
	mem  []byte
	req  consumer // requests: the client produces, we consume
	rep  producer // replies: we produce, the client consumes
	sess Session
}

type pendingConn struct {
	fd    int
	since int64
	buf   []byte
}

// Listen takes the directory, sweeps what a crashed server or client left
// there, and starts listening for handshakes.
func Listen(o Options) (*Server, error) {
	o.ensureDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	s := &Server{o: o, geo: newGeometry(o.Records, o.RecordSize), lfd: -1, bell: -1, fileMode: 0o600, gid: -1}
	s.name = "ring/" + o.Proto.String()
	dirMode := os.FileMode(0o700)
	if o.Group != "" {
		gid, err := lookupGroup(o.Group)
		if err != nil {
			return nil, err
		}
		s.gid, s.fileMode, dirMode = gid, 0o660, 0o750
	}
	if err := os.Mkdir(o.Dir, dirMode); err == nil {
		s.madeDir = true
		if err := s.own(o.Dir, dirMode); err != nil {
			os.Remove(o.Dir)
			return nil, err
		}
	} else if !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("ring: %w", err)
	}
	if _, err := os.Stat(filepath.Join(o.Dir, lockName)); err == nil {
		s.madeDir = true // a crashed server's directory: ours to remove when empty
	}
	if err := s.lock(); err != nil {
		s.removeDir()
		return nil, err
	}
	s.sweep()
	bell, err := newDoorbell()
	if err != nil {
		s.unlock()
		s.removeDir()
		return nil, fmt.Errorf("ring: doorbell eventfd: %w", err)
	}
	s.bell = bell
	s.barrier = serverBarrierOK()
	if err := s.listen(); err != nil {
		unix.Close(s.bell)
		s.unlock()
		s.removeDir()
		return nil, err
	}
	return s, nil
}

func lookupGroup(g string) (int, error) {
	if gid, err := strconv.Atoi(g); err == nil {
		return gid, nil
	}
	gr, err := user.LookupGroup(g)
	if err != nil {
		return 0, fmt.Errorf("ring: group %q: %w", g, err)
	}
	return strconv.Atoi(gr.Gid)
}

// own sets the mode (whatever the umask) and, with a group option, the group.
func (s *Server) own(path string, mode os.FileMode) error {
	if s.gid >= 0 {
		if err := os.Lchown(path, -1, s.gid); err != nil {
			return fmt.Errorf("ring: %w", err)
		}
	}
	if err := os.Chmod(path, mode); err != nil {
		return fmt.Errorf("ring: %w", err)
	}
	return nil
}

// lock takes the directory's lock file. The kernel drops an flock when its
// holder dies, so a lock we can take means no live server uses the
// directory, and everything of ours in it is a leftover.
func (s *Server) lock() error {
	path := filepath.Join(s.o.Dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, s.fileMode)
	if err != nil {
		return fmt.Errorf("ring: lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return fmt.Errorf("%w: %s", ErrInUse, s.o.Dir)
		}
		return fmt.Errorf("ring: lock %s: %w", path, err)
	}
	if err := s.own(path, s.fileMode); err != nil {
		f.Close()
		return err
	}
	s.epoch = time.Now().UnixNano()<<8 ^ int64(os.Getpid())
	if s.epoch < 0 {
		s.epoch = -s.epoch
	}
	f.Truncate(0)
	fmt.Fprintf(f, "pid %d\nepoch %x\n", os.Getpid(), s.epoch)
	s.lockFile = f
	return nil
}

func (s *Server) unlock() {
	if s.lockFile == nil {
		return
	}
	// Remove while still holding the lock, so a server starting now either
	// fails to lock this file or creates a fresh one.
	os.Remove(s.lockFile.Name())
	s.lockFile.Close()
	s.lockFile = nil
}

func (s *Server) removeDir() {
	if s.madeDir {
		os.Remove(s.o.Dir) // fails, harmlessly, if someone else put files there
	}
}

// sweep removes the socket and ring files a crashed server left.
func (s *Server) sweep() {
	ents, err := os.ReadDir(s.o.Dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		n := e.Name()
		if n == socketName || (strings.HasPrefix(n, filePrefix) && strings.HasSuffix(n, fileSuffix)) {
			if os.Remove(filepath.Join(s.o.Dir, n)) == nil {
				s.stats.Swept++
			}
		}
	}
}

func (s *Server) listen() error {
	path := filepath.Join(s.o.Dir, socketName)
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("ring: socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		return fmt.Errorf("ring: bind %s: %w", path, err)
	}
	if err := s.own(path, s.fileMode); err != nil {
		unix.Close(fd)
		os.Remove(path)
		return err
	}
	if err := unix.Listen(fd, 128); err != nil {
		unix.Close(fd)
		os.Remove(path)
		return fmt.Errorf("ring: listen %s: %w", path, err)
	}
	s.lfd = fd
	return nil
}

// Name is "ring/resp" or "ring/sbe".
func (s *Server) Name() string { return s.name }

// Dir is the server's directory.
func (s *Server) Dir() string { return s.o.Dir }

// Clients is the number of connected clients.
func (s *Server) Clients() int { return len(s.clients) }

// Stats fills st.
func (s *Server) Stats(st *Stats) {
	*st = s.stats
	st.Clients = len(s.clients)
}

// Poll serves up to Batch requests from each client, then, when the loop is
// idle (or every eighth housekeeping interval when it is not), looks at the
// handshake socket and the clients' liveness. It allocates nothing unless a
// client connects or goes.
func (s *Server) Poll(now int64) int {
	if s.closed {
		return 0
	}
	work := 0
	for i := 0; i < len(s.clients); i++ {
		c := s.clients[i]
		n, closeConn := s.serve(c, s.o.Batch)
		work += n
		if closeConn {
			s.drop(i, false)
			i--
		}
	}
	// Housekeeping costs system calls (accept4, and ppoll every liveness
	// interval), about a microsecond each on a VM; a request that arrives
	// during one waits for it. With clients connected the loop therefore
	// looks ten times less often: a depth-one client sees one such delay
	// per 10 ms instead of per millisecond, which kept 0.1 % of round trips
	// at 2-3 µs (a SET p99.9 of 4-5× its p50). A new client's handshake
	// waits at most that long.
	interval := int64(s.o.Housekeeping)
	if len(s.clients) > 0 {
		interval *= 10
	}
	if since := now - s.lastHouse; since >= interval && (work == 0 || since >= 8*interval) {
		s.lastHouse = now
		work += s.housekeep(now)
	}
	return work
}

// serve executes up to max requests of c. It stops early when the reply
// ring is full: every request gets exactly one reply record, so a request
// is consumed only when its reply has a place to go.
func (s *Server) serve(c *client, max int) (n int, closeConn bool) {
	defer c.req.commit()
	for n < max {
		msg, tooLarge, ok := c.req.peek()
		if !ok || !c.rep.hasSpace() {
			return n, false
		}
		n++
		if tooLarge { // clients never send these; skip it
			c.req.release()
			continue
		}
		out := c.rep.claim()
		reply, closeConn := c.sess.ServeMessage(msg, out)
		switch {
		case len(reply) == 0:
			c.rep.publish(0, false)
		case len(reply) > cap(out):
			s.stats.TooLarge++
			c.rep.publish(len(reply), true)
		default:
			if &reply[0] != &out[:1][0] {
				copy(out[:len(reply)], reply) // the session replied from its own buffer
			}
			c.rep.publish(len(reply), false)
		}
		c.req.release()
		s.stats.Requests++
		if closeConn {
			return n, true
		}
	}
	return n, false
}

// housekeep accepts handshakes, bumps the heartbeat and reaps dead clients.
func (s *Server) housekeep(now int64) int {
	work := s.accept(now)
	if now-s.lastLive >= int64(s.o.LivenessInterval) {
		s.lastLive = now
		s.beat++
		for _, c := range s.clients {
			// Heartbeat: written by the server only (release), read by the
			// client (acquire) to tell a live server from a hung one.
			shm.StoreInt64Release(c.mem, offBeat, s.beat)
		}
		work += s.reap()
	}
	return work
}

// reap drops clients whose handshake socket hung up (the kernel closes it
// when the process dies, however it dies) or that said they closed.
func (s *Server) reap() int {
	if len(s.pfds) == 0 {
		return 0
	}
	// Ppoll with a zero timeout kept in the Server: unix.Poll would
	// allocate its Timespec.
	n, err := unix.Ppoll(s.pfds, &s.zero, nil)
	if err != nil && !errors.Is(err, unix.EINTR) {
		return 0
	}
	work := 0
	for i := len(s.clients) - 1; i >= 0; i-- {
		c := s.clients[i]
		// Client state: written by the client (release) in Conn.Close, read
		// here (acquire); a closed client no longer touches its rings.
		gone := shm.LoadInt64Acquire(c.mem, offCliState) == stateClosed
		if n > 0 && s.pfds[i].Revents != 0 {
			gone = true // a client never writes after its hello: this is EOF or an error
		}
		if gone {
			s.drop(i, true)
			work++
		}
	}
	return work
}

// drop removes client i: marks its file closed for the client, unmaps and
// unlinks it and closes the socket.
func (s *Server) drop(i int, reclaimed bool) {
	c := s.clients[i]
	last := len(s.clients) - 1
	s.clients[i] = s.clients[last]
	s.clients[last] = nil
	s.clients = s.clients[:last]
	s.pfds[i] = s.pfds[last]
	s.pfds = s.pfds[:last]
	if reclaimed {
		s.stats.Reclaimed++
	}
	s.release(c)
}

func (s *Server) release(c *client) {
	c.sess.Close()
	// Server state: written by the server only (release), read by the client
	// (acquire) while it waits, so it stops waiting for replies that will
	// never come. Replies already published stay readable.
	shm.StoreInt64Release(c.mem, offSrvState, stateClosed)
	shm.Unmap(c.mem)
	c.mem = nil
	os.Remove(c.path)
	unix.Close(c.fd)
}

// accept takes new handshake connections and answers the hellos that came.
func (s *Server) accept(now int64) int {
	work := 0
	for range 16 {
		fd, errno := accept(s.lfd)
		if errno != 0 {
			break
		}
		s.pending = append(s.pending, pendingConn{fd: fd, since: now})
		work++
	}
	for i := 0; i < len(s.pending); i++ {
		p := &s.pending[i]
		done := s.handshake(p, now)
		if done {
			s.pending[i] = s.pending[len(s.pending)-1]
			s.pending = s.pending[:len(s.pending)-1]
			i--
			work++
		}
	}
	return work
}

// accept is accept4(2) without the peer address (unix.Accept4 allocates
// one on every call, even when nobody is waiting).
func accept(lfd int) (int, unix.Errno) {
	fd, _, errno := unix.Syscall6(unix.SYS_ACCEPT4, uintptr(lfd), 0, 0, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), 0
}

// handshake reads a pending connection's hello and answers it. It returns
// true when the connection left the pending list (admitted or refused).
func (s *Server) handshake(p *pendingConn, now int64) bool {
	n, err := unix.Read(p.fd, s.scratch[:])
	if n > 0 {
		p.buf = append(p.buf, s.scratch[:n]...)
	}
	line, _, complete := strings.Cut(string(p.buf), "\n")
	switch {
	case complete:
	case n == 0 && err == nil, err != nil && !errors.Is(err, unix.EAGAIN), len(p.buf) > 200,
		now-p.since > int64(handshakeTimeout):
		s.refuse(p.fd, "incomplete hello")
		return true
	default:
		return false
	}
	p2, perr := parseHello(line)
	switch {
	case perr != nil:
		s.refuse(p.fd, perr.Error())
		return true
	case p2 != s.o.Proto:
		s.refuse(p.fd, fmt.Sprintf("server at %s speaks %s, not %s", s.o.Dir, s.o.Proto, p2))
		return true
	case len(s.clients) >= s.o.MaxClients:
		s.refuse(p.fd, fmt.Sprintf("server has its maximum of %d ring clients", s.o.MaxClients))
		return true
	}
	c, err := s.newClient(p.fd)
	if err != nil {
		s.refuse(p.fd, err.Error())
		return true
	}
	// The answer carries the doorbell (SCM_RIGHTS): see doorbell.go.
	if err := sendAnswer(p.fd, "OK "+filepath.Base(c.path)+"\n", s.bell); err != nil {
		s.release(c)
		s.stats.Rejected++
		return true
	}
	s.clients = append(s.clients, c)
	s.pfds = append(s.pfds, unix.PollFd{Fd: int32(p.fd), Events: unix.POLLIN})
	s.stats.Accepted++
	return true
}

func (s *Server) refuse(fd int, why string) {
	unix.Write(fd, []byte("ERR "+strings.ReplaceAll(why, "\n", " ")+"\n"))
	unix.Close(fd)
	s.stats.Rejected++
}

// newClient makes and maps a client's file and writes its header.
func (s *Server) newClient(fd int) (*client, error) {
	s.nextID++
	c := &client{id: s.nextID, fd: fd}
	if cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED); err == nil {
		c.pid = cred.Pid
	}
	c.path = filepath.Join(s.o.Dir, fmt.Sprintf("%s%x-%d%s", filePrefix, s.epoch, c.id, fileSuffix))
	f, err := os.OpenFile(c.path, os.O_RDWR|os.O_CREATE|os.O_EXCL, s.fileMode)
	if err != nil {
		return nil, fmt.Errorf("ring: %w", err)
	}
	// Allocate every page now: a sparse file on a full tmpfs would make the
	// first touch of a page a SIGBUS in the middle of serving. A full
	// /dev/shm refuses this one client at the handshake instead.
	if err = unix.Fallocate(int(f.Fd()), 0, 0, int64(s.geo.size)); err != nil {
		err = fmt.Errorf("ring: allocating %d bytes for %s: %w", s.geo.size, c.path, err)
	}
	f.Close()
	if err == nil {
		err = s.own(c.path, s.fileMode)
	}
	if err == nil {
		c.mem, err = shm.Map(c.path)
	}
	if err != nil {
		os.Remove(c.path)
		return nil, err
	}
	prefault(c.mem)
	// Header: plain writes before the file name goes out on the socket (see
	// the layout comment in layout.go).
	m := c.mem
	shm.PutInt32(m, offVersion, version)
	shm.PutInt32(m, offProto, int32(s.o.Proto))
	shm.PutInt32(m, offRecords, int32(s.geo.records))
	shm.PutInt32(m, offRecSize, int32(s.geo.recordSize))
	shm.PutInt64(m, offEpoch, s.epoch)
	shm.PutInt32(m, offServerPID, int32(os.Getpid()))
	shm.PutInt32(m, offClientPID, c.pid)
	shm.PutInt64(m, offClientID, c.id)
	if s.barrier {
		shm.PutInt32(m, offFlags, flagBarrier)
	}
	// Heartbeat (then magic, last): written by the server (release), read by
	// the client (acquire, and plain for the magic after the handshake).
	shm.StoreInt64Release(m, offBeat, s.beat)
	shm.StoreInt64Release(m, offMagic, magic)
	c.req = newConsumer(m, s.geo.reqBase, s.geo.records, s.geo.recordSize)
	c.rep = newProducer(m, s.geo.repBase, s.geo.records, s.geo.recordSize)
	c.sess = s.o.Handler.OpenMessage(s.o.Proto)
	return c, nil
}

// Close answers the requests already in the rings, tells every client the
// server is closing, and removes every file the server made: ring files,
// the handshake socket, the lock file, and the directory if Listen made it.
func (s *Server) Close() error {
	if s.closed {
		return nil
	}
	for _, c := range s.clients {
		s.serve(c, s.o.Records)
	}
	s.closed = true
	for _, c := range s.clients {
		s.release(c)
	}
	s.clients, s.pfds = nil, nil
	for _, p := range s.pending {
		unix.Close(p.fd)
	}
	s.pending = nil
	var err error
	if s.lfd >= 0 {
		err = unix.Close(s.lfd)
		os.Remove(filepath.Join(s.o.Dir, socketName))
		s.lfd = -1
	}
	if s.bell >= 0 {
		if cerr := unix.Close(s.bell); err == nil {
			err = cerr
		}
		s.bell = -1
	}
	s.unlock()
	s.removeDir()
	if err != nil {
		return fmt.Errorf("ring: close: %w", err)
	}
	return nil
}

// helloLine is what a client sends first.
func helloLine(p proto.Protocol) string {
	return fmt.Sprintf("GOBLIN-RING %d proto=%s\n", version, p)
}

func parseHello(line string) (proto.Protocol, error) {
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "GOBLIN-RING" || !strings.HasPrefix(f[2], "proto=") {
		return 0, fmt.Errorf("bad hello %q", line)
	}
	if f[1] != strconv.Itoa(version) {
		return 0, fmt.Errorf("client speaks ring version %s, server %d", f[1], version)
	}
	return proto.Parse(strings.TrimPrefix(f[2], "proto="))
}

var _ transport.Server = (*Server)(nil)
