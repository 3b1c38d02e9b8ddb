package engine

import (
	"bytes"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/store"
)

// blockStep is one command of a blocking script: the client that sends
// it, the clients whose next reply it brings (in order; nil: the sender's
// own), and a pause before it (timeouts). "$ID<n>" in args stands for
// client n's id.
type blockStep struct {
	conn    int
	args    []string
	answers []int
	sleep   time.Duration
}

func bs3(conn int, answers []int, args ...string) blockStep {
	return blockStep{conn: conn, args: args, answers: answers}
}

// blocks: the step blocks its sender (no reply now).
var blocks = []int{}

// blockScript is the multi-client script: blocking on every command, the
// push that serves it (first blocked first served), timeouts, MULTI,
// CLIENT UNBLOCK, wrong types and the errors.
func blockScript() []blockStep {
	ms := func(d time.Duration, s blockStep) blockStep { s.sleep = d; return s }
	return []blockStep{
		// Served at once, and the argument errors.
		bs3(0, nil, "RPUSH", "l", "a", "b", "c"), bs3(0, nil, "BLPOP", "nokey", "l", "0"), bs3(0, nil, "BRPOP", "l", "1.5"),
		bs3(0, nil, "BLPOP", "l", "x"), bs3(0, nil, "BLPOP", "l", "-1"), bs3(0, nil, "BLPOP", "l", "nan"),
		bs3(0, nil, "BLPOP", "l", " 1"), bs3(0, nil, "BLPOP", "l", "-0.0001"), bs3(0, nil, "BLPOP", "l"),
		bs3(0, nil, "SET", "s", "str"), bs3(0, nil, "BLPOP", "s", "l", "0"), bs3(0, nil, "BLPOP", "l", "s", "0"),
		bs3(0, nil, "BZPOPMIN", "s", "0"), bs3(0, nil, "BZPOPMIN", "z", "x"),
		bs3(0, nil, "ZADD", "z", "1", "a", "2", "b", "3", "c"), bs3(0, nil, "BZPOPMIN", "nokey", "z", "0"),
		bs3(0, nil, "BZPOPMAX", "z", "0"), bs3(0, nil, "BZPOPMAX", "z", "-1"),
		bs3(0, nil, "RPUSH", "m", "1", "2", "3", "4"), bs3(0, nil, "BLMPOP", "0", "2", "nokey", "m", "LEFT", "COUNT", "2"),
		bs3(0, nil, "BLMPOP", "0", "1", "m", "RIGHT"), bs3(0, nil, "BLMPOP", "x", "1", "m", "LEFT"),
		bs3(0, nil, "BLMPOP", "0", "0", "m", "LEFT"), bs3(0, nil, "BLMPOP", "0", "1", "m", "UP"),
		bs3(0, nil, "BLMPOP", "0", "1", "m", "LEFT", "COUNT", "0"), bs3(0, nil, "BLMPOP", "-1", "1", "m", "LEFT", "COUNT", "0"),
		bs3(0, nil, "BLMPOP", "0", "3", "m", "LEFT"), bs3(0, nil, "BLMPOP", "0", "1", "s", "LEFT"),
		bs3(0, nil, "ZADD", "z", "4", "d", "5", "e"), bs3(0, nil, "BZMPOP", "0", "2", "nokey", "z", "MAX", "COUNT", "2"),
		bs3(0, nil, "BZMPOP", "0", "1", "z", "MIN"), bs3(0, nil, "BZMPOP", "0", "1", "z", "LEFT"),
		bs3(0, nil, "BLMOVE", "m", "d", "LEFT", "RIGHT", "0"), bs3(0, nil, "BLMOVE", "m", "d", "UP", "RIGHT", "0"),
		bs3(0, nil, "BLMOVE", "m", "d", "LEFT", "RIGHT", "x"), bs3(0, nil, "BRPOPLPUSH", "d", "m", "0"),
		bs3(0, nil, "BRPOPLPUSH", "m", "s", "0"), bs3(0, nil, "LRANGE", "m", "0", "-1"), bs3(0, nil, "DEL", "l", "m", "d", "z"),

		// One client blocks, another pushes: the first blocked is served
		// first, and the push's reply comes before.
		bs3(1, blocks, "BLPOP", "q", "q2", "0"), bs3(2, blocks, "BRPOP", "q", "0"),
		bs3(0, []int{0, 1}, "RPUSH", "q", "x"), bs3(0, []int{0, 2}, "RPUSH", "q", "y", "z"),
		bs3(0, nil, "LRANGE", "q", "0", "-1"), bs3(0, nil, "DEL", "q"),
		// One push of several elements serves several clients.
		bs3(1, blocks, "BLPOP", "q", "0"), bs3(2, blocks, "BLPOP", "q", "0"),
		bs3(0, []int{0, 1, 2}, "RPUSH", "q", "a", "b", "c"), bs3(0, nil, "LRANGE", "q", "0", "-1"),
		// The second key of a client's list.
		bs3(1, blocks, "BLPOP", "e1", "e2", "0"), bs3(0, []int{0, 1}, "LPUSH", "e2", "v"),
		// A timeout answers the null array.
		bs3(1, blocks, "BLPOP", "t", "0.1"), ms(300*time.Millisecond, bs3(0, []int{0, 1}, "PING")),
		bs3(1, blocks, "BZPOPMIN", "t", "0.1"), ms(300*time.Millisecond, bs3(0, []int{0, 1}, "PING")),
		bs3(1, blocks, "BLMOVE", "t", "u", "LEFT", "LEFT", "0.1"), ms(300*time.Millisecond, bs3(0, []int{0, 1}, "PING")),
		// Inside MULTI they answer at once; the EXEC's pushes serve.
		bs3(0, nil, "MULTI"), bs3(0, nil, "BLPOP", "w", "0"), bs3(0, nil, "BLMOVE", "w", "x", "LEFT", "LEFT", "0"),
		bs3(0, nil, "BZPOPMIN", "w", "0"), bs3(0, nil, "BLMPOP", "0", "1", "w", "LEFT"), bs3(0, nil, "BZMPOP", "0", "1", "w", "MIN"),
		bs3(0, nil, "EXEC"),
		bs3(1, blocks, "BLPOP", "w", "0"), bs3(0, nil, "MULTI"), bs3(0, nil, "RPUSH", "w", "1", "2"), bs3(0, nil, "LPOP", "w"),
		bs3(0, []int{0, 1}, "EXEC"), bs3(0, nil, "LLEN", "w"),
		// BLMOVE chains into a client blocked on the destination.
		bs3(1, blocks, "BLMOVE", "src", "dst", "RIGHT", "LEFT", "0"), bs3(2, blocks, "BLPOP", "dst", "0"),
		bs3(0, []int{0, 1, 2}, "RPUSH", "src", "v"), bs3(0, nil, "EXISTS", "src", "dst"),
		bs3(1, blocks, "BRPOPLPUSH", "src", "dst", "0"), bs3(0, []int{0, 1}, "RPUSH", "src", "a", "b"),
		bs3(0, nil, "LRANGE", "dst", "0", "-1"), bs3(0, nil, "LRANGE", "src", "0", "-1"),
		// Sorted sets, and the B*MPOP forms.
		bs3(1, blocks, "BZPOPMAX", "zz", "0"), bs3(2, blocks, "BZMPOP", "0", "1", "zz", "MIN", "COUNT", "5"),
		bs3(0, []int{0, 1, 2}, "ZADD", "zz", "1", "a", "2", "b", "3", "c"), bs3(0, nil, "ZRANGE", "zz", "0", "-1"),
		bs3(1, blocks, "BLMPOP", "0", "2", "ml", "ml2", "RIGHT", "COUNT", "3"), bs3(0, []int{0, 1}, "RPUSH", "ml2", "1", "2"),
		// A key that becomes another type keeps the client blocked; a list
		// pushed to a sorted-set waiter does not serve it.
		bs3(1, blocks, "BLPOP", "k", "0"), bs3(0, nil, "SET", "k", "str"), bs3(0, nil, "DEL", "k"),
		bs3(2, blocks, "BZPOPMIN", "k2", "0"), bs3(0, nil, "RPUSH", "k2", "x"), bs3(0, nil, "DEL", "k2"),
		bs3(0, []int{0, 1}, "RPUSH", "k", "v"), bs3(0, []int{0, 2}, "ZADD", "k2", "1", "m"),
		// BLMOVE served when its destination became another type: the
		// WRONGTYPE, nothing popped.
		bs3(1, blocks, "BLMOVE", "src2", "dst2", "LEFT", "LEFT", "0"), bs3(0, nil, "SET", "dst2", "x"),
		bs3(0, []int{0, 1}, "RPUSH", "src2", "v"), bs3(0, nil, "LRANGE", "src2", "0", "-1"),
		// CLIENT UNBLOCK: as a timeout, with the error, and of a client
		// that is not blocked.
		bs3(1, blocks, "BLPOP", "never", "0"), bs3(0, nil, "CLIENT", "UNBLOCK", "$ID1", "BOGUS"),
		bs3(0, []int{0, 1}, "CLIENT", "UNBLOCK", "$ID1"),
		bs3(2, blocks, "BZPOPMIN", "never", "0"), bs3(0, []int{0, 2}, "CLIENT", "UNBLOCK", "$ID2", "ERROR"),
		bs3(1, blocks, "BLMOVE", "never", "x", "LEFT", "LEFT", "0"), bs3(0, []int{0, 1}, "CLIENT", "UNBLOCK", "$ID1", "TIMEOUT"),
		bs3(0, nil, "CLIENT", "UNBLOCK", "$ID1"), bs3(0, nil, "CLIENT", "UNBLOCK", "999999"),
		bs3(0, nil, "CLIENT", "UNBLOCK", "x"),
		// and of a client parked in WAIT (no replica acknowledges).
		bs3(1, blocks, "WAIT", "1", "0"), bs3(0, []int{0, 1}, "CLIENT", "UNBLOCK", "$ID1"),
		bs3(1, blocks, "WAIT", "1", "0"), bs3(0, []int{0, 1}, "CLIENT", "UNBLOCK", "$ID1", "ERROR"),
		// INFO's blocked_clients and CLIENT LIST's flag b.
		bs3(1, blocks, "BLPOP", "never", "0"), bs3(0, nil, "INFO", "clients"), bs3(0, nil, "CLIENT", "LIST", "ID", "$ID1"),
		bs3(0, []int{0, 1}, "CLIENT", "UNBLOCK", "$ID1"),
	}
}

// blockNorm keeps what the blocking script compares of INFO clients and
// CLIENT LIST: blocked_clients, and the flags field.
func blockNorm(args []string, b []byte) []byte {
	switch {
	case args[0] == "INFO":
		for _, l := range strings.Split(string(b), "\r\n") {
			if strings.HasPrefix(l, "blocked_clients:") {
				return []byte(l)
			}
		}
	case args[0] == "CLIENT" && args[1] == "LIST":
		for _, f := range strings.Fields(string(b)) {
			if strings.HasPrefix(f, "flags=") {
				return []byte(f)
			}
		}
	}
	return b
}

// TestBlockingAgainstRedis runs blockScript on three connections to
// redis-server 7.0 and on three sessions of one engine, in RESP2 and
// RESP3, and compares every reply's bytes.
func TestBlockingAgainstRedis(t *testing.T) {
	steps := blockScript()
	for _, resp3 := range []bool{false, true} {
		var conns [3]net.Conn
		var ids [3]string
		for i := range conns {
			c, err := net.Dial("unix", redisSocket(t))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(30 * time.Second))
			conns[i] = c
			id := roundTrip(t, c, resp.AppendCommandString(nil, "CLIENT", "ID"))
			ids[i] = strings.TrimSpace(string(id[1:]))
			if resp3 {
				roundTrip(t, c, resp.AppendCommandString(nil, "HELLO", "3"))
			}
		}
		roundTrip(t, conns[0], resp.AppendCommandString(nil, "FLUSHALL"))
		ctl, err := net.Dial("unix", redisSocket(t)) // watches for a client to block
		if err != nil {
			t.Fatal(err)
		}
		defer ctl.Close()

		st, err := store.New(store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		e := NewEngine(st, Options{})
		var sessions [3]*Session
		var streams [3][]byte
		var gids [3]string
		for i := range sessions {
			i := i
			sessions[i] = e.Open(proto.RESP, nil)
			sessions[i].Attach(Conn{Addr: "/tmp/goblin-" + strconv.Itoa(i) + ".sock:0", FD: -1, Kill: func() {},
				Push: func(b []byte) bool { streams[i] = append(streams[i], b...); return true }})
			gids[i] = strconv.FormatUint(sessions[i].ID, 10)
			if resp3 {
				_, _, _ = e.ServeStream(sessions[i], resp.AppendCommandString(nil, "HELLO", "3"), nil)
			}
		}
		subst := func(args []string, ids [3]string) []string {
			out := append([]string(nil), args...)
			for j, a := range out {
				if strings.HasPrefix(a, "$ID") {
					n, _ := strconv.Atoi(a[3:])
					out[j] = ids[n]
				}
			}
			return out
		}
		for i, stp := range steps {
			time.Sleep(stp.sleep)
			answers := stp.answers
			if answers == nil {
				answers = []int{stp.conn}
			}
			theirIn := resp.AppendCommandString(nil, subst(stp.args, ids)...)
			if _, err := conns[stp.conn].Write(theirIn); err != nil {
				t.Fatal(err)
			}
			e.Tick(1000) // the engine's timeouts, as the server's loop ticks
			ourIn := resp.AppendCommandString(nil, subst(stp.args, gids)...)
			n, out, _ := e.ServeStream(sessions[stp.conn], ourIn, nil)
			if n != len(ourIn) {
				t.Fatalf("step %d %q: goblin consumed %d of %d bytes", i, stp.args, n, len(ourIn))
			}
			streams[stp.conn] = append(streams[stp.conn], out...)
			if stp.answers != nil && len(stp.answers) == 0 {
				waitBlocked(t, ctl, ids[stp.conn], stp.args)
			}
			for _, c := range answers {
				theirs := readReply(t, conns[c], stp.args)
				_, k, err := parseNode(streams[c])
				if err != nil || k == 0 {
					t.Fatalf("RESP%d step %d %q: goblin's client %d has no reply (%q), redis's has %q",
						2+b2i(resp3), i, stp.args, c, streams[c], theirs)
				}
				ours := streams[c][:k]
				streams[c] = streams[c][k:]
				if stp.args[0] == "INFO" || (stp.args[0] == "CLIENT" && stp.args[1] == "LIST") {
					ours, theirs = blockNorm(stp.args, ours), blockNorm(stp.args, theirs)
				}
				if !bytes.Equal(ours, theirs) {
					t.Errorf("RESP%d step %d, client %d, %q:\ngoblin %q\n redis %q", 2+b2i(resp3), i, c, stp.args, ours, theirs)
				}
			}
			for c := range streams {
				if len(streams[c]) > 0 {
					t.Fatalf("RESP%d step %d %q: goblin's client %d has an answer redis did not give: %q",
						2+b2i(resp3), i, stp.args, c, streams[c])
				}
			}
		}
	}
}

// readReply reads one reply from c (redis-server), failing with the
// command that should have brought it when none comes.
func readReply(t *testing.T, c net.Conn, args []string) []byte {
	t.Helper()
	var out []byte
	buf := make([]byte, 64<<10)
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		if _, k, err := parseNode(out); err != nil {
			t.Fatalf("redis reply %q: %v", out, err)
		} else if k > 0 {
			if k != len(out) {
				t.Fatalf("redis sent more than one reply after %q: %q", args, out)
			}
			return out[:k]
		}
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("no redis reply after %q within 5s: %v", args, err)
		}
		out = append(out, buf[:n]...)
	}
}

// waitBlocked waits until redis-server has client id blocked (flag b),
// so the next step, on another connection, comes after the block.
func waitBlocked(t *testing.T, ctl net.Conn, id string, args []string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		_ = ctl.SetDeadline(time.Now().Add(5 * time.Second))
		if l := roundTrip(t, ctl, resp.AppendCommandString(nil, "CLIENT", "LIST", "ID", id)); bytes.Contains(l, []byte(" flags=b")) {
			return
		}
	}
	t.Fatalf("redis-server did not block client %s on %q within 5s", id, args)
}
