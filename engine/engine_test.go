package engine

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/proto/sbe"
	"github.com/goblin-kv/goblin/store"
)

const t0 = 1_700_000_000_000 // the fake clock's start, unix ms

func newEngine(t testing.TB, o Options) (*Engine, *store.FakeClock) {
	t.Helper()
	clock := store.NewFakeClock(t0)
	st, err := store.New(store.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	o.Clock = clock
	return NewEngine(st, o), clock
}

// respText renders the one RESP2 or RESP3 reply at the front of b in a
// protocol-neutral form and returns its length.
func respText(t testing.TB, b []byte) (string, int) {
	t.Helper()
	n, k, err := parseNode(b)
	if err != nil || k == 0 {
		t.Fatalf("incomplete or bad reply %q: %v", b, err)
	}
	var sb strings.Builder
	var walk func(n *node)
	walk = func(n *node) {
		switch {
		case n.null || n.typ == '_':
			sb.WriteString("nil")
		case n.typ == '*' || n.typ == '~' || n.typ == '%':
			if n.typ != '*' {
				sb.WriteByte(n.typ)
			}
			sb.WriteString("[")
			for i := range n.elems {
				if i > 0 {
					sb.WriteString(" ")
				}
				walk(&n.elems[i])
			}
			sb.WriteString("]")
		case n.typ == '=':
			fmt.Fprintf(&sb, "$%s", n.str[4:]) // a verbatim string reads as the bulk string it is in RESP2
		default:
			fmt.Fprintf(&sb, "%c%s", n.typ, n.str)
		}
	}
	walk(&n)
	return sb.String(), k
}

// sbeText renders an SBE reply in the same form as respText.
func sbeText(r *command.Reply) string {
	switch r.Kind {
	case command.Simple:
		return "+" + string(r.Value)
	case command.Error:
		return "-" + string(r.Value)
	case command.Bulk:
		return "$" + string(r.Value)
	case command.Nil:
		return "nil"
	case command.Integer:
		return fmt.Sprintf(":%d", r.Integer)
	case command.Array:
		parts := make([]string, len(r.Items))
		for i, it := range r.Items {
			switch it.Kind {
			case command.Bulk:
				parts[i] = "$" + string(it.Value)
			case command.Integer:
				parts[i] = fmt.Sprintf(":%d", it.Integer)
			case command.Array:
				parts[i] = "[]"
			default:
				parts[i] = "nil"
			}
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprintf("kind(%d)", r.Kind)
}

// do sends one RESP command through ServeStream and returns the reply.
func do(t testing.TB, e *Engine, s *Session, args ...string) string {
	t.Helper()
	in := resp.AppendCommandString(nil, args...)
	n, out, _ := e.ServeStream(s, in, nil)
	if n != len(in) {
		t.Fatalf("%q: consumed %d of %d", args, n, len(in))
	}
	got, k := respText(t, out)
	if k != len(out) {
		t.Fatalf("%q: %d bytes after the reply", args, len(out)-k)
	}
	return got
}

func TestCommandsRESP(t *testing.T) {
	e, clock := newEngine(t, Options{})
	s := NewSession(proto.RESP, nil)
	steps := []struct {
		args []string
		want string
	}{
		{[]string{"PING"}, "+PONG"},
		{[]string{"ping", "hi"}, "$hi"},
		{[]string{"ping", "a", "b"}, "-ERR wrong number of arguments for 'ping' command"},
		{[]string{"ECHO", "x y"}, "$x y"},
		{[]string{"GET", "k"}, "nil"},
		{[]string{"SET", "k", "v"}, "+OK"},
		{[]string{"GET", "k"}, "$v"},
		{[]string{"SET", "k", "w", "NX"}, "nil"},
		{[]string{"SET", "k", "w", "XX", "GET"}, "$v"},
		{[]string{"SET", "n", "w", "XX"}, "nil"},
		{[]string{"SET", "k", "v", "NX", "XX"}, "-ERR syntax error"},
		{[]string{"SET", "k", "v", "KEEPTTL", "EX", "10"}, "-ERR syntax error"},
		{[]string{"SET", "k", "v", "EX", "0"}, "-ERR invalid expire time in 'set' command"},
		{[]string{"SET", "k", "v", "EX", "abc"}, "-ERR value is not an integer or out of range"},
		{[]string{"SET", "k", "v", "EX"}, "-ERR syntax error"},
		{[]string{"SET", "k", "v", "PX", "1500"}, "+OK"},
		{[]string{"PTTL", "k"}, ":1500"},
		{[]string{"TTL", "k"}, ":2"},
		{[]string{"SET", "k", "v2", "KEEPTTL"}, "+OK"},
		{[]string{"PTTL", "k"}, ":1500"},
		{[]string{"PERSIST", "k"}, ":1"},
		{[]string{"TTL", "k"}, ":-1"},
		{[]string{"TTL", "missing"}, ":-2"},
		{[]string{"EXPIRE", "k", "10"}, ":1"},
		{[]string{"EXPIRE", "missing", "10"}, ":0"},
		{[]string{"EXPIRE", "k", "x"}, "-ERR value is not an integer or out of range"},
		{[]string{"EXPIRE", "k", "99999999999999999"}, "-ERR invalid expire time in 'expire' command"},
		{[]string{"PEXPIRE", "k", "250"}, ":1"},
		{[]string{"SET", "at", "v", "PXAT", fmt.Sprint(t0 + 100)}, "+OK"},
		{[]string{"SET", "at2", "v", "EXAT", fmt.Sprint(t0/1000 + 100)}, "+OK"},
		{[]string{"PTTL", "at"}, ":100"},
		{[]string{"DEL", "at", "at2", "nope"}, ":2"},
		{[]string{"EXISTS", "k", "k", "nope"}, ":2"},
		{[]string{"INCR", "c"}, ":1"},
		{[]string{"INCRBY", "c", "41"}, ":42"},
		{[]string{"DECR", "c"}, ":41"},
		{[]string{"DECRBY", "c", "-9"}, ":50"},
		{[]string{"DECRBY", "c", "-9223372036854775808"}, "-ERR decrement would overflow"},
		{[]string{"INCR", "k"}, "-ERR value is not an integer or out of range"},
		{[]string{"SET", "big", "9223372036854775807"}, "+OK"},
		{[]string{"INCR", "big"}, "-ERR increment or decrement would overflow"},
		{[]string{"INCRBY", "c", "1x"}, "-ERR value is not an integer or out of range"},
		{[]string{"MSET", "a", "1", "b", "2"}, "+OK"},
		{[]string{"MSET", "a", "1", "b"}, "-ERR wrong number of arguments for 'mset' command"},
		{[]string{"MGET", "a", "nope", "b"}, "[$1 nil $2]"},
		{[]string{"TYPE", "a"}, "+string"},
		{[]string{"TYPE", "nope"}, "+none"},
		{[]string{"SELECT", "0"}, "+OK"},
		{[]string{"SELECT", "16"}, "-ERR DB index is out of range"},
		{[]string{"SELECT", "1"}, "+OK"},
		{[]string{"DBSIZE"}, ":0"},
		{[]string{"SELECT", "0"}, "+OK"},
		{[]string{"SELECT", "x"}, "-ERR value is not an integer or out of range"},
		{[]string{"CLIENT", "GETNAME"}, "nil"},
		{[]string{"CLIENT", "SETNAME", "a b"}, "-ERR Client names cannot contain spaces, newlines or special characters."},
		{[]string{"CLIENT", "SETNAME", "bench"}, "+OK"},
		{[]string{"CLIENT", "GETNAME"}, "$bench"},
		{[]string{"CLIENT", "SETINFO", "LIB-NAME", "go-redis"}, "+OK"},
		{[]string{"CLIENT", "SETINFO", "bad", "x"}, "-ERR Unrecognized option 'bad'"},
		{[]string{"CLIENT", "KILLALL"}, "-ERR unknown subcommand 'KILLALL'. Try CLIENT HELP."},
		{[]string{"CONFIG", "GET", "save"}, "[$save $]"},
		{[]string{"CONFIG", "GET", "appendonly"}, "[$appendonly $no]"},
		{[]string{"CONFIG", "GET", "nosuch"}, "[]"},
		{[]string{"CONFIG", "SET", "x", "y"}, "-ERR Unknown option or number of arguments for CONFIG SET - 'x'"},
		{[]string{"CONFIG", "NOPE"}, "-ERR unknown subcommand 'NOPE'. Try CONFIG HELP."},
		{[]string{"HELLO", "4"}, "-NOPROTO unsupported protocol version"},
		{[]string{"HELLO", "x"}, "-ERR Protocol version is not an integer or out of range"},
		{[]string{"HELLO", "2"}, "[$server $goblin $version $7.0.0 $proto :2 $id :0 $mode $standalone $role $master $modules []]"},
		{[]string{"AUTH", "x"}, "-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"},
		{[]string{"AUTH", "u", "x"}, "-WRONGPASS invalid username-password pair or user is disabled."},
		{[]string{"foo", "a", "b"}, "-ERR unknown command 'foo', with args beginning with: 'a' 'b' "},
		{[]string{"foo"}, "-ERR unknown command 'foo', with args beginning with: "},
		{[]string{"GET"}, "-ERR wrong number of arguments for 'get' command"},
		{[]string{"DBSIZE"}, ":5"},
		{[]string{"FLUSHALL", "x"}, "-ERR syntax error"},
		{[]string{"FLUSHDB", "ASYNC"}, "+OK"},
		{[]string{"DBSIZE"}, ":0"},
	}
	for i, st := range steps {
		if got := do(t, e, s, st.args...); got != st.want {
			t.Errorf("step %d %q:\n got %s\nwant %s", i, st.args, got, st.want)
		}
		if st.args[0] == "SET" && len(st.args) > 4 && st.args[4] == "1500" {
			clock.Advance(0)
		}
	}
	clock.Advance(300 * time.Millisecond)
	if got := do(t, e, s, "GET", "k"); got != "nil" {
		t.Fatalf("after PEXPIRE 250 and 300ms: GET k = %s", got)
	}
	if s.Stats.Commands[command.OpGet] == 0 || s.Stats.Errors == 0 {
		t.Fatalf("stats not counted: %+v", s.Stats)
	}
}

func TestAuth(t *testing.T) {
	e, _ := newEngine(t, Options{RequirePass: "secret"})
	s := NewSession(proto.RESP, nil)
	for _, st := range []struct {
		args []string
		want string
	}{
		{[]string{"GET", "k"}, "-NOAUTH Authentication required."},
		{[]string{"PING"}, "-NOAUTH Authentication required."},
		{[]string{"HELLO", "2"}, "-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"},
		{[]string{"AUTH", "wrong"}, "-WRONGPASS invalid username-password pair or user is disabled."},
		{[]string{"AUTH", "other", "secret"}, "-WRONGPASS invalid username-password pair or user is disabled."},
		{[]string{"AUTH", "secret"}, "+OK"},
		{[]string{"PING"}, "+PONG"},
	} {
		if got := do(t, e, s, st.args...); got != st.want {
			t.Errorf("%q: got %s, want %s", st.args, got, st.want)
		}
	}
	s2 := NewSession(proto.RESP, nil)
	if got := do(t, e, s2, "HELLO", "2", "AUTH", "default", "secret", "SETNAME", "c2"); !strings.HasPrefix(got, "[$server") {
		t.Fatalf("HELLO AUTH: %s", got)
	}
	if got := do(t, e, s2, "CLIENT", "GETNAME"); got != "$c2" {
		t.Fatalf("HELLO SETNAME: %s", got)
	}
}

func TestInfo(t *testing.T) {
	e, _ := newEngine(t, Options{Info: func(dst []byte, section string) []byte {
		switch section {
		case "server":
			return append(dst, "tcp_port:6380\r\n"...)
		case "clients":
			return append(dst, "maxclients:77\r\n"...)
		}
		return dst
	}})
	s := e.Open(proto.RESP, nil)
	e.Open(proto.RESP, nil)
	do(t, e, s, "SET", "a", "1")
	do(t, e, s, "SET", "b", "1", "EX", "100")
	do(t, e, s, "GET", "a")
	do(t, e, s, "GET", "nope")
	do(t, e, s, "INCR", "a", "b")
	do(t, e, s, "SELECT", "2")
	do(t, e, s, "SET", "c", "1")
	got := do(t, e, s, "INFO")
	for _, want := range []string{"# Server\r\nredis_version:7.0.0\r\n", "tcp_port:6380\r\n", "goblin_version:",
		"# Clients\r\nconnected_clients:2\r\n", "maxclients:77\r\n", "# Memory\r\nused_memory:", "maxmemory_policy:noeviction",
		"mem_allocator:", "# Persistence\r\nloading:0", "# Stats\r\ntotal_connections_received:2\r\ntotal_commands_processed:7",
		"keyspace_hits:1\r\nkeyspace_misses:1", "total_error_replies:1", "# Replication\r\nrole:master",
		"# CPU\r\nused_cpu_sys:", "used_cpu_user_main_thread:", "# Errorstats\r\nerrorstat_ERR:count=1",
		"# Keyspace\r\ndb0:keys=2,expires=1,avg_ttl=100000\r\ndb2:keys=1,expires=0,avg_ttl=0\r\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("INFO lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "# Commandstats") {
		t.Error("INFO (default) has commandstats")
	}
	if got := do(t, e, s, "INFO", "keyspace"); strings.Contains(got, "# Server") || !strings.HasPrefix(got, "$# Keyspace") {
		t.Errorf("INFO keyspace:\n%s", got)
	}
	got = do(t, e, s, "INFO", "commandstats")
	for _, want := range []string{"cmdstat_set:calls=3,usec=", "cmdstat_incr:calls=0,usec=0,usec_per_call=0.00,rejected_calls=1,failed_calls=0"} {
		if !strings.Contains(got, want) {
			t.Errorf("INFO commandstats lacks %q:\n%s", want, got)
		}
	}
}

func TestServeStreamPipelineAndPartial(t *testing.T) {
	e, _ := newEngine(t, Options{})
	s := NewSession(proto.RESP, nil)
	in := resp.AppendCommandString(nil, "SET", "k", "v")
	in = append(in, "PING\r\n"...)
	in = resp.AppendCommandString(in, "GET", "k")
	whole := len(in)
	in = append(in, "*2\r\n$3\r\nGET\r\n$1\r"...) // partial
	n, out, closeConn := e.ServeStream(s, in, nil)
	if n != whole || closeConn {
		t.Fatalf("consumed %d (want %d), close %v", n, whole, closeConn)
	}
	if string(out) != "+OK\r\n+PONG\r\n$1\r\nv\r\n" {
		t.Fatalf("replies %q", out)
	}
	// A protocol error after good commands: the good ones run, the bad one
	// is answered with the error and nothing of it executes. (A new
	// connection: the first one's partial GET must be continued, not
	// replaced by another stream.)
	s = NewSession(proto.RESP, s.Stats)
	in = resp.AppendCommandString(nil, "SET", "x", "1")
	in = append(in, "*1\r\n$-5\r\n"...)
	in = resp.AppendCommandString(in, "SET", "y", "1")
	_, out, closeConn = e.ServeStream(s, in, nil)
	if !closeConn || string(out) != "+OK\r\n-ERR Protocol error: invalid bulk length\r\n" {
		t.Fatalf("got %q close %v", out, closeConn)
	}
	if do(t, e, NewSession(proto.RESP, nil), "EXISTS", "x", "y") != ":1" {
		t.Fatal("command after the protocol error ran")
	}
	if s.Stats.ProtocolErrors != 1 {
		t.Fatalf("protocol errors %d", s.Stats.ProtocolErrors)
	}
	// QUIT answers OK, closes, and what follows is not executed.
	s2 := NewSession(proto.RESP, nil)
	in = resp.AppendCommandString(nil, "QUIT")
	in = resp.AppendCommandString(in, "SET", "z", "1")
	_, out, closeConn = e.ServeStream(s2, in, nil)
	if !closeConn || string(out) != "+OK\r\n" || do(t, e, s, "EXISTS", "z") != ":0" {
		t.Fatalf("QUIT: %q %v", out, closeConn)
	}
}

func TestServeMessageRESP(t *testing.T) {
	e, _ := newEngine(t, Options{})
	s := NewSession(proto.RESP, nil)
	out, closeConn := e.ServeMessage(s, resp.AppendCommandString(nil, "SET", "k", "v"), nil)
	if string(out) != "+OK\r\n" || closeConn {
		t.Fatalf("%q %v", out, closeConn)
	}
	for _, bad := range []string{"*2\r\n$3\r\nGET\r\n", "PING\r\nPING\r\n", "\r\n"} {
		out, closeConn = e.ServeMessage(s, []byte(bad), nil)
		if !closeConn || !bytes.HasPrefix(out, []byte("-ERR Protocol error: ")) {
			t.Errorf("%q: %q %v", bad, out, closeConn)
		}
	}
}

func TestServeSBE(t *testing.T) {
	e, _ := newEngine(t, Options{})
	var c sbe.Codec
	s := NewSession(proto.SBE, nil)
	// Stream: two framed requests and half of a third.
	in := sbe.AppendFramed(nil, &c, &command.Request{CorrelationID: 1, Op: command.OpSet, Key: []byte("k"), Value: []byte("v")})
	in = sbe.AppendFramed(in, &c, &command.Request{CorrelationID: 2, Op: command.OpGet, Key: []byte("k")})
	whole := len(in)
	third := sbe.AppendFramed(nil, &c, &command.Request{CorrelationID: 3, Op: command.OpPing})
	in = append(in, third[:10]...)
	n, out, closeConn := e.ServeStream(s, in, nil)
	if n != whole || closeConn {
		t.Fatalf("consumed %d of %d, close %v", n, whole, closeConn)
	}
	var rep command.Reply
	for i, want := range []string{"+OK", "$v"} {
		msg, k, err := sbe.ReadFrame(out, 0)
		if err != nil || k == 0 {
			t.Fatalf("reply %d: %v", i, err)
		}
		if err := c.DecodeReply(msg, &rep); err != nil || sbeText(&rep) != want || rep.CorrelationID != uint64(i+1) {
			t.Fatalf("reply %d: %s corr %d %v", i, sbeText(&rep), rep.CorrelationID, err)
		}
		out = out[k:]
	}
	// A bad frame: protocol error, close, nothing executed.
	bad := sbe.AppendFramed(nil, &c, &command.Request{CorrelationID: 4, Op: command.OpSet, Key: []byte("bad"), Value: []byte("v")})
	bad[SOFHTypeOffset] = 0x5B
	_, out, closeConn = e.ServeStream(s, bad, nil)
	msg, _, _ := sbe.ReadFrame(out, 0)
	if err := c.DecodeReply(msg, &rep); err != nil || !closeConn || rep.Status != command.Protocol {
		t.Fatalf("bad frame: %v close %v status %v", err, closeConn, rep.Status)
	}
	// Message transport: a bare message; a truncated one is a protocol error.
	req := c.AppendRequest(nil, &command.Request{CorrelationID: 5, Op: command.OpExists, Key: []byte("bad")})
	out, closeConn = e.ServeMessage(s, req, nil)
	if err := c.DecodeReply(out, &rep); err != nil || closeConn || sbeText(&rep) != ":0" || rep.CorrelationID != 5 {
		t.Fatalf("message: %s %v %v", sbeText(&rep), closeConn, err)
	}
	out, closeConn = e.ServeMessage(s, req[:len(req)-1], nil)
	if err := c.DecodeReply(out, &rep); err != nil || !closeConn || rep.Status != command.Protocol {
		t.Fatalf("truncated message: %v %v", err, closeConn)
	}
	// An op the schema does not have: an error reply, the connection stays.
	out, closeConn = e.ServeMessage(s, c.AppendRequest(nil, &command.Request{CorrelationID: 6, Op: 250}), nil)
	if err := c.DecodeReply(out, &rep); err != nil || closeConn || rep.Status != command.UnknownCommand {
		t.Fatalf("unknown op: %v %v %v", err, closeConn, rep.Status)
	}
}

// SOFHTypeOffset is where the encoding type sits in a SOFH.
const SOFHTypeOffset = 4

// TestServeSBEPing checks that a Ping is answered with a 16-byte Pong on
// both framings, that a Request carrying PING still gets a Reply, and that
// a Ping the server must refuse (before AUTH) gets the full error Reply.
func TestServeSBEPing(t *testing.T) {
	var c sbe.Codec
	e, _ := newEngine(t, Options{})
	s := NewSession(proto.SBE, nil)
	ping := c.AppendRequest(nil, &command.Request{CorrelationID: 11, Op: command.OpPing, Compact: true})
	out, closeConn := e.ServeMessage(s, ping, nil)
	var rep command.Reply
	if err := c.DecodeReply(out, &rep); err != nil || closeConn || len(out) != 16 || !rep.Compact ||
		sbeText(&rep) != "+PONG" || rep.CorrelationID != 11 {
		t.Fatalf("Ping: %d-byte answer %s corr %d compact %v close %v %v", len(out), sbeText(&rep), rep.CorrelationID, rep.Compact, closeConn, err)
	}
	framed := sbe.AppendFramed(nil, &c, &command.Request{CorrelationID: 12, Op: command.OpPing, Compact: true})
	n, out, closeConn := e.ServeStream(s, framed, nil)
	msg, _, err := sbe.ReadFrame(out, 0)
	if err != nil || n != len(framed) || closeConn || len(msg) != 16 {
		t.Fatalf("framed Ping: consumed %d, %d-byte answer, close %v, %v", n, len(msg), closeConn, err)
	}
	if err := c.DecodeReply(msg, &rep); err != nil || !rep.Compact || rep.CorrelationID != 12 {
		t.Fatalf("framed Ping: %+v %v", rep, err)
	}
	full := c.AppendRequest(nil, &command.Request{CorrelationID: 13, Op: command.OpPing})
	out, _ = e.ServeMessage(s, full, nil)
	if err := c.DecodeReply(out, &rep); err != nil || rep.Compact || sbeText(&rep) != "+PONG" {
		t.Fatalf("Request PING: %s compact %v %v", sbeText(&rep), rep.Compact, err)
	}

	locked, _ := newEngine(t, Options{RequirePass: "secret"})
	out, _ = locked.ServeMessage(NewSession(proto.SBE, nil), ping, nil)
	if err := c.DecodeReply(out, &rep); err != nil || rep.Compact || rep.Status != command.NoAuth || rep.CorrelationID != 11 {
		t.Fatalf("Ping before AUTH: %s status %v compact %v %v", sbeText(&rep), rep.Status, rep.Compact, err)
	}
}

// TestServeStreamLimit: with a reply limit the engine stops after the
// request whose reply reaches it, leaves the rest unconsumed, and always
// executes one request however large its reply; without one it serves all.
func TestServeStreamLimit(t *testing.T) {
	e, _ := newEngine(t, Options{})
	s := NewSession(proto.RESP, nil)
	do(t, e, s, "SET", "k", strings.Repeat("v", 1000))
	var in []byte
	for i := 0; i < 10; i++ {
		in = resp.AppendCommandString(in, "GET", "k")
	}
	one := len(in) / 10
	for _, c := range []struct{ limit, wantRequests int }{{1, 1}, {1000, 1}, {1009, 1}, {1010, 2}, {2500, 3}, {0, 10}} {
		n, out, _ := e.ServeStreamLimit(s, in, []byte("prefix"), c.limit)
		if n != c.wantRequests*one || len(out) != len("prefix")+c.wantRequests*(len("$1000\r\n")+1002) {
			t.Errorf("limit %d: consumed %d bytes, %d reply bytes; want %d requests", c.limit, n, len(out), c.wantRequests)
		}
	}
	ss := NewSession(proto.SBE, nil)
	var c sbe.Codec
	var sin []byte
	for i := 0; i < 4; i++ {
		sin = sbe.AppendFramed(sin, &c, &command.Request{Op: command.OpGet, Key: []byte("k")})
	}
	if n, _, _ := e.ServeStreamLimit(ss, sin, nil, 1); n != len(sin)/4 {
		t.Errorf("SBE, limit 1: consumed %d of %d bytes, want one request", n, len(sin))
	}
}

// TestAuthFailureEndsTheBatch: with a password required, a pipeline of
// wrong guesses is served one guess per ServeStream call, each counted, so
// the transport can hold the client back between guesses.
func TestAuthFailureEndsTheBatch(t *testing.T) {
	e, _ := newEngine(t, Options{RequirePass: "right"})
	s := NewSession(proto.RESP, nil)
	var in []byte
	for i := 0; i < 3; i++ {
		in = resp.AppendCommandString(in, "AUTH", fmt.Sprintf("guess%d", i))
	}
	in = resp.AppendCommandString(in, "AUTH", "right")
	one := len(resp.AppendCommandString(nil, "AUTH", "guess0"))
	for i := 0; i < 3; i++ {
		n, out, _ := e.ServeStream(s, in, nil)
		if n != one || !strings.HasPrefix(string(out), "-WRONGPASS") || s.AuthFailures() != uint64(i+1) {
			t.Fatalf("guess %d: consumed %d (want %d), reply %q, failures %d", i, n, one, out, s.AuthFailures())
		}
		in = in[n:]
	}
	if n, out, _ := e.ServeStream(s, in, nil); n != len(in) || string(out) != "+OK\r\n" || !s.Authenticated() || s.AuthFailures() != 3 {
		t.Fatalf("the right password: consumed %d of %d, %q", n, len(in), out)
	}
}

// TestServeSBEVersion1 serves messages a schema version 1 client wrote
// (proto/sbe/testdata/v1): they are understood, answered in version 1's
// reply kinds (CONFIG GET's map as an array), and an op of version 2 in a
// version 1 message is refused with unsupportedVersion.
func TestServeSBEVersion1(t *testing.T) {
	e, _ := newEngine(t, Options{Params: redisDefaultParams})
	var c sbe.Codec
	s := NewSession(proto.SBE, nil)
	read := func(name string) []byte { return testkit.ReadHexFile(t, "../proto/sbe/testdata/v1/"+name) }
	var rep command.Reply
	serve := func(msg []byte) string {
		t.Helper()
		out, closeConn := e.ServeMessage(s, msg, nil)
		if err := c.DecodeReply(out, &rep); err != nil || closeConn {
			t.Fatalf("%x: %v, close %v", msg, err, closeConn)
		}
		return sbeText(&rep)
	}
	if got := serve(read("set-px.hex")); got != "+OK" {
		t.Fatalf("SET: %s", got)
	}
	if got := serve(read("mget.hex")); got != "[$v nil]" || rep.Kind != command.Array {
		t.Fatalf("MGET: %s", got)
	}
	if got := serve(read("config-get.hex")); got != "[$maxmemory $0]" || rep.Kind != command.Array {
		t.Fatalf("CONFIG GET: %s (kind %v)", got, rep.Kind)
	}
	keys := read("set-px.hex")
	keys[16] = byte(command.OpKeys) // header (8), correlation id (8), then op
	if got := serve(keys); rep.Status != command.UnsupportedVersion ||
		got != "-ERR op 64 needs SBE schema version 2 or later; the request is version 1" {
		t.Fatalf("KEYS in a version 1 message: %s (status %v)", got, rep.Status)
	}
	// The same CONFIG GET in version 2 is a map.
	v2 := c.AppendRequest(nil, &command.Request{CorrelationID: 9, Op: command.OpConfigGet, Key: []byte("maxmemory")})
	if serve(v2); rep.Kind != command.Map || rep.Integer != 1 {
		t.Fatalf("CONFIG GET in version 2: kind %v, %d pairs", rep.Kind, rep.Integer)
	}
}
