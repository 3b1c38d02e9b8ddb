package runner

import (
	"bytes"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/goblin-kv/goblin/benchmarks/harness"
	"golang.org/x/sys/unix"
)

// workload is what the operations send: the key names cycled over (a
// string, a hash, a list and a sorted set per key number) and the value
// every SET, HSET and LPUSH writes.
type workload struct {
	keys, hashes, lists, zsets [][]byte
	value                      []byte
	// listPreload is the elements each list starts with, so that RPOP never
	// finds it empty: as many as one case's RPOPs could take from it.
	listPreload int
	// hashes, lists and sorted sets are preloaded only when the run
	// measures an operation on them: a run of PING, GET and SET measures a
	// keyspace of strings, as before collections were in the harness (a
	// preloaded list of 110,000 elements made every GET and SET of those
	// runs ~20-110 ns slower on the ring, whichever server).
	withHash, withList, withZset bool
}

// The sorted set's members: ZADD rescores zsetMembers-zsetFixed of them,
// always to a new score (the scores of ZADD's i-th request cycle over
// zsetScores, never equal for one member on consecutive visits);
// the first zsetFixed, with negative scores, are what ZRANGE 0 9 reads.
const (
	zsetMembers = 1000
	zsetFixed   = 10
	zsetField   = "field"
)

func newWorkload(cfg *harness.Config) workload {
	w := workload{value: make([]byte, cfg.ValueSize)}
	for i := range w.value {
		w.value[i] = 'a' + byte(i%26)
	}
	for i := 0; i < cfg.Keys; i++ {
		w.keys = append(w.keys, []byte(fmt.Sprintf("bench:key:%06d", i)))
		w.hashes = append(w.hashes, []byte(fmt.Sprintf("bench:hash:%06d", i)))
		w.lists = append(w.lists, []byte(fmt.Sprintf("bench:list:%06d", i)))
		w.zsets = append(w.zsets, []byte(fmt.Sprintf("bench:zset:%06d", i)))
	}
	w.listPreload = ((cfg.Warmup+cfg.Samples)/max(cfg.Keys, 1) + 1) * max(cfg.Depth, 1)
	for _, op := range cfg.WantedOps(harness.AllOps) {
		switch op {
		case harness.HSet, harness.HGet:
			w.withHash = true
		case harness.LPush, harness.RPop:
			w.withList = true
		case harness.ZAdd, harness.ZRange:
			w.withZset = true
		}
	}
	return w
}

// zsetMember is the sorted set's i-th member.
func zsetMember(i int) string {
	if i < zsetFixed {
		return "fixed:" + strconv.Itoa(i)
	}
	return "member:" + strconv.Itoa(i)
}

// zsetPreloadScore is member i's score before ZADD rescores it: the fixed
// members lowest, the others a score zsetAdd never gives.
func zsetPreloadScore(i int) int {
	if i < zsetFixed {
		return -1000 + i
	}
	return 2*zsetMembers + i
}

// zsetAdd is ZADD's n-th request (counting from 0): which member it rescores
// and to what score. Visiting the rescored members in order, with scores
// that go up by one and wrap at twice their count, no request sets a
// member's score to the one it already has.
func zsetAdd(n int) (member int, score int) {
	k := zsetMembers - zsetFixed
	n %= 2 * k
	return zsetFixed + n%k, n
}

// respBulkArray appends a RESP array of bulk strings.
func respBulkArray(b []byte, args ...[]byte) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}

// rawRESP is the harness's own measuring client for stream sockets: every
// request is encoded once up front, sent with one write(2), and the reply
// is read with read(2) on a socket the calling thread owns, compared byte
// for byte with the expected reply. It measures the server and the kernel
// path with no client library in between, and it is the same client for
// goblin-server and redis-server.
//
// With wait "spin" the socket is non-blocking and the thread polls it; with
// "block" the thread sleeps in read(2).
type rawRESP struct {
	fd       int
	spin     bool
	timeout  time.Duration
	reqs     [harness.NumOps][][]byte // per op, one pre-encoded batch per key (ZADD: per request of a cycle)
	replies  [harness.NumOps][]byte   // per op, the expected reply batch; nil: depth integers of any value
	depth    int
	next     [harness.NumOps]int
	preloads [][]byte // requests run once before measuring, with their replies unchecked but for errors
	buf      []byte
	describe string
}

// dialRawRESP connects to network ("unix" or "tcp") addr and prepares the
// requests: depth copies of each request per batch, one batch per key.
func dialRawRESP(network, addr string, cfg *harness.Config, wait string) (*rawRESP, error) {
	var fd int
	var err error
	switch network {
	case "unix":
		fd, err = unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			err = unix.Connect(fd, &unix.SockaddrUnix{Name: addr})
		}
	case "tcp":
		var ta *net.TCPAddr
		if ta, err = net.ResolveTCPAddr("tcp", addr); err != nil {
			return nil, err
		}
		ip4 := ta.IP.To4()
		if ip4 == nil {
			return nil, fmt.Errorf("harness: raw client wants an IPv4 address, got %s", addr)
		}
		fd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			sa := &unix.SockaddrInet4{Port: ta.Port}
			copy(sa.Addr[:], ip4)
			err = unix.Connect(fd, sa)
		}
		if err == nil {
			err = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
		}
	default:
		return nil, fmt.Errorf("harness: raw client network %q", network)
	}
	if err != nil {
		if fd > 0 {
			unix.Close(fd)
		}
		return nil, fmt.Errorf("connect %s %s: %w", network, addr, err)
	}
	r := &rawRESP{fd: fd, spin: wait == "spin", timeout: cfg.CaseTimeout}
	if r.spin {
		err = unix.SetNonblock(fd, true)
	} else {
		tv := unix.NsecToTimeval(cfg.CaseTimeout.Nanoseconds())
		err = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	}
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	w := newWorkload(cfg)
	r.depth = cfg.Depth
	bulk := func(v []byte) []byte { return []byte("$" + strconv.Itoa(len(v)) + "\r\n" + string(v) + "\r\n") }
	repeat := func(args ...[]byte) []byte {
		var b []byte
		for i := 0; i < cfg.Depth; i++ {
			b = respBulkArray(b, args...)
		}
		return b
	}
	field := []byte(zsetField)
	for i, key := range w.keys {
		hash, list, zset := w.hashes[i], w.lists[i], w.zsets[i]
		r.reqs[harness.OpPing] = append(r.reqs[harness.OpPing], repeat([]byte("PING")))
		r.reqs[harness.OpSet] = append(r.reqs[harness.OpSet], repeat([]byte("SET"), key, w.value))
		r.reqs[harness.OpGet] = append(r.reqs[harness.OpGet], repeat([]byte("GET"), key))
		r.reqs[harness.OpHSet] = append(r.reqs[harness.OpHSet], repeat([]byte("HSET"), hash, field, w.value))
		r.reqs[harness.OpHGet] = append(r.reqs[harness.OpHGet], repeat([]byte("HGET"), hash, field))
		r.reqs[harness.OpLPush] = append(r.reqs[harness.OpLPush], repeat([]byte("LPUSH"), list, w.value))
		r.reqs[harness.OpRPop] = append(r.reqs[harness.OpRPop], repeat([]byte("RPOP"), list))
		r.reqs[harness.OpZRange] = append(r.reqs[harness.OpZRange], repeat([]byte("ZRANGE"), zset, []byte("0"), []byte("9")))
		// Preloads: the string, the hash's field, the list's elements, the
		// sorted set's members.
		r.preloads = append(r.preloads, respBulkArray(nil, []byte("SET"), key, w.value))
		if w.withHash {
			r.preloads = append(r.preloads, respBulkArray(nil, []byte("HSET"), hash, field, w.value))
		}
		for left := w.listPreload; w.withList && left > 0; left -= 1000 {
			args := [][]byte{[]byte("LPUSH"), list}
			for range min(left, 1000) {
				args = append(args, w.value)
			}
			r.preloads = append(r.preloads, respBulkArray(nil, args...))
		}
		if !w.withZset {
			continue
		}
		args := [][]byte{[]byte("ZADD"), zset}
		for m := range zsetMembers {
			args = append(args, []byte(strconv.Itoa(zsetPreloadScore(m))), []byte(zsetMember(m)))
		}
		r.preloads = append(r.preloads, respBulkArray(nil, args...))
	}
	// ZADD's batches go round the cycle of zsetAdd over every key's sorted
	// set in turn.
	for n := range 2 * (zsetMembers - zsetFixed) {
		for _, zset := range w.zsets {
			var b []byte
			for d := range cfg.Depth {
				m, score := zsetAdd(n*cfg.Depth + d)
				b = respBulkArray(b, []byte("ZADD"), zset, []byte(strconv.Itoa(score)), []byte(zsetMember(m)))
			}
			r.reqs[harness.OpZAdd] = append(r.reqs[harness.OpZAdd], b)
		}
	}
	var zrange []byte
	zrange = append(zrange, "*10\r\n"...)
	for m := range zsetFixed {
		zrange = append(zrange, bulk([]byte(zsetMember(m)))...)
	}
	r.replies[harness.OpPing] = bytes.Repeat([]byte("+PONG\r\n"), cfg.Depth)
	r.replies[harness.OpSet] = bytes.Repeat([]byte("+OK\r\n"), cfg.Depth)
	r.replies[harness.OpGet] = bytes.Repeat(bulk(w.value), cfg.Depth)
	r.replies[harness.OpHSet] = bytes.Repeat([]byte(":0\r\n"), cfg.Depth) // the field exists: rewritten
	r.replies[harness.OpHGet] = r.replies[harness.OpGet]
	r.replies[harness.OpRPop] = r.replies[harness.OpGet]
	r.replies[harness.OpZAdd] = r.replies[harness.OpHSet] // the member exists: rescored
	r.replies[harness.OpZRange] = bytes.Repeat(zrange, cfg.Depth)
	longest := 0
	for _, rep := range r.replies {
		longest = max(longest, len(rep))
	}
	r.buf = make([]byte, longest+4096)
	r.describe = fmt.Sprintf("raw RESP over %s (harness's own client: pre-encoded requests, write(2)/read(2), wait=%s)", network, wait)
	return r, nil
}

// Preload writes every key (string, hash, list, sorted set) once, so that
// GET, HGET and RPOP find a value and HSET and ZADD rewrite existing ones.
func (r *rawRESP) preload() error {
	for _, req := range r.preloads {
		if err := r.send(req); err != nil {
			return err
		}
		if err := r.readLines("preload", 1, 0); err != nil {
			return err
		}
	}
	return nil
}

// send writes req whole.
func (r *rawRESP) send(req []byte) error {
	for len(req) > 0 {
		n, err := unix.Write(r.fd, req)
		if err == unix.EAGAIN || err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("write: %w", err)
		}
		req = req[n:]
	}
	return nil
}

// readLines reads n one-line replies (integers, statuses) and fails on an
// error reply, or, when want is ':', on any reply that is not an integer.
func (r *rawRESP) readLines(op harness.Op, n int, want byte) error {
	got, lines := 0, 0
	for lines < n {
		k, err := r.read(r.buf[got:], op)
		if err != nil {
			return err
		}
		got += k
		if r.buf[0] == '-' {
			return r.errorReply(got)
		}
		lines = bytes.Count(r.buf[:got], []byte("\r\n"))
		if got == len(r.buf) && lines < n {
			return fmt.Errorf("%w: replies longer than %d bytes", harness.ErrBadReply, len(r.buf))
		}
	}
	rest := r.buf[:got]
	for range n {
		line, tail, _ := bytes.Cut(rest, []byte("\r\n"))
		if len(line) == 0 || want != 0 && line[0] != want {
			return fmt.Errorf("%w: %s answered %q, want an integer", harness.ErrBadReply, op, r.buf[:min(got, 80)])
		}
		for _, c := range line[1:] {
			if want == ':' && (c < '0' || c > '9') {
				return fmt.Errorf("%w: %s answered %q, want an integer", harness.ErrBadReply, op, r.buf[:min(got, 80)])
			}
		}
		rest = tail
	}
	if len(rest) != 0 {
		return fmt.Errorf("%w: %d bytes beyond the replies", harness.ErrBadReply, len(rest))
	}
	return nil
}

// Do sends one batch and reads its complete reply. It does not allocate.
func (r *rawRESP) Do(op harness.Op) error {
	x := op.Index()
	batches := r.reqs[x]
	i := r.next[x]
	req := batches[i]
	if i++; i == len(batches) {
		i = 0
	}
	r.next[x] = i
	if err := r.send(req); err != nil {
		return err
	}
	want := r.replies[x]
	if want == nil { // LPUSH: the list's growing length
		return r.readLines(op, r.depth, ':')
	}
	got := 0
	for got < len(want) {
		n, err := r.read(r.buf[got:], op)
		if err != nil {
			return err
		}
		got += n
		if r.buf[0] == '-' {
			return r.errorReply(got)
		}
		// Fail as soon as the reply departs from the expected bytes
		// rather than waiting for bytes that will never come.
		if got > len(want) || !bytes.Equal(r.buf[:got], want[:got]) {
			return fmt.Errorf("%w: %s answered %q, want %q", harness.ErrBadReply, op, r.buf[:min(got, 80)], want[:min(len(want), 80)])
		}
	}
	return nil
}

// read reads what the socket has into b (at least one byte), spinning or
// blocking as the client waits, within the case's timeout.
func (r *rawRESP) read(b []byte, op harness.Op) (int, error) {
	var deadline time.Time
	spins := 0
	for {
		n, err := unix.Read(r.fd, b)
		if n > 0 {
			return n, nil
		}
		switch {
		case err == unix.EAGAIN && r.spin:
			if spins++; spins&4095 == 0 {
				if deadline.IsZero() {
					deadline = time.Now().Add(r.timeout)
				} else if time.Now().After(deadline) {
					return 0, fmt.Errorf("%w: no reply to %s within %v", harness.ErrBadReply, op, r.timeout)
				}
			}
		case err == unix.EINTR:
		case err == unix.EAGAIN:
			return 0, fmt.Errorf("%w: no reply to %s within %v", harness.ErrBadReply, op, r.timeout)
		case err != nil:
			return 0, fmt.Errorf("read: %w", err)
		default:
			return 0, fmt.Errorf("%w: server closed the connection during %s", harness.ErrBadReply, op)
		}
	}
}

// errorReply reads the rest of a RESP error line and returns it.
func (r *rawRESP) errorReply(got int) error {
	for !bytes.Contains(r.buf[:got], []byte("\r\n")) && got < len(r.buf) {
		n, err := unix.Read(r.fd, r.buf[got:])
		if n > 0 {
			got += n
		} else if err != unix.EAGAIN && err != unix.EINTR {
			break
		}
	}
	line, _, _ := bytes.Cut(r.buf[:got], []byte("\r\n"))
	return fmt.Errorf("%w: server error %q", harness.ErrBadReply, line)
}

func (r *rawRESP) Describe() string { return r.describe }

func (r *rawRESP) Close() error { return unix.Close(r.fd) }
