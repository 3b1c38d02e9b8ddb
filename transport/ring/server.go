package ring

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"runtime/debug"
	"slices"
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
	// Client files of version 1 servers, c-<epoch>-<id>.ring: swept when
	// found. Clients' rings now live in memfds, which have no name in any
	// directory; a client's memfd is called "goblin-ring c-<epoch>-<id>"
	// (see /proc/PID/maps).
	filePrefix = "c-"
	fileSuffix = ".ring"
	memfdName  = "goblin-ring "
)

// Defaults for Options.
const (
	DefaultRecords          = 64
	DefaultRecordSize       = 16 << 10
	DefaultBatch            = 32
	DefaultMaxClients       = 1024
	DefaultHousekeeping     = time.Millisecond
	DefaultLivenessInterval = 10 * time.Millisecond
	// DefaultMaxMessage is the longest request accepted by default: the
	// stream transports' input limit, room for a value of the store's
	// default maximum (16 MiB) several times over.
	DefaultMaxMessage = 64 << 20
	handshakeTimeout  = 2 * time.Second
	// keepBuffer is the most a client's reassembly buffer keeps between
	// fragmented requests; a larger one is given back to the GC.
	keepBuffer = 1 << 20
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
	// multiple of 64. A message longer than a record's payload (the
	// laid-out size less 8 bytes) travels in fragments, one per record.
	// Default DefaultRecordSize. A multiple of the page size (4096) gets
	// two cache lines more (16384 is laid out as 16512), so that
	// consecutive records do not share their page offset and with it their
	// cache sets (LaidOutRecordSize).
	RecordSize int
	// MaxMessage is the longest request message accepted: a client refuses
	// to send a longer one (transport.ErrMessageTooLarge), and a client
	// that announces one anyway is dropped. Replies have no limit here.
	// Default DefaultMaxMessage; never less than one record.
	MaxMessage int
	// Group, when set (a group name or numeric gid), makes the directory,
	// socket and lock file group-accessible (0750/0660) and owned by that
	// group, so processes of other users in the group can connect (and
	// receive their rings over the socket). Otherwise everything is
	// owner-only (0700/0600).
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
	Handler transport.MessageHandler
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
	if o.MaxMessage <= 0 {
		o.MaxMessage = DefaultMaxMessage
	}
	o.MaxMessage = max(o.MaxMessage, o.RecordSize-recHeader)
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
	BytesIn   int64 // request bytes received
	BytesOut  int64 // reply bytes sent
	// Messages longer than one record (see fragment.go).
	FragmentedRequests int64 // requests that came in fragments
	FragmentedReplies  int64 // replies that went out in fragments
	Malformed          int64 // clients dropped for a malformed fragment sequence
	Faults             int64 // clients dropped after a memory fault in their mapping
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
	name string   // c-<epoch>-<id>, the memfd's name after memfdName
	mem  []byte   // the client's sealed memfd, mapped
	req  consumer // requests: the client produces, we consume
	rep  producer // replies: we produce, the client consumes
	sess transport.MessageSession
	// later is sess when it can answer a request later (a blocking pop):
	// while it is parked the client's further requests stay in its ring.
	later transport.LaterAware
	// parkedNow is later.Parked() as it stood after the last ServeMessage
	// or answer of c: the only calls in which a LaterAware session parks
	// or unparks (its contract), so between them it cannot change. Loop
	// goroutine only. (Asking the session through the interface cost a
	// round trip two calls.)
	parkedNow bool
	// A request longer than a record, being reassembled.
	in  []byte
	asm assembler
	// A reply longer than a record, going out as room appears; closing:
	// the session asked to close once it is out.
	out     fragmentWriter
	closing bool
	faulted bool // an access to mem faulted: never touch it again
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
	s := &Server{o: o, geo: newGeometry(o.Records, LaidOutRecordSize(o.RecordSize)), lfd: -1, bell: -1, fileMode: 0o600, gid: -1}
	if err := memfdWorks(); err != nil {
		return nil, err
	}
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

// sweep removes the socket a crashed server left, and the ring files of
// version 1 servers, which kept clients' rings in files here.
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

// UpdateStats implements transport.StatsReporter: the ring's counters in
// the shape every transport reports. A client that goes on its own is
// reclaimed (ClientGone); one the server closes after a reply is the
// remainder (ServerClosed). Queued is what the server holds for its
// clients: long replies waiting for room, long requests half received.
func (s *Server) UpdateStats(st *transport.Stats) {
	one := transport.Stats{
		Clients:  int64(len(s.clients)),
		Connects: s.stats.Accepted,
		Rejected: s.stats.Rejected,
		BytesIn:  s.stats.BytesIn,
		BytesOut: s.stats.BytesOut,
	}
	one.Disconnects[transport.ClientGone] = s.stats.Reclaimed
	one.Disconnects[transport.Malformed] = s.stats.Malformed
	one.Disconnects[transport.Fault] = s.stats.Faults
	one.Disconnects[transport.ServerClosed] = one.Remainder(transport.ServerClosed)
	for _, c := range s.clients {
		one.Queued += int64(len(c.in))
		if c.out.busy() {
			one.Queued += int64(len(c.out.msg) - c.out.off)
		}
	}
	st.Add(&one)
}

// Poll serves up to Batch requests from each client, then, when the loop is
// idle (or every eighth housekeeping interval when it is not), looks at the
// handshake socket and the clients' liveness. It allocates nothing unless a
// client connects or goes. A fault in a client's mapping drops that client
// (survive); Poll then reports no work.
func (s *Server) Poll(now int64) int {
	defer s.survive()
	debug.SetPanicOnFault(true)
	return s.PollUnguarded(now)
}

// PollUnguarded is Poll without its fault guard (server.FaultGuarded), whose
// SetPanicOnFault call and deferred recover cost every Poll, busy or idle,
// some 40 instructions: for a goroutine that has turned SetPanicOnFault on
// once and recovers around its calls, handing the panic to Survive, as the
// server's loop does. Anywhere else a fault in a client's mapping kills the
// process.
func (s *Server) PollUnguarded(now int64) (work int) {
	if s.closed {
		return 0
	}
	for i := 0; i < len(s.clients); i++ {
		c := s.clients[i]
		if c.req.idle() && !c.out.busy() {
			// Nothing to read, commit or flush: serve would only look (some
			// 90 instructions of every idle poll, per client).
			continue
		}
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

// serve executes up to max requests of c (a fragment counts as one). It
// stops early when the reply ring is full: a request is consumed only when
// its reply has a place to go, so a client that does not read its replies
// stalls only itself. The fragments of a long request are taken as they
// come, into c.in; a long reply goes out as room appears, before anything
// else of that client is served.
//
// It hands the consumed records back to the client (commit) once per
// call, not per request, and without a defer (which cost a round trip
// some thirty instructions): a fault in c's mapping, the one panic that
// can leave serveBatch midway, drops c (survive).
func (s *Server) serve(c *client, max int) (n int, closeConn bool) {
	n, closeConn = s.serveBatch(c, max)
	c.req.commit()
	return n, closeConn
}

func (s *Server) serveBatch(c *client, max int) (n int, closeConn bool) {
	// A parked request (a blocking pop) holds back the client's next ones
	// until it is answered; execute says when a request it ran parked, so
	// the session is asked once per call rather than before every request.
	if c.parked() {
		return 0, false
	}
	for n < max {
		if c.out.busy() {
			if !s.flush(c) {
				return n, false
			}
			if c.closing {
				return n, true
			}
		}
		msg, more, ok := c.req.peek()
		if !ok {
			return n, false
		}
		if more || c.asm.busy() {
			// A fragment: the rare path (see fragment.go).
			if !more && !c.rep.hasSpace() {
				return n, false // the last one waits for room for the reply
			}
			var done bool
			var err error
			c.in, done, err = c.asm.add(c.in, msg, more)
			c.req.release()
			n++
			if err != nil {
				s.stats.Malformed++
				return n, true
			}
			if !done {
				continue
			}
			s.stats.FragmentedRequests++
			var parked bool
			closeConn, parked = s.execute(c, c.in)
			if cap(c.in) > keepBuffer {
				c.in = nil
			} else {
				c.in = c.in[:0]
			}
			if parked {
				return n, closeConn // its requests wait in the ring for the answer
			}
		} else {
			if !c.rep.hasSpace() {
				return n, false
			}
			n++
			// msg aliases the request record, so it is released only
			// after the request ran.
			var parked bool
			closeConn, parked = s.execute(c, msg)
			c.req.release()
			if parked {
				return n, closeConn // its requests wait in the ring for the answer
			}
		}
		if closeConn {
			return n, true
		}
	}
	return n, false
}

// execute runs one request and publishes its reply, or as much of a long
// reply as fits now. The reply ring has a free record. parked reports a
// request whose answer comes later (a blocking pop).
func (s *Server) execute(c *client, msg []byte) (closeConn, parked bool) {
	s.stats.Requests++
	out := c.rep.claim()
	reply, closeConn := c.sess.ServeMessage(msg, out)
	s.stats.BytesIn += int64(len(msg))
	s.stats.BytesOut += int64(len(reply))
	if c.later != nil {
		c.parkedNow = c.later.Parked()
	}
	if c.parkedNow {
		return closeConn, true // answered later (answer): the claimed record stays free for it
	}
	if len(reply) <= cap(out) {
		if len(reply) > 0 && &reply[0] != &out[:1][0] {
			copy(out[:len(reply)], reply) // the session replied from its own buffer
		}
		c.rep.publish(len(reply), false)
		return closeConn, false
	}
	// Longer than a record: the session appended beyond the record into
	// a buffer of its own, which goes out a fragment at a time.
	s.stats.FragmentedReplies++
	c.out.start(reply)
	if !s.flush(c) && closeConn {
		c.closing, closeConn = true, false
	}
	return closeConn, false
}

// parked reports whether c's last request waits for an answer that comes
// later (see transport.LaterAware).
func (c *client) parked() bool { return c.parkedNow }

// answer publishes the later reply of c's parked request (a blocking pop
// served by another client's push, or timed out). The client sent nothing
// since (its requests wait while it is parked), so the record its request
// left free is there; a reply longer than a record goes out a fragment at
// a time, from a copy, as room appears.
func (s *Server) answer(c *client, reply []byte) bool {
	if c.faulted || c.closing || c.out.busy() { // busy: cannot be, the parked request's reply was the last
		return false
	}
	s.stats.BytesOut += int64(len(reply))
	if c.rep.hasSpace() && len(reply) <= c.rep.maxBytes {
		out := c.rep.claim()
		c.rep.publish(copy(out[:len(reply)], reply), false)
		return true
	}
	s.stats.FragmentedReplies++
	c.out.start(append([]byte(nil), reply...))
	s.flush(c)
	return true
}

// flush publishes the fragments of c's long reply while the reply ring has
// room, and reports whether the reply is out.
func (s *Server) flush(c *client) bool {
	for c.out.busy() {
		if !c.rep.hasSpace() {
			return false
		}
		c.out.next(&c.rep, false)
	}
	return true
}

// ready reports whether serve would do something for c now (doorbell.go).
func (c *client) ready() bool {
	if c.out.busy() {
		return c.rep.hasSpace()
	}
	if c.parked() {
		return false
	}
	// A fragment that does not end its message is taken whatever room
	// the reply ring has; anything else needs room for its reply.
	_, more, ok := c.req.peek()
	return ok && (more || c.rep.hasSpace())
}

// survive is deferred by every method that touches the clients' mappings,
// which then turn on SetPanicOnFault for their goroutine: should an access
// to a client's mapping fault (which a sealed memfd makes impossible; this
// is the second line of defence), survive drops that client instead of
// losing the whole server. Any other panic goes on. The setting stays on
// for the goroutine (restoring it cost as much again on every Poll): it
// only turns a fault, which would kill the process, into a panic that
// kills it just the same unless recovered.
func (s *Server) survive() {
	if r := recover(); r != nil && !s.Survive(r) {
		panic(r)
	}
}

// Survive reports whether r, a value recovered from a panic in the
// server's methods (PollUnguarded, or any method survive guards), is a
// fault in a client's mapping; it has then dropped that client, which is
// never touched again (server.FaultGuarded).
func (s *Server) Survive(r any) bool {
	if f, ok := r.(interface{ Addr() uintptr }); ok {
		for i, c := range s.clients {
			if shm.Contains(c.mem, f.Addr()) {
				c.faulted = true
				s.stats.Faults++
				s.drop(i, false)
				return true
			}
		}
	}
	return false
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
	if !c.faulted {
		// Server state: written by the server only (release), read by the
		// client (acquire) while it waits, so it stops waiting for replies
		// that will never come. Replies already published stay readable.
		shm.StoreInt64Release(c.mem, offSrvState, stateClosed)
	}
	// Unmapping drops the server's hold on the memfd; its memory is freed
	// once the client unmaps it too (or dies).
	shm.Unmap(c.mem)
	c.mem = nil
	c.in, c.out = nil, fragmentWriter{}
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
	p2, anyProto, perr := parseHello(line)
	switch {
	case perr != nil:
		s.refuse(p.fd, perr.Error())
		return true
	case p2 != s.o.Proto && !anyProto:
		// A line of its own, so the client can name both protocols and
		// the fix.
		unix.Write(p.fd, []byte(answerProto+s.o.Proto.String()+"\n"))
		unix.Close(p.fd)
		s.stats.Rejected++
		return true
	case len(s.clients) >= s.o.MaxClients:
		s.refuse(p.fd, fmt.Sprintf("server has its maximum of %d ring clients", s.o.MaxClients))
		return true
	}
	c, mfd, err := s.newClient(p.fd)
	if err != nil {
		s.refuse(p.fd, err.Error())
		return true
	}
	// The answer carries the doorbell and the client's memfd (SCM_RIGHTS):
	// see doorbell.go and the layout in layout.go.
	err = sendAnswer(p.fd, fmt.Sprintf("%s%s proto=%s\n", answerOK, c.name, s.o.Proto), s.bell, mfd)
	unix.Close(mfd) // the mapping holds it; the client has its own copy
	if err != nil {
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
	unix.Write(fd, []byte(answerErr+strings.ReplaceAll(why, "\n", " ")+"\n"))
	unix.Close(fd)
	s.stats.Rejected++
}

// newClient makes a client's shared memory, maps it and writes its header.
// It returns the memfd for the handshake answer; the caller closes it.
//
// The memory is a memfd sealed against shrinking and growing (and against
// removing the seals): nothing the client does to its copy of the
// descriptor can change the size of what the server has mapped, so no
// server access to it can fault with SIGBUS, which a client truncating a
// ring file could once cause. It has no name in any directory, so nothing
// outlives the last process that maps it, whether the server exits or
// crashes.
func (s *Server) newClient(fd int) (c *client, mfd int, err error) {
	s.nextID++
	c = &client{id: s.nextID, fd: fd, name: fmt.Sprintf("%s%x-%d", filePrefix, s.epoch, s.nextID)}
	if cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED); err == nil {
		c.pid = cred.Pid
	}
	mfd, err = unix.MemfdCreate(memfdName+c.name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, -1, fmt.Errorf("ring: memfd_create: %w", err)
	}
	size := int64(s.geo.size)
	// Allocate every page now: memory that cannot be had refuses this one
	// client at the handshake instead of faulting in the middle of serving.
	if err = unix.Ftruncate(mfd, size); err != nil {
		err = fmt.Errorf("ring: sizing a client's shared memory: %w", err)
	} else if err = unix.Fallocate(mfd, 0, 0, size); err != nil {
		err = fmt.Errorf("ring: cannot allocate %d bytes of shared memory for a client: %w", size, err)
	} else if _, err = unix.FcntlInt(uintptr(mfd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_SEAL); err != nil {
		err = fmt.Errorf("ring: sealing a client's shared memory: %w", err)
	} else {
		c.mem, err = shm.MapFD(mfd, s.geo.size)
	}
	if err != nil {
		unix.Close(mfd)
		return nil, -1, err
	}
	prefault(c.mem)
	// Header: plain writes before the memfd goes out on the socket (see
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
	shm.PutInt64(m, offMaxMsg, int64(s.o.MaxMessage))
	if s.barrier {
		shm.PutInt32(m, offFlags, flagBarrier)
	}
	// Heartbeat (then magic, last): written by the server (release), read by
	// the client (acquire, and plain for the magic after the handshake).
	shm.StoreInt64Release(m, offBeat, s.beat)
	shm.StoreInt64Release(m, offMagic, magic)
	c.req = newConsumer(m, s.geo.reqBase, s.geo.records, s.geo.recordSize)
	c.rep = newProducer(m, s.geo.repBase, s.geo.records, s.geo.recordSize)
	c.asm = newAssembler(s.geo.recordSize-recHeader, s.o.MaxMessage)
	c.sess = s.o.Handler.OpenMessage(s.o.Proto)
	if l, ok := c.sess.(transport.LaterAware); ok {
		c.later = l
		l.SetAnswer(func(reply []byte) bool {
			c.parkedNow = l.Parked() // unparked: this is its answer
			return s.answer(c, reply)
		})
	}
	return c, mfd, nil
}

// memfdWorks checks once, at Listen, that this kernel makes sealed memfds,
// so a server that cannot serve any client says so at start.
func memfdWorks() error {
	fd, err := unix.MemfdCreate(memfdName+"probe", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return fmt.Errorf("ring: this kernel cannot make the memfds the rings live in (memfd_create: %w)", err)
	}
	defer unix.Close(fd)
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_SEAL); err != nil {
		return fmt.Errorf("ring: this kernel cannot seal memfds (F_ADD_SEALS: %w)", err)
	}
	return nil
}

// Close answers the requests already in the rings, tells every client the
// server is closing, and removes every file the server made: ring files,
// the handshake socket, the lock file, and the directory if Listen made it.
func (s *Server) Close() error {
	if s.closed {
		return nil
	}
	for _, c := range slices.Clone(s.clients) {
		s.drain(c)
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

// drain serves what c has in its request ring, as far as its reply ring
// takes the replies.
func (s *Server) drain(c *client) {
	defer s.survive()
	debug.SetPanicOnFault(true)
	s.serve(c, s.o.Records)
}

// The handshake's lines. The client sends a hello naming the protocol it
// speaks, or "any" to speak the server's:
//
//	GOBLIN-RING 2 proto=resp|sbe|any
//
// and the server answers with one of
//
//	OK c-<epoch>-<id> proto=<p>   with the doorbell and the memfd attached
//	PROTO <p>                     the server speaks p, not what was asked
//	ERR <reason>
const (
	helloPrefix = "GOBLIN-RING "
	answerOK    = "OK "
	answerProto = "PROTO "
	answerErr   = "ERR "
	protoAny    = "any"
)

// helloLine is what a client sends first.
func helloLine(p proto.Protocol, anyProto bool) string {
	name := p.String()
	if anyProto {
		name = protoAny
	}
	return fmt.Sprintf("%s%d proto=%s\n", helloPrefix, version, name)
}

func parseHello(line string) (p proto.Protocol, anyProto bool, err error) {
	f := strings.Fields(line)
	if len(f) != 3 || f[0]+" " != helloPrefix || !strings.HasPrefix(f[2], "proto=") {
		return 0, false, fmt.Errorf("bad hello %q", line)
	}
	if f[1] != strconv.Itoa(version) {
		return 0, false, fmt.Errorf("client speaks ring version %s, server %d: use a client of the server's release", f[1], version)
	}
	name := strings.TrimPrefix(f[2], "proto=")
	if name == protoAny {
		return 0, true, nil
	}
	p, err = proto.Parse(name)
	return p, false, err
}

var _ transport.Server = (*Server)(nil)
