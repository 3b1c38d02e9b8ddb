package replica

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/rdb"
)

// Errors a run ends with (wrapped with the detail).
var (
	// ErrHandshake: the primary refused a step of the handshake.
	ErrHandshake = errors.New("replica: handshake refused")
	// ErrTransfer: the snapshot transfer was malformed or cut.
	ErrTransfer = errors.New("replica: snapshot transfer failed")
	// ErrStopped: the loop stopped the run (REPLICAOF elsewhere, NO ONE).
	ErrStopped = errors.New("replica: link stopped")
	// ErrFailoverRefused: the replica a FAILOVER hands the primary role
	// to answered PSYNC ... FAILOVER with an error.
	ErrFailoverRefused = errors.New("replica: the failover target refused PSYNC FAILOVER")
)

// run is one connection attempt to the primary and, if it succeeds, the
// link's life until it breaks. Its goroutines never touch the loop's
// state: they post events.
type run struct {
	l      *Link
	o      Options // the link's options when the run started (the loop may change l.o)
	gen    uint64
	host   string
	port   int
	delay  time.Duration
	replid string
	offset int64
	// failover: PSYNC carries a fourth argument FAILOVER (Link.FollowFailover).
	failover bool
	quit     chan struct{}
	poke     chan struct{} // the loop asks for an ACK now
	stopped  atomic.Bool

	mu   sync.Mutex
	conn net.Conn
	wmu  sync.Mutex // one writer at a time: the handshake, then the ACK goroutine
}

// stop ends the run: its socket closes, its waits end. Loop goroutine.
func (r *run) stop() {
	if r.stopped.Swap(true) {
		return
	}
	close(r.quit)
	r.mu.Lock()
	if r.conn != nil {
		r.conn.Close()
	}
	r.mu.Unlock()
	r.l.mu.Lock()
	r.l.cond.Broadcast()
	r.l.mu.Unlock()
}

// ack asks the ACK goroutine to send REPLCONF ACK now. Loop goroutine.
func (r *run) ack() {
	select {
	case r.poke <- struct{}{}:
	default:
	}
}

func (r *run) main() {
	err := r.session()
	r.mu.Lock()
	if r.conn != nil {
		r.conn.Close()
	}
	r.mu.Unlock()
	if r.stopped.Load() {
		return
	}
	r.l.post(r, event{kind: evDown, err: err})
}

// timeoutConn sets a read deadline of repl-timeout before every read, so
// a primary silent that long ends the link.
type timeoutConn struct {
	net.Conn
	l *Link
}

func (c timeoutConn) Read(p []byte) (int, error) {
	_ = c.Conn.SetReadDeadline(time.Now().Add(time.Duration(c.l.timeout.Load())))
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.l.lastIO.Store(time.Now().UnixMilli())
		c.l.bytesIn.Add(int64(n))
	}
	return n, err
}

func (r *run) session() error {
	if r.delay > 0 {
		select {
		case <-time.After(r.delay):
		case <-r.quit:
			return ErrStopped
		}
	}
	l := r.l
	l.post(r, event{kind: evState, text: StateConnecting})
	addr := net.JoinHostPort(r.host, strconv.Itoa(r.port))
	var c net.Conn
	var err error
	if cfg := l.tlsConfig(); cfg != nil {
		c, err = dialTLS(addr, r.host, cfg, r.o.Timeout)
	} else {
		c, err = net.DialTimeout("tcp", addr, r.o.Timeout)
	}
	if err != nil {
		return fmt.Errorf("replica: connecting to %s: %w", addr, err)
	}
	r.mu.Lock()
	r.conn = c
	stopped := r.stopped.Load()
	r.mu.Unlock()
	if stopped {
		return ErrStopped
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	br := bufio.NewReaderSize(timeoutConn{Conn: c, l: l}, 64<<10)
	l.post(r, event{kind: evState, text: StateHandshake})
	full, err := r.handshake(c, br)
	if err != nil {
		return err
	}
	if full != nil {
		if err := r.fullSync(br, full); err != nil {
			return err
		}
	}
	go r.acks(c)
	// The stream is read by the loop itself from here (Link.readStream):
	// hand it the socket and what the buffer already holds, then wait
	// for the loop to end the run.
	rest, _ := br.Peek(br.Buffered())
	l.post(r, event{kind: evAttach, data: rest, conn: c, size: len(rest)})
	<-r.quit
	return ErrStopped
}

// fullResync is +FULLRESYNC's id and offset.
type fullResync struct {
	id     string
	offset int64
}

// handshake runs Redis 7.0's replica handshake (syncWithMaster): PING,
// AUTH, REPLCONF listening-port, REPLCONF capa eof capa psync2, PSYNC. It
// returns the +FULLRESYNC, or nil after a +CONTINUE (posted).
func (r *run) handshake(c net.Conn, br *bufio.Reader) (*fullResync, error) {
	l := r.l
	if err := r.write(c, resp.AppendCommand(nil, []byte("PING"))); err != nil {
		return nil, err
	}
	line, err := readLine(br)
	if err != nil {
		return nil, err
	}
	if len(line) == 0 {
		return nil, fmt.Errorf("%w: PING: an empty reply", ErrHandshake)
	}
	if line[0] == '-' && !bytes.HasPrefix(line, []byte("-NOAUTH")) && !bytes.HasPrefix(line, []byte("-NOPERM")) &&
		!bytes.HasPrefix(line, []byte("-ERR operation not permitted")) {
		return nil, fmt.Errorf("%w: PING: %s", ErrHandshake, line[1:])
	}
	var batch []byte
	steps := 0
	o := &r.o // the settings this connection started with (SetSettings may change l.o meanwhile)
	if o.MasterAuth != "" {
		if o.MasterUser != "" {
			batch = resp.AppendCommand(batch, []byte("AUTH"), []byte(o.MasterUser), []byte(o.MasterAuth))
		} else {
			batch = resp.AppendCommand(batch, []byte("AUTH"), []byte(o.MasterAuth))
		}
		steps++
	}
	port := o.ListeningPort
	if o.AnnouncePort > 0 {
		port = o.AnnouncePort
	}
	confs := 0
	if port > 0 {
		batch = resp.AppendCommand(batch, []byte("REPLCONF"), []byte("listening-port"), []byte(strconv.Itoa(port)))
		confs++
	}
	if o.AnnounceIP != "" {
		batch = resp.AppendCommand(batch, []byte("REPLCONF"), []byte("ip-address"), []byte(o.AnnounceIP))
		confs++
	}
	batch = resp.AppendCommand(batch, []byte("REPLCONF"), []byte("capa"), []byte("eof"), []byte("capa"), []byte("psync2"))
	if err := r.write(c, batch); err != nil {
		return nil, err
	}
	replies := 1 + steps + confs
	for i := 0; i < replies; i++ {
		line, err := readLine(br)
		if err != nil {
			return nil, err
		}
		if len(line) == 0 {
			i--
			continue
		}
		if line[0] == '-' {
			if i < steps {
				return nil, fmt.Errorf("%w: AUTH: %s", ErrHandshake, line[1:])
			}
			l.log.Warn("replica: the primary refused a REPLCONF (not critical)", "reply", string(line[1:]))
		}
	}
	id, off := r.replid, r.offset
	words := [][]byte{[]byte("PSYNC"), []byte("?"), []byte("-1")}
	if id != "?" && len(id) == 40 && off >= 0 {
		words[1], words[2] = []byte(id), []byte(strconv.FormatInt(off+1, 10))
	}
	if r.failover {
		words = append(words, []byte("FAILOVER"))
	}
	psync := resp.AppendCommand(nil, words...)
	if err := r.write(c, psync); err != nil {
		return nil, err
	}
	for {
		line, err := readLine(br)
		if err != nil {
			return nil, err
		}
		switch {
		case len(line) == 0:
			continue // a keepalive while the primary prepares the snapshot
		case bytes.HasPrefix(line, []byte("+FULLRESYNC")):
			f := bytes.Fields(line[1:])
			if len(f) != 3 {
				return nil, fmt.Errorf("%w: malformed %q", ErrHandshake, line)
			}
			o, err := strconv.ParseInt(string(f[2]), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%w: malformed %q", ErrHandshake, line)
			}
			fr := &fullResync{id: string(f[1]), offset: o}
			if len(fr.id) != 40 {
				fr.id = NoID
			}
			r.l.post(r, event{kind: evState, text: StateSync})
			return fr, nil
		case bytes.HasPrefix(line, []byte("+CONTINUE")):
			f := bytes.Fields(line[1:])
			newID := ""
			if len(f) >= 2 && len(f[1]) == 40 {
				newID = string(f[1])
			}
			r.l.ackOffset.Store(off)
			r.l.post(r, event{kind: evContinue, text: newID})
			return nil, nil
		case r.failover && line[0] == '-':
			return nil, fmt.Errorf("%w: %s", ErrFailoverRefused, line[1:])
		default:
			return nil, fmt.Errorf("%w: PSYNC: %s", ErrHandshake, line)
		}
	}
}

// fullSync receives the snapshot, in the $<len> or the diskless
// $EOF:<mark> form, decodes it and posts its keys in batches.
func (r *run) fullSync(br *bufio.Reader, fr *fullResync) error {
	l := r.l
	var line []byte
	for {
		var err error
		if line, err = readLine(br); err != nil {
			return fmt.Errorf("%w: waiting for the snapshot: %w", ErrTransfer, err)
		}
		if len(line) > 0 {
			break
		}
	}
	if line[0] == '-' {
		return fmt.Errorf("%w: %s", ErrTransfer, line[1:])
	}
	if line[0] != '$' {
		return fmt.Errorf("%w: bad bulk header %q", ErrTransfer, line)
	}
	var src io.Reader
	var eof *eofReader
	if bytes.HasPrefix(line, []byte("$EOF:")) {
		mark := line[5:]
		if len(mark) != MarkLen {
			return fmt.Errorf("%w: bad end mark in %q", ErrTransfer, line)
		}
		eof = newEOFReader(br, append([]byte(nil), mark...))
		src = eof
		l.syncTotal.Store(-1)
	} else {
		n, err := strconv.ParseInt(string(line[1:]), 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("%w: bad bulk length %q", ErrTransfer, line)
		}
		src = io.LimitReader(br, n)
		l.syncTotal.Store(n)
	}
	l.syncRead.Store(0)
	l.post(r, event{kind: evFull, text: fr.id, offset: fr.offset})
	cr := &countingReader{r: src, n: &l.syncRead}
	d := rdb.NewDecoder(cr, rdb.DecoderOptions{SkipUnsupported: r.o.SkipUnsupported,
		OnResizeDB: func(db int, keys, _ uint64) {
			l.post(r, event{kind: evResize, pos: db, offset: int64(min(keys, 1<<31))})
		}})
	b := newBatch()
	for d.Next() {
		if r.stopped.Load() {
			return ErrStopped
		}
		if b.add(d.Entry()) {
			l.post(r, b.event())
			b = newBatch()
		}
	}
	if err := d.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrTransfer, err)
	}
	if len(b.ents) > 0 {
		l.post(r, b.event())
	}
	// What the decoder left (nothing, for a well-formed snapshot) is not
	// the stream: read it to the end of the transfer.
	if _, err := io.Copy(io.Discard, cr); err != nil {
		return fmt.Errorf("%w: %w", ErrTransfer, err)
	}
	l.ackOffset.Store(fr.offset)
	l.post(r, event{kind: evFullDone, text: fr.id, offset: fr.offset})
	return nil
}

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// batch is decoded keys copied out of the decoder's buffers, which the
// next key reuses.
type batch struct {
	ents  []rdb.Entry
	arena []byte
	items [][]byte
}

const (
	batchKeys  = 1024
	batchBytes = 1 << 20
)

func newBatch() *batch {
	return &batch{ents: make([]rdb.Entry, 0, batchKeys), arena: make([]byte, 0, batchBytes)}
}

// add copies e in and reports whether the batch is full. The arena and
// the item list may move when they grow: the slices already handed out
// keep pointing at the old arrays, which nothing writes again.
func (b *batch) add(e *rdb.Entry) bool {
	c := rdb.Entry{DB: e.DB, Expiry: e.Expiry, Type: e.Type, Idle: e.Idle, Freq: e.Freq}
	c.Kind = e.Kind
	c.Key = b.copy(e.Key)
	if e.Str != nil {
		c.Str = b.copy(e.Str)
	}
	if len(e.Items) > 0 {
		start := len(b.items)
		for _, it := range e.Items {
			b.items = append(b.items, b.copy(it))
		}
		c.Items = b.items[start:len(b.items):len(b.items)]
	}
	if len(e.Scores) > 0 {
		c.Scores = append([]float64(nil), e.Scores...)
	}
	b.ents = append(b.ents, c)
	return len(b.ents) >= batchKeys || len(b.arena) >= batchBytes
}

func (b *batch) copy(p []byte) []byte {
	b.arena = append(b.arena, p...)
	return b.arena[len(b.arena)-len(p) : len(b.arena) : len(b.arena)]
}

func (b *batch) event() event {
	return event{kind: evEntries, entries: b.ents, size: len(b.arena) + 64*len(b.ents)}
}

// acks sends REPLCONF ACK <offset> every AckEvery and whenever the loop
// asks (after a load, on GETACK), until the run stops.
func (r *run) acks(c net.Conn) {
	t := time.NewTicker(r.o.AckEvery)
	defer t.Stop()
	var buf []byte
	for {
		select {
		case <-r.quit:
			return
		case <-t.C:
		case <-r.poke:
		}
		off := r.l.ackOffset.Load()
		if off < 0 {
			continue
		}
		buf = resp.AppendCommand(buf[:0], []byte("REPLCONF"), []byte("ACK"), strconv.AppendInt(nil, off, 10))
		if err := r.write(c, buf); err != nil {
			return // the reader sees the broken link too
		}
	}
}

func (r *run) write(c net.Conn, p []byte) error {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	_ = c.SetWriteDeadline(time.Now().Add(time.Duration(r.l.timeout.Load())))
	_, err := c.Write(p)
	return err
}

// readLine reads one line, without its CRLF (or bare LF: the primary's
// keepalives are "\n").
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("%w: line too long", ErrHandshake)
		}
		return nil, err
	}
	line = bytes.TrimRight(line, "\r\n")
	return line, nil
}
