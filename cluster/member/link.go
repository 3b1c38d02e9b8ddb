package member

import (
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/goblin-kv/goblin/cluster/bus"
)

// maxOutbox bounds a link's unsent bytes (Redis: cluster-link-sendbuf-limit,
// off by default; goblin keeps one so a stuck peer cannot grow memory).
const maxOutbox = 64 << 20

// link is one TCP connection of the bus. The loop goroutine owns node,
// inbound, ctime and peerIP; mu guards out and closed, shared with the
// writer goroutine.
type link struct {
	c       *Cluster
	conn    net.Conn
	node    *Node // the node this outbound link reaches; for an inbound link, once known
	inbound bool
	ctime   int64 // ms
	peerIP  string
	localIP string

	mu     sync.Mutex
	cond   *sync.Cond
	out    []byte
	spare  []byte
	closed bool
}

func (c *Cluster) newLink(conn net.Conn, inbound bool) *link {
	l := &link{c: c, conn: conn, inbound: inbound, ctime: c.now}
	l.cond = sync.NewCond(&l.mu)
	if conn != nil {
		l.setConn(conn)
	}
	c.links[l] = struct{}{}
	return l
}

func (l *link) setConn(conn net.Conn) {
	l.conn = conn
	if a, ok := conn.RemoteAddr().(*net.TCPAddr); ok {
		l.peerIP = a.IP.String()
	}
	if a, ok := conn.LocalAddr().(*net.TCPAddr); ok {
		l.localIP = a.IP.String()
	}
}

// start runs the link's reader and writer goroutines.
func (l *link) start() {
	l.c.wg.Add(2)
	go l.read()
	go l.write()
}

// send queues msg (copied); false when the link is closed or over its
// limit (it is then closed).
func (l *link) send(msg []byte) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	if len(l.out)+len(msg) > maxOutbox {
		l.closed = true
		l.cond.Broadcast()
		if l.conn != nil {
			l.conn.Close()
		}
		return false
	}
	wake := len(l.out) == 0
	l.out = append(l.out, msg...)
	if wake {
		l.cond.Signal()
	}
	return true
}

func (l *link) close() {
	l.mu.Lock()
	l.closed = true
	l.cond.Broadcast()
	conn := l.conn
	l.mu.Unlock()
	if conn != nil {
		conn.Close()
	}
}

// write sends the outbox until the link closes.
func (l *link) write() {
	defer l.c.wg.Done()
	for {
		l.mu.Lock()
		for len(l.out) == 0 && !l.closed {
			l.cond.Wait()
		}
		if l.closed {
			l.mu.Unlock()
			return
		}
		b := l.out
		l.out, l.spare = l.spare[:0], nil
		l.mu.Unlock()
		_ = l.conn.SetWriteDeadline(time.Now().Add(time.Minute))
		_, err := l.conn.Write(b)
		l.mu.Lock()
		if cap(b) <= 1<<20 {
			l.spare = b[:0]
		}
		l.mu.Unlock()
		if err != nil {
			l.close()
			return
		}
	}
}

// read frames the stream and queues each message for the loop.
func (l *link) read() {
	defer l.c.wg.Done()
	var rd bus.Reader
	for {
		buf := rd.Buffer(16 << 10)
		n, err := l.conn.Read(buf)
		if n > 0 {
			rd.Wrote(n)
			for {
				m, ferr := rd.Next()
				if ferr != nil {
					err = ferr
					break
				}
				if m == nil {
					break
				}
				l.c.post(event{kind: evMsg, l: l, msg: l.c.copyMsg(m)})
			}
			rd.Shrink(64 << 10)
		}
		if err != nil {
			l.close()
			l.c.post(event{kind: evClosed, l: l})
			return
		}
	}
}

// copyMsg copies m into a recycled buffer.
func (c *Cluster) copyMsg(m []byte) []byte {
	c.mu.Lock()
	var b []byte
	if k := len(c.free); k > 0 && len(m) <= 8192 {
		b, c.free = c.free[k-1], c.free[:k-1]
	}
	c.mu.Unlock()
	if b == nil {
		b = make([]byte, 0, max(len(m), 4096))
	}
	return append(b[:0], m...)
}

// post queues ev for the loop and rings the eventfd when the inbox was
// empty. Any goroutine.
func (c *Cluster) post(ev event) {
	c.mu.Lock()
	c.inbox = append(c.inbox, ev)
	ring := !c.pending.Load()
	c.pending.Store(true)
	c.mu.Unlock()
	if ring {
		one := [8]byte{1}
		_, _ = writeFD(c.efd, one[:])
	}
}

// accept takes inbound links.
func (c *Cluster) accept() {
	defer c.wg.Done()
	for {
		conn, err := c.ln.Accept()
		if err != nil {
			return
		}
		c.post(event{kind: evAccepted, conn: conn})
	}
}

// connect opens n's outbound link; the dial runs on its own goroutine.
func (c *Cluster) connect(n *Node) {
	l := c.newLink(nil, false)
	l.node = n
	n.link = l
	addr := net.JoinHostPort(n.ip, strconv.Itoa(n.cport))
	timeout := min(c.o.NodeTimeout, 5*time.Second)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		conn, err := c.dial(addr, timeout)
		if err != nil {
			c.post(event{kind: evClosed, l: l})
			return
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetNoDelay(true)
		}
		c.post(event{kind: evConnected, l: l, conn: conn})
	}()
}

// freeLink closes l and forgets it.
func (c *Cluster) freeLink(l *link) {
	if l == nil {
		return
	}
	l.close()
	delete(c.links, l)
	if l.node != nil {
		if l.node.link == l {
			l.node.link = nil
		}
		if l.node.inLink == l {
			l.node.inLink = nil
		}
	}
}
