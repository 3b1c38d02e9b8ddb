package cluster

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/goblin-kv/goblin/proto/resp"
)

// ErrMigrate is wrapped by the errors of Migrator.Send: the target could
// not be reached, or did not answer in time.
var ErrMigrate = errors.New("cluster: migrate")

// migrateIdle is how long a Migrator keeps an unused connection (Redis
// keeps MIGRATE's connections 10 seconds).
const migrateIdle = 10 * time.Second

// Migrator carries MIGRATE's RESTORE commands to other servers over RESP
// on TCP, keeping a connection per target between calls as Redis does.
// It blocks its caller for at most the timeout given: MIGRATE is
// synchronous, in Redis as in goblin. Not safe for concurrent use (the
// loop goroutine calls it).
type Migrator struct {
	conns map[string]*migrateConn
}

type migrateConn struct {
	c    net.Conn
	used time.Time
	buf  []byte
}

// Send writes cmds (n RESP commands, one after another) to addr
// ("host:port") and reads their n replies, returning for each "" when it
// is not an error and the error's text when it is. A failure to connect,
// write or read in timeout closes the connection and returns an error
// wrapping ErrMigrate.
func (m *Migrator) Send(addr string, timeout time.Duration, cmds []byte, n int) ([]string, error) {
	if m.conns == nil {
		m.conns = map[string]*migrateConn{}
	}
	now := time.Now()
	for a, c := range m.conns {
		if now.Sub(c.used) > migrateIdle {
			c.c.Close()
			delete(m.conns, a)
		}
	}
	deadline := now.Add(timeout)
	mc := m.conns[addr]
	if mc == nil {
		c, err := net.DialTimeout("tcp", addr, timeout)
		if err != nil {
			return nil, fmt.Errorf("%w: connecting to %s: %w", ErrMigrate, addr, err)
		}
		mc = &migrateConn{c: c, buf: make([]byte, 0, 4096)}
		m.conns[addr] = mc
	}
	mc.used = now
	fail := func(what string, err error) ([]string, error) {
		mc.c.Close()
		delete(m.conns, addr)
		return nil, fmt.Errorf("%w: %s %s: %w", ErrMigrate, what, addr, err)
	}
	if err := mc.c.SetDeadline(deadline); err != nil {
		return fail("writing to", err)
	}
	if _, err := mc.c.Write(cmds); err != nil {
		return fail("writing to", err)
	}
	out := make([]string, 0, n)
	buf := mc.buf[:0]
	for len(out) < n {
		r, used, err := resp.ReadReply(buf)
		if err != nil {
			return fail("reading from", err)
		}
		if used == 0 {
			if len(buf) == cap(buf) {
				buf = append(buf, make([]byte, len(buf))...)[:len(buf)]
			}
			k, err := mc.c.Read(buf[len(buf):cap(buf)])
			if err != nil {
				return fail("reading from", err)
			}
			buf = buf[:len(buf)+k]
			continue
		}
		buf = buf[:copy(buf, buf[used:])]
		if r.Type == resp.Array {
			return fail("reading from", errors.New("unexpected array reply"))
		}
		if r.Type == resp.Error {
			out = append(out, string(r.Data))
		} else {
			out = append(out, "")
		}
	}
	mc.buf = buf[:0]
	return out, nil
}

// Close closes the connections the Migrator keeps.
func (m *Migrator) Close() {
	for a, c := range m.conns {
		c.c.Close()
		delete(m.conns, a)
	}
}
