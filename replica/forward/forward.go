// Package forward is a replica's forwarded writes (opt-in,
// --replica-forward-writes; docs/replication-aeron.md): a write a
// read-only replica's client sends is run by the primary over a TCP
// connection of the replica's, and answered to the client once the
// replica has applied the primary's stream up to the write, so that
// client reads its own writes on the replica.
//
// For each write a connection goroutine sends the command, then ROLE, in
// one round trip: the primary runs them in order, so ROLE's offset is at
// or past the end of the write in the replication stream. The loop (Poll)
// answers the client once the replica's applied offset reaches it.
//
// With an AeronPath (aeron.go: an Aeron replica with a status channel) the
// writes go over Aeron instead while it is up: a request to the primary's
// status channel, the answer on the replication stream after the write,
// with the offset to wait for; TCP otherwise (counted as a fallback).
package forward

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/engine"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/transport"
)

// Defaults of Options.
const (
	DefaultTimeout = 5 * time.Second
	DefaultQueue   = 1024
)

// Options configure a Forwarder.
type Options struct {
	// Primary returns the primary this replica follows and whether it
	// follows one (engine.ReplicaControl's Role). Loop goroutine.
	Primary func() (host string, port int, ok bool)
	// Applied returns the offset of the primary's stream this replica
	// has applied. Loop goroutine.
	Applied func() int64
	// Done answers a parked client (engine.Engine.ForwardDone). Loop
	// goroutine.
	Done func(s *engine.Session, token uint64, reply []byte)
	// User and Password authenticate the forwarding connections
	// (masteruser, masterauth); no AUTH when Password is empty.
	User, Password string
	// TLS, when set (tls-replication yes), is the client configuration
	// the forwarding connections make their handshake with (ServerName
	// the primary's host when it names none).
	TLS *tls.Config
	// Timeout bounds both the primary's answer and the wait for the
	// replica to apply the write (default 5 s).
	Timeout time.Duration
	// Queue bounds the writes in flight (default 1024); past it writes
	// get READONLY.
	Queue int
	// Aeron, when set, carries the writes while it is up (aeron.go);
	// TCP otherwise.
	Aeron  AeronPath
	Logger *slog.Logger
}

// Stats are the forwarder's counters. Loop goroutine.
type Stats struct {
	Forwarded int64 // writes sent to the primary
	Answered  int64 // answered after the replica applied them
	Failed    int64 // the primary could not be reached or answered no offset
	Lagged    int64 // the replica did not apply the write within the timeout
	InFlight  int   // parked clients
	// OverAeron of Forwarded went over Aeron; TCPFallbacks went over TCP
	// because the Aeron path was not up (aeron.go).
	OverAeron, TCPFallbacks int64
}

type request struct {
	s     *engine.Session
	token uint64
	db    int
	cmd   []byte
	host  string
	port  int
}

type result struct {
	s      *engine.Session
	token  uint64
	reply  []byte
	offset int64 // -1: answer at once (an error, or no offset to wait for)
	failed bool
}

type pending struct {
	result
	until int64 // when it gives up waiting, on the clock of Poll's now
}

// Forwarder implements engine.WriteForwarder and the loop's transport
// interface (Poll; its WaitFD is an eventfd the connection goroutines
// signal when an answer is in).
type Forwarder struct {
	o       Options
	log     *slog.Logger
	queues  [2]chan request // RESP2, RESP3 connections
	results chan result
	efd     int
	wg      sync.WaitGroup
	closed  atomic.Bool
	waiting []pending
	inQueue int
	// owed counts the results taken from the channel whose doorbell
	// ring has not been read yet: a connection goroutine sends its result,
	// then rings (one eventfd write of 1 each), so a result can be taken
	// before its ring lands. Poll reads the eventfd while owed > 0, so a
	// late ring never leaves the loop's park descriptor readable for ever.
	// Loop goroutine.
	owed  int
	st    Stats
	aeron aeronState
}

// New starts the two connection goroutines (they dial on first use).
func New(o Options) (*Forwarder, error) {
	if o.Primary == nil || o.Applied == nil || o.Done == nil {
		return nil, errors.New("forward: Primary, Applied and Done are required")
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Queue <= 0 {
		o.Queue = DefaultQueue
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("forward: eventfd: %w", err)
	}
	f := &Forwarder{o: o, log: o.Logger, results: make(chan result, o.Queue), efd: efd, aeron: aeronState{path: o.Aeron}}
	for k := range f.queues {
		f.queues[k] = make(chan request, o.Queue)
		f.wg.Add(1)
		go f.conn(k == 1, f.queues[k])
	}
	return f, nil
}

// Forward implements engine.WriteForwarder.
func (f *Forwarder) Forward(s *engine.Session, token uint64, db int, resp3 bool, cmd []byte) bool {
	host, port, ok := f.o.Primary()
	if !ok || f.inQueue >= f.o.Queue {
		return false
	}
	if f.forwardAeron(s, token, db, resp3, cmd) {
		return true
	}
	k := 0
	if resp3 {
		k = 1
	}
	select {
	case f.queues[k] <- request{s: s, token: token, db: db, cmd: append([]byte(nil), cmd...), host: host, port: port}:
	default:
		return false
	}
	f.inQueue++
	f.st.Forwarded++
	return true
}

// Poll takes the primary's answers in and answers the clients whose
// writes this replica has applied (or that failed, or waited too long).
func (f *Forwarder) Poll(now int64) int {
	work := f.pollAeron(now)
	if f.inQueue == 0 && len(f.waiting) == 0 && f.owed == 0 {
		return work
	}
	for {
		select {
		case r := <-f.results:
			f.inQueue--
			f.owed++
			f.waiting = append(f.waiting, pending{result: r, until: now + int64(f.o.Timeout)})
			work++
			continue
		default:
		}
		break
	}
	if f.owed > 0 {
		// Clear the rings of the results taken (an eventfd read returns
		// their sum); EAGAIN: they have not landed yet.
		var b [8]byte
		if n, _ := unix.Read(f.efd, b[:]); n == 8 {
			f.owed = max(f.owed-int(binary.NativeEndian.Uint64(b[:])), 0)
		}
	}
	if len(f.waiting) == 0 {
		return work
	}
	applied := f.o.Applied()
	for i := 0; i < len(f.waiting); i++ {
		p := &f.waiting[i]
		switch {
		case p.failed:
			f.st.Failed++
		case p.offset < 0 || applied >= p.offset:
			f.st.Answered++
		default:
			if p.until == 0 { // an Aeron answer: its wait starts now
				p.until = now + int64(f.o.Timeout)
			}
			if now < p.until {
				continue
			}
			f.st.Lagged++
			p.reply = fmt.Appendf(nil, "-TRYAGAIN forwarded write: the primary ran it (stream offset %d) but this replica had applied only %d after %v; read from the primary or retry the read\r\n",
				p.offset, applied, f.o.Timeout)
		}
		f.o.Done(p.s, p.token, p.reply)
		f.waiting = append(f.waiting[:i], f.waiting[i+1:]...)
		i--
		work++
	}
	return work
}

// WaitFD is the doorbell the connection goroutines ring.
func (f *Forwarder) WaitFD() int { return f.efd }

// CheckNow implements the loop's Waitable (nothing to do).
func (f *Forwarder) CheckNow() {}

// Dormant: nothing in flight, nothing to watch.
func (f *Forwarder) Dormant() bool {
	return f.inQueue == 0 && len(f.waiting) == 0 && f.owed == 0 && len(f.aeron.flight) == 0
}

// UpdateStats implements transport.Server: a forwarder has no listener's
// counters.
func (f *Forwarder) UpdateStats(*transport.Stats) {}

// Name implements transport.Server.
func (f *Forwarder) Name() string { return "replica/forward" }

// Clients implements transport.Server: the parked clients.
func (f *Forwarder) Clients() int { return f.inQueue + len(f.waiting) + len(f.aeron.flight) }

// Stats fills st. Loop goroutine.
func (f *Forwarder) Stats(st *Stats) {
	*st = f.st
	st.InFlight = f.inQueue + len(f.waiting) + len(f.aeron.flight)
}

// AppendInfo appends the forwarder's lines to a replica's INFO
// replication (docs/replication-aeron.md lists them). Loop goroutine.
func (f *Forwarder) AppendInfo(b []byte) []byte {
	var st Stats
	f.Stats(&st)
	for _, kv := range [...]struct {
		k string
		v int64
	}{{"forwarded_writes", st.Forwarded}, {"forwarded_answered", st.Answered}, {"forwarded_failed", st.Failed},
		{"forwarded_lagged", st.Lagged}, {"forwarded_in_flight", int64(st.InFlight)},
		{"forwarded_aeron", st.OverAeron}, {"forwarded_tcp_fallbacks", st.TCPFallbacks}} {
		b = append(append(strconv.AppendInt(append(append(b, kv.k...), ':'), kv.v, 10), '\r'), '\n')
	}
	return b
}

// Close stops the connection goroutines.
func (f *Forwarder) Close() error {
	if f.closed.Swap(true) {
		return nil
	}
	for _, q := range f.queues {
		close(q)
	}
	f.wg.Wait()
	return unix.Close(f.efd)
}

// conn is one connection to the primary (RESP2 or RESP3): it runs the
// queued writes one after the other, each with ROLE after it.
func (f *Forwarder) conn(resp3 bool, q chan request) {
	defer f.wg.Done()
	var c net.Conn
	var br *bufio.Reader
	var addr string
	db := -1
	drop := func() {
		if c != nil {
			c.Close()
			c = nil
		}
		db = -1
	}
	defer drop()
	var out []byte
	for r := range q {
		res := result{s: r.s, token: r.token, offset: -1}
		a := net.JoinHostPort(r.host, strconv.Itoa(r.port))
		if c != nil && a != addr {
			drop()
		}
		var err error
		if c == nil {
			c, br, err = f.dial(a, resp3)
			addr = a
		}
		if err == nil {
			out = out[:0]
			if r.db != db {
				out = resp.AppendCommandString(out, "SELECT", strconv.Itoa(r.db))
			}
			out = append(out, r.cmd...)
			out = resp.AppendCommandString(out, "ROLE")
			c.SetDeadline(time.Now().Add(f.o.Timeout))
			_, err = c.Write(out)
			if err == nil && r.db != db {
				var sel []byte
				if sel, err = readReply(br, nil); err == nil && string(sel) != "+OK\r\n" {
					err = fmt.Errorf("SELECT %d answered %q", r.db, sel)
				}
			}
			if err == nil {
				db = r.db
				res.reply, err = readReply(br, nil)
			}
			if err == nil {
				var role []byte
				if role, err = readReply(br, nil); err == nil {
					res.offset = roleOffset(role)
				}
			}
		}
		if err != nil {
			drop()
			res.failed, res.offset = true, -1
			res.reply = fmt.Appendf(nil, "-ERR forwarded write: the connection to the primary %s failed (%s); the write may or may not have been applied\r\n",
				a, oneLine(err.Error()))
			f.log.Warn("replica: forwarding a write to the primary failed", "primary", a, "err", err)
		}
		if f.closed.Load() {
			continue
		}
		f.results <- res
		var one = [8]byte{1}
		unix.Write(f.efd, one[:])
	}
}

func (f *Forwarder) dial(addr string, resp3 bool) (net.Conn, *bufio.Reader, error) {
	var c net.Conn
	var err error
	if f.o.TLS != nil {
		cfg := f.o.TLS
		if cfg.ServerName == "" {
			cfg = cfg.Clone()
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		c, err = tls.DialWithDialer(&net.Dialer{Timeout: f.o.Timeout}, "tcp", addr, cfg)
	} else {
		c, err = net.DialTimeout("tcp", addr, f.o.Timeout)
	}
	if err != nil {
		return nil, nil, err
	}
	br := bufio.NewReader(c)
	var hello []byte
	switch {
	case resp3 && f.o.Password != "":
		user := f.o.User
		if user == "" {
			user = "default"
		}
		hello = resp.AppendCommandString(nil, "HELLO", "3", "AUTH", user, f.o.Password)
	case resp3:
		hello = resp.AppendCommandString(nil, "HELLO", "3")
	case f.o.Password != "" && f.o.User != "":
		hello = resp.AppendCommandString(nil, "AUTH", f.o.User, f.o.Password)
	case f.o.Password != "":
		hello = resp.AppendCommandString(nil, "AUTH", f.o.Password)
	}
	if hello != nil {
		c.SetDeadline(time.Now().Add(f.o.Timeout))
		if _, err := c.Write(hello); err != nil {
			c.Close()
			return nil, nil, err
		}
		rep, err := readReply(br, nil)
		if err == nil && len(rep) > 0 && rep[0] == '-' {
			err = errors.New(oneLine(string(rep[1:])))
		}
		if err != nil {
			c.Close()
			return nil, nil, err
		}
	}
	return c, br, nil
}

func oneLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\r' || s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}

// roleOffset reads a primary's ROLE answer (master, offset, replicas) and
// returns its offset; -1 for anything else (a replica's ROLE: nothing to
// wait for).
func roleOffset(b []byte) int64 {
	// *3\r\n$6\r\nmaster\r\n:<offset>\r\n…
	const head = "*3\r\n$6\r\nmaster\r\n:"
	if len(b) < len(head) || string(b[:len(head)]) != head {
		return -1
	}
	b = b[len(head):]
	n := 0
	for n < len(b) && b[n] != '\r' {
		n++
	}
	off, err := strconv.ParseInt(string(b[:n]), 10, 64)
	if err != nil {
		return -1
	}
	return off
}

// readReply appends one whole RESP2 or RESP3 reply, as received, to dst.
func readReply(br *bufio.Reader, dst []byte) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return dst, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return dst, fmt.Errorf("a malformed reply line %q", line)
	}
	dst = append(dst, line...)
	kind, body := line[0], line[1:len(line)-2] // line is only valid until the next read
	switch kind {
	case '+', '-', ':', '_', '#', ',', '(':
		return dst, nil
	case '$', '=', '!':
		n, err := strconv.Atoi(string(body))
		if err != nil {
			return dst, fmt.Errorf("a malformed length %q", line)
		}
		if n < 0 {
			return dst, nil
		}
		start := len(dst)
		dst = append(dst, make([]byte, n+2)...)
		_, err = io.ReadFull(br, dst[start:])
		return dst, err
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(string(body))
		if err != nil {
			return dst, fmt.Errorf("a malformed length %q", line)
		}
		if kind == '%' || kind == '|' {
			n *= 2
		}
		for range max(n, 0) {
			if dst, err = readReply(br, dst); err != nil {
				return dst, err
			}
		}
		if kind == '|' { // attributes come before the reply they describe
			return readReply(br, dst)
		}
		return dst, nil
	}
	return dst, fmt.Errorf("an unknown reply type %q", kind)
}
