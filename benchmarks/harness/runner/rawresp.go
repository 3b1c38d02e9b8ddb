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

// workload is what SET and GET send: the key names cycled over and the
// value every SET writes.
type workload struct {
	keys  [][]byte
	value []byte
}

func newWorkload(cfg *harness.Config) workload {
	w := workload{value: make([]byte, cfg.ValueSize)}
	for i := range w.value {
		w.value[i] = 'a' + byte(i%26)
	}
	for i := 0; i < cfg.Keys; i++ {
		w.keys = append(w.keys, []byte(fmt.Sprintf("bench:key:%06d", i)))
	}
	return w
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
	reqs     [harness.NumOps][][]byte // per op, one pre-encoded batch per key
	replies  [harness.NumOps][]byte   // per op, the expected reply batch
	next     [harness.NumOps]int
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
	getReply := []byte("$" + strconv.Itoa(len(w.value)) + "\r\n" + string(w.value) + "\r\n")
	for _, key := range w.keys {
		var ping, set, get []byte
		for i := 0; i < cfg.Depth; i++ {
			ping = respBulkArray(ping, []byte("PING"))
			set = respBulkArray(set, []byte("SET"), key, w.value)
			get = respBulkArray(get, []byte("GET"), key)
		}
		r.reqs[harness.OpPing] = append(r.reqs[harness.OpPing], ping)
		r.reqs[harness.OpSet] = append(r.reqs[harness.OpSet], set)
		r.reqs[harness.OpGet] = append(r.reqs[harness.OpGet], get)
	}
	r.replies[harness.OpPing] = bytes.Repeat([]byte("+PONG\r\n"), cfg.Depth)
	r.replies[harness.OpSet] = bytes.Repeat([]byte("+OK\r\n"), cfg.Depth)
	r.replies[harness.OpGet] = bytes.Repeat(getReply, cfg.Depth)
	r.buf = make([]byte, len(r.replies[harness.OpGet])+4096)
	r.describe = fmt.Sprintf("raw RESP over %s (harness's own client: pre-encoded requests, write(2)/read(2), wait=%s)", network, wait)
	return r, nil
}

// Preload writes every key once so GET finds a value.
func (r *rawRESP) preload() error {
	for range r.reqs[harness.OpSet] {
		if err := r.Do(harness.Set); err != nil {
			return err
		}
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
	want := r.replies[x]
	got := 0
	var deadline time.Time
	spins := 0
	for got < len(want) {
		n, err := unix.Read(r.fd, r.buf[got:])
		if n > 0 {
			got += n
			if r.buf[0] == '-' {
				return r.errorReply(got)
			}
			// Fail as soon as the reply departs from the expected bytes
			// rather than waiting for bytes that will never come.
			if got > len(want) || !bytes.Equal(r.buf[:got], want[:got]) {
				return fmt.Errorf("%w: %s answered %q, want %q", harness.ErrBadReply, op, r.buf[:min(got, 80)], want[:min(len(want), 80)])
			}
			continue
		}
		switch {
		case err == unix.EAGAIN && r.spin:
			if spins++; spins&4095 == 0 {
				if deadline.IsZero() {
					deadline = time.Now().Add(r.timeout)
				} else if time.Now().After(deadline) {
					return fmt.Errorf("%w: no reply to %s within %v", harness.ErrBadReply, op, r.timeout)
				}
			}
			continue
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return fmt.Errorf("%w: no reply to %s within %v", harness.ErrBadReply, op, r.timeout)
		case err != nil:
			return fmt.Errorf("read: %w", err)
		default:
			return fmt.Errorf("%w: server closed the connection during %s", harness.ErrBadReply, op)
		}
	}
	if got != len(want) || !bytes.Equal(r.buf[:got], want) {
		return fmt.Errorf("%w: %s answered %q, want %q", harness.ErrBadReply, op, r.buf[:min(got, 80)], want[:min(len(want), 80)])
	}
	return nil
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
