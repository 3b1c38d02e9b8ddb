package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tresp "github.com/tidwall/resp"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/argv"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/proto/sbe"
	"github.com/goblin-kv/goblin/store"
)

// The oracle: scripts of commands sent to a real redis-server 7.0 (from
// Debian, installed by scripts/setup.sh) and to the engine, whose replies
// must be the same bytes. Where a reply legitimately differs in order (KEYS,
// the subcommands of COMMAND INFO) a case names a normalizer that both
// replies go through before they are compared; goblin's deliberate
// differences are in docs/commands.md and are not in these scripts.

// peer is the redis-server the oracle tests share, started on first use
// and stopped by TestMain.
var peer struct {
	once sync.Once
	dir  string
	sock string
	cmd  *exec.Cmd
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if peer.cmd != nil {
		_ = peer.cmd.Process.Kill()
		_ = peer.cmd.Wait()
	}
	if peer.dir != "" {
		_ = os.RemoveAll(peer.dir)
	}
	os.Exit(code)
}

// redisSocket returns the shared redis-server's socket. Without
// redis-server 7 the test is skipped, or fails when CI=true.
func redisSocket(t testing.TB) string {
	t.Helper()
	peer.once.Do(func() { peer.err = startPeer() })
	testkit.Require(t, "the redis-server oracle", peer.err)
	return peer.sock
}

func startPeer() error {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return fmt.Errorf("redis-server is not installed")
	}
	// The error texts compared are Redis 7.0's; other versions word some
	// differently.
	if v, err := exec.Command(bin, "--version").Output(); err != nil || !bytes.Contains(v, []byte(" v=7.0.")) {
		return fmt.Errorf("want redis-server 7.0.x, have %q (%v)", v, err)
	}
	if peer.dir, err = os.MkdirTemp("", "goblin-oracle-"); err != nil {
		return err
	}
	peer.sock = filepath.Join(peer.dir, "redis.sock")
	peer.cmd = exec.Command(bin, "--port", "0", "--unixsocket", peer.sock, "--save", "", "--appendonly", "no",
		"--dir", peer.dir, "--databases", "16", "--enable-debug-command", "local") // DEBUG OBJECT, over the local socket
	if err := peer.cmd.Start(); err != nil {
		return err
	}
	for deadline := time.Now().Add(20 * time.Second); ; {
		c, err := net.Dial("unix", peer.sock)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server did not listen: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// redisDefaultParams stand for the server's CONFIG parameters with Redis's
// default values, so the engine's CONFIG GET and SET can be compared with
// Redis's on their own.
var redisDefaultParams = func() []Param {
	vals := map[string]string{"timeout": "0", "maxclients": "10000", "maxmemory-clients": "0", "port": "0"} // the oracle listens on a socket only
	var ps []Param
	for _, name := range []string{"timeout", "maxclients", "maxmemory-clients", "port"} {
		name := name
		ps = append(ps, Param{Name: name, Get: func() string { return vals[name] }})
	}
	ps[0].Set = func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return errors.New("argument must be between 0 and 2147483647 inclusive")
		}
		vals["timeout"] = v
		return nil
	}
	return ps
}()

// oracleCase is one command of a script and how its replies are compared.
type oracleCase struct {
	args []string
	norm func(*node) // applied to both replies before comparing; nil: raw bytes
	// notSBE marks a reply that differs by protocol (CLIENT LIST's resp=
	// field, HELLO's proto): the SBE comparison skips it.
	notSBE bool
}

func cases(cmds ...[]string) []oracleCase {
	out := make([]oracleCase, len(cmds))
	for i, c := range cmds {
		out[i] = oracleCase{args: c}
	}
	return out
}

// runRedis sends the script on one new connection (after FLUSHALL, and
// HELLO 3 when resp3) and returns each reply's bytes.
func runRedis(t *testing.T, script []oracleCase, resp3 bool) [][]byte {
	t.Helper()
	conn, err := net.Dial("unix", redisSocket(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	resetRedisACL(t, conn)
	in := scriptBytes(script, resp3)
	if _, err := conn.Write(in); err != nil {
		t.Fatal(err)
	}
	want := len(script) + prelude(resp3)
	var out []byte
	buf := make([]byte, 64<<10)
	for {
		if replies, err := splitReplies(out); err != nil {
			t.Fatalf("redis reply: %v", err)
		} else if len(replies) >= want {
			return replies[prelude(resp3):]
		}
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("reading redis replies: %v", err)
		}
		out = append(out, buf[:n]...)
	}
}

// resetRedisACL puts the shared redis-server's users back as a new
// server has them (the default user alone, on, no password, every key,
// channel and command; an empty ACL LOG), so that a script compared with a
// fresh engine sees the same users whatever scripts ran before it: a
// script's users would otherwise outlive it (TestSortACLAgainstRedis's
// srt users in TestACLAgainstRedis's ACL USERS under -count=2).
func resetRedisACL(t *testing.T, c net.Conn) {
	t.Helper()
	users, _, err := parseNode(roundTrip(t, c, resp.AppendCommandString(nil, "ACL", "USERS")))
	if err != nil {
		t.Fatalf("ACL USERS: %v", err)
	}
	del := []string{"ACL", "DELUSER"}
	for _, u := range users.elems {
		if string(u.str) != "default" {
			del = append(del, string(u.str))
		}
	}
	for _, cmd := range [][]string{
		del,
		// Not "reset", which would add sanitize-payload to the flags.
		{"ACL", "SETUSER", "default", "on", "nopass", "clearselectors", "resetkeys", "~*", "resetchannels", "&*", "-@all", "+@all"},
		{"CONFIG", "SET", "requirepass", ""},
		{"ACL", "LOG", "RESET"},
	} {
		if len(cmd) == 2 {
			continue // no user to delete
		}
		if r := roundTrip(t, c, resp.AppendCommandString(nil, cmd...)); len(r) == 0 || r[0] == '-' {
			t.Fatalf("resetting the oracle's users: %q: %q", cmd, r)
		}
	}
}

func prelude(resp3 bool) int {
	if resp3 {
		return 2
	}
	return 1
}

func scriptBytes(script []oracleCase, resp3 bool) []byte {
	in := resp.AppendCommandString(nil, "FLUSHALL")
	if resp3 {
		in = resp.AppendCommandString(in, "HELLO", "3")
	}
	for _, c := range script {
		in = resp.AppendCommandString(in, c.args...)
	}
	return in
}

// runGoblin serves the same bytes with a fresh engine on the system clock
// (as Redis runs on it).
func runGoblin(t *testing.T, script []oracleCase, resp3 bool, o Options) [][]byte {
	t.Helper()
	st, err := store.New(store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(st, o)
	s := NewSession(proto.RESP, nil)
	in := scriptBytes(script, resp3)
	n, out, _ := e.ServeStream(s, in, nil)
	if n != len(in) {
		t.Fatalf("goblin consumed %d of %d bytes", n, len(in))
	}
	replies, err := splitReplies(out)
	if err != nil || len(replies) != len(script)+prelude(resp3) {
		for i, r := range replies {
			t.Logf("%d %q", i, r)
		}
		t.Fatalf("goblin answered %d replies (%v)", len(replies), err)
	}
	return replies[prelude(resp3):]
}

// compareWithRedis runs script on both servers, in RESP2 and, when
// withResp3, in RESP3 too, and reports every reply that differs.
//
// Every script also runs through SBE (each request decoded from its Redis
// form, then encoded and served as an SBE message): its replies, written
// as RESP, must be goblin's RESP replies, so each command means the same
// in both protocols.
func compareWithRedis(t *testing.T, script []oracleCase, withResp3 bool) {
	t.Helper()
	viaSBE := runGoblinSBE(t, script, Options{Params: redisDefaultParams})
	for _, resp3 := range []bool{false, true} {
		if resp3 && !withResp3 {
			continue
		}
		theirs := runRedis(t, script, resp3)
		ours := runGoblin(t, script, resp3, Options{Params: redisDefaultParams})
		for i, c := range script {
			a, b := ours[i], theirs[i]
			if c.norm != nil {
				a, b = normalized(t, a, c.norm), normalized(t, b, c.norm)
			}
			if !bytes.Equal(a, b) {
				t.Errorf("RESP%d reply %d to %q:\ngoblin %q\n redis %q", 2+b2i(resp3), i, c.args, a, b)
			}
			if i >= len(viaSBE) || viaSBE[i][0] == nil || c.notSBE || resp3 && pairShaped(c.args) {
				continue
			}
			s := viaSBE[i][b2i(resp3)]
			a = ours[i]
			if c.norm != nil {
				a, s = normalized(t, a, c.norm), normalized(t, s, c.norm)
			}
			if !bytes.Equal(a, s) {
				t.Errorf("SBE reply %d to %q, as RESP%d:\n  SBE %q\n RESP %q", i, c.args, 2+b2i(resp3), s, a)
			}
		}
	}
}

// runGoblinSBE serves script as SBE requests, each decoded from its Redis
// form by the RESP decoder, and returns each reply written as RESP2 (the
// reply downgraded, as for a RESP2 client) and as RESP3. A command the
// decoder refuses has no SBE form: its entry is nil, and the script stops
// there if the refusal was inside MULTI (RESP's transaction then aborts,
// which SBE cannot reproduce).
func runGoblinSBE(t *testing.T, script []oracleCase, o Options) [][2][]byte {
	t.Helper()
	st, err := store.New(store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(st, o)
	s := e.Open(proto.SBE, nil)
	defer e.Close(s)
	var (
		dec   argv.Decoder
		codec sbe.Codec
		req   command.Request
		rep   command.Reply
		w     Engine // writes replies as RESP
		out   [][2][]byte
		multi bool
		resp2 bool // after RESET the RESP session speaks RESP2 again
	)
	for i, c := range script {
		req.Reset()
		if !dec.Decode(&req, strs(c.args...)) {
			out = append(out, [2][]byte{})
			if multi {
				break
			}
			continue
		}
		switch req.Op {
		case command.OpMulti:
			multi = true
		case command.OpExec, command.OpDiscard:
			multi = false
		case command.OpReset:
			multi, resp2 = false, true
		}
		if !sbe.Encodable(req.Op) { // RESP only (docs/commands.md)
			out = append(out, [2][]byte{})
			continue
		}
		req.CorrelationID = uint64(i + 1)
		in := sbe.AppendFramed(nil, &codec, &req)
		n, res, _ := e.ServeStream(s, in, nil)
		if n != len(in) {
			t.Fatalf("SBE: %q consumed %d of %d bytes", c.args, n, len(in))
		}
		if len(res) == 0 { // CLIENT REPLY OFF or SKIP
			out = append(out, [2][]byte{})
			continue
		}
		msg, _, err := sbe.ReadFrame(res, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := codec.DecodeReply(msg, &rep); err != nil {
			t.Fatalf("SBE reply to %q: %v", c.args, err)
		}
		if rep.CorrelationID != req.CorrelationID {
			t.Fatalf("SBE reply to %q: correlation id %d, want %d", c.args, rep.CorrelationID, req.CorrelationID)
		}
		w.res = rep
		as3 := w.encodeRESP(nil, true)
		nilArray := w.res.Kind == command.NilArray
		w.res.Downgrade()
		if nilArray { // RESP2 writes the null array itself (*-1); only SBE v1 lacks it
			w.res.Kind = command.NilArray
		}
		as2 := w.encodeRESP(nil, false)
		if resp2 {
			as3 = as2
		}
		out = append(out, [2][]byte{as2, as3})
	}
	return out
}

func normalized(t *testing.T, b []byte, norm func(*node)) []byte {
	t.Helper()
	n, k, err := parseNode(b)
	if err != nil || k != len(b) {
		t.Fatalf("reply %q: %v", b, err)
	}
	norm(&n)
	return n.append(nil)
}

// sortElems orders an aggregate's elements by their bytes.
func sortElems(n *node) {
	sort.Slice(n.elems, func(i, j int) bool {
		return bytes.Compare(n.elems[i].append(nil), n.elems[j].append(nil)) < 0
	})
}

// node is one parsed RESP2 or RESP3 value, kept exactly enough to be
// written back byte for byte.
type node struct {
	typ   byte // + - : $ * % ~ _ , # = ( and the RESP2 nulls as $ or * with null set
	str   []byte
	null  bool
	elems []node // aggregates; a map's keys and values alternate
}

func (n *node) append(b []byte) []byte {
	b = append(b, n.typ)
	switch {
	case n.null:
		return append(b, "-1\r\n"...)
	case n.typ == '$' || n.typ == '=' || n.typ == '!':
		b = strconv.AppendInt(b, int64(len(n.str)), 10)
		b = append(b, '\r', '\n')
		b = append(b, n.str...)
	case n.typ == '*' || n.typ == '~' || n.typ == '>':
		b = strconv.AppendInt(b, int64(len(n.elems)), 10)
		b = append(b, '\r', '\n')
		for i := range n.elems {
			b = n.elems[i].append(b)
		}
		return b
	case n.typ == '%':
		b = strconv.AppendInt(b, int64(len(n.elems)/2), 10)
		b = append(b, '\r', '\n')
		for i := range n.elems {
			b = n.elems[i].append(b)
		}
		return b
	default:
		b = append(b, n.str...)
	}
	return append(b, '\r', '\n')
}

// parseNode reads one complete value from the front of b; k is 0 when b
// holds only part of it.
func parseNode(b []byte) (n node, k int, err error) {
	if len(b) == 0 {
		return n, 0, nil
	}
	end := bytes.Index(b, []byte("\r\n"))
	if end < 0 {
		return n, 0, nil
	}
	n.typ = b[0]
	line := b[1:end]
	k = end + 2
	switch n.typ {
	case '+', '-', ':', '_', ',', '#', '(':
		n.str = line
		return n, k, nil
	case '$', '=', '!', '*', '~', '%', '>':
		v, perr := strconv.Atoi(string(line))
		if perr != nil {
			return n, 0, fmt.Errorf("bad length %q", line)
		}
		if v < 0 {
			n.null = true
			return n, k, nil
		}
		if n.typ == '$' || n.typ == '=' || n.typ == '!' {
			if len(b) < k+v+2 {
				return n, 0, nil
			}
			n.str = b[k : k+v]
			return n, k + v + 2, nil
		}
		if n.typ == '%' {
			v *= 2
		}
		for i := 0; i < v; i++ {
			e, m, err := parseNode(b[k:])
			if err != nil || m == 0 {
				return n, 0, err
			}
			n.elems = append(n.elems, e)
			k += m
		}
		return n, k, nil
	}
	return n, 0, fmt.Errorf("unknown type %q", n.typ)
}

// splitReplies cuts b into complete replies.
func splitReplies(b []byte) ([][]byte, error) {
	var out [][]byte
	for len(b) > 0 {
		_, k, err := parseNode(b)
		if err != nil {
			return out, err
		}
		if k == 0 {
			break
		}
		out = append(out, b[:k])
		b = b[k:]
	}
	return out, nil
}

// oracleScript is the original script of the commands goblin first
// answered (before the full string, keyspace and connection command set);
// each later command group has its own script in
// oracle_cmds_test.go.
var oracleScript = [][]string{
	{"PING"}, {"PING", "hi"}, {"ECHO", "a\r\nb"}, {"GET", "k"}, {"SET", "k", "v"}, {"GET", "k"},
	{"SET", "k", "w", "NX"}, {"SET", "k", "w", "XX", "GET"}, {"SET", "k", "v", "NX", "XX"},
	{"SET", "k", "v", "EX", "0"}, {"SET", "k", "v", "EX", "x"}, {"SET", "k", "v", "PX", "-1"},
	{"SET", "k", "v", "KEEPTTL", "EX", "1"}, {"SET", "k", "v", "EX", "100"}, {"TTL", "k"},
	{"PERSIST", "k"}, {"PERSIST", "k"}, {"TTL", "k"}, {"TTL", "nope"}, {"EXPIRE", "k", "100"},
	{"TTL", "k"}, {"EXPIRE", "k", "x"}, {"EXPIRE", "k", "99999999999999999"},
	{"EXPIRE", "k", "50", "NX"}, {"EXPIRE", "k", "50", "XX"}, {"TTL", "k"}, {"EXPIRE", "k", "40", "GT"},
	{"EXPIRE", "k", "60", "GT"}, {"TTL", "k"}, {"EXPIRE", "k", "70", "LT"}, {"EXPIRE", "k", "30", "lt"},
	{"TTL", "k"}, {"EXPIRE", "k", "30", "NX", "XX"}, {"EXPIRE", "k", "30", "GT", "LT"},
	{"EXPIRE", "k", "30", "FOO"}, {"EXPIRE", "k", "x", "FOO"}, {"EXPIRE", "nope", "30", "XX"},
	{"PERSIST", "k"}, {"EXPIRE", "k", "30", "XX"}, {"EXPIRE", "k", "30", "GT"}, {"EXPIRE", "k", "30", "LT"},
	{"TTL", "k"}, {"PERSIST", "k"}, {"EXPIRE", "k", "30", "NX"}, {"TTL", "k"}, {"INCR", "n"},
	{"INCRBY", "n", "41"}, {"DECR", "n"}, {"DECRBY", "n", "2"}, {"INCR", "k"},
	{"SET", "max", "9223372036854775807"}, {"INCR", "max"}, {"INCRBY", "n", "1.5"},
	{"MSET", "a", "1", "b", "2"}, {"MSET", "a"}, {"MGET", "a", "nope", "b"}, {"DEL", "a", "b", "nope"},
	{"EXISTS", "k", "k", "nope"}, {"TYPE", "k"}, {"TYPE", "nope"}, {"DBSIZE"}, {"SELECT", "0"},
	{"SELECT", "x"}, {"CONFIG", "GET", "save"}, {"CONFIG", "GET", "appendonly"},
	{"CONFIG", "GET", "nosuch"}, {"CLIENT", "GETNAME"}, {"CLIENT", "SETNAME", "a b"},
	{"CLIENT", "SETNAME", "me"}, {"CLIENT", "GETNAME"}, {"CLIENT", "NOPE"}, {"AUTH", "x"},
	{"AUTH", "u", "x"}, {"HELLO", "4"}, {"HELLO", "x"}, {"GET"}, {"GET", "a", "b"}, {"PING", "a", "b"},
	{"foo"}, {"foo", "a", "b"}, {"FOO", "x\r\ny"}, {"FLUSHALL", "x"}, {"FLUSHALL"}, {"DBSIZE"},
}

func oraclePipeline() []byte {
	var in []byte
	for _, c := range oracleScript {
		in = resp.AppendCommandString(in, c...)
	}
	return in
}

// TestRESPOracle reads what the engine writes with tidwall/resp, an
// independent RESP implementation: one well-formed value per command, in
// order, nothing left over.
func TestRESPOracle(t *testing.T) {
	e, _ := newEngine(t, Options{})
	s := NewSession(proto.RESP, nil)
	in := oraclePipeline()
	n, out, closeConn := e.ServeStream(s, in, nil)
	if n != len(in) || closeConn {
		t.Fatalf("consumed %d of %d, close %v", n, len(in), closeConn)
	}
	rd := tresp.NewReader(bytes.NewReader(out))
	for i, c := range oracleScript {
		v, _, err := rd.ReadValue()
		if err != nil {
			t.Fatalf("reply %d to %q: tidwall/resp says %v", i, c, err)
		}
		ours, k := respText(t, out)
		out = out[k:]
		if theirs := tidwallText(v); theirs != ours {
			t.Errorf("reply %d to %q: tidwall/resp reads %s, goblin's reader %s", i, c, theirs, ours)
		}
	}
	if _, _, err := rd.ReadValue(); err != io.EOF {
		t.Fatalf("bytes after the last reply: %v", err)
	}
}

// tidwallText renders a tidwall/resp value in respText's form.
func tidwallText(v tresp.Value) string {
	switch {
	case v.IsNull():
		return "nil"
	case v.Type() == tresp.Array:
		var sb strings.Builder
		sb.WriteString("[")
		for i, e := range v.Array() {
			if i > 0 {
				sb.WriteString(" ")
			}
			sb.WriteString(tidwallText(e))
		}
		sb.WriteString("]")
		return sb.String()
	case v.Type() == tresp.Integer:
		return fmt.Sprintf(":%d", v.Integer())
	case v.Type() == tresp.Error:
		return "-" + v.Error().Error()
	}
	return fmt.Sprintf("%c%s", byte(v.Type()), v.String())
}

// TestAgainstRedis sends the original script to redis-server 7.0 and to
// the engine and requires byte-identical replies.
func TestAgainstRedis(t *testing.T) {
	compareWithRedis(t, cases(oracleScript...), false)
}

// oracleStep is one command of a multi-client script: which client sends
// it, and how long to wait before it (for expiry).
type oracleStep struct {
	conn  int
	args  []string
	sleep time.Duration
	norm  func(*node)
}

// compareSteps runs steps one at a time, each on its client's connection
// (two clients), against redis-server and against one engine with two
// sessions, and compares every reply; in RESP3 too when withResp3.
func compareSteps(t *testing.T, steps []oracleStep, withResp3 bool) {
	t.Helper()
	for _, resp3 := range []bool{false, true} {
		if resp3 && !withResp3 {
			continue
		}
		var conns [2]net.Conn
		for i := range conns {
			c, err := net.Dial("unix", redisSocket(t))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(30 * time.Second))
			conns[i] = c
		}
		st, err := store.New(store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		e := NewEngine(st, Options{})
		sessions := [2]*Session{e.Open(proto.RESP, nil), e.Open(proto.RESP, nil)}
		prelude := [][]string{{"FLUSHALL"}}
		if resp3 {
			prelude = append(prelude, []string{"HELLO", "3"})
		}
		all := make([]oracleStep, 0, len(steps)+4)
		for _, p := range prelude {
			all = append(all, oracleStep{conn: 0, args: p})
			if p[0] == "HELLO" {
				all = append(all, oracleStep{conn: 1, args: p})
			}
		}
		all = append(all, steps...)
		for i, st := range all {
			time.Sleep(st.sleep)
			in := resp.AppendCommandString(nil, st.args...)
			theirs := roundTrip(t, conns[st.conn], in)
			_, ours, _ := e.ServeStream(sessions[st.conn], in, nil)
			if i < len(all)-len(steps) {
				continue
			}
			if st.norm != nil {
				ours, theirs = normalized(t, ours, st.norm), normalized(t, theirs, st.norm)
			}
			if !bytes.Equal(ours, theirs) {
				t.Errorf("RESP%d step %d, client %d, %q:\ngoblin %q\n redis %q", 2+b2i(resp3), i, st.conn, st.args, ours, theirs)
			}
		}
	}
}

// roundTrip writes one command and reads its one reply.
func roundTrip(t *testing.T, c net.Conn, in []byte) []byte {
	t.Helper()
	if _, err := c.Write(in); err != nil {
		t.Fatal(err)
	}
	var out []byte
	buf := make([]byte, 64<<10)
	for {
		if _, k, err := parseNode(out); err != nil {
			t.Fatalf("redis reply %q: %v", out, err)
		} else if k > 0 {
			return out[:k]
		}
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("reading a redis reply: %v", err)
		}
		out = append(out, buf[:n]...)
	}
}

// pairShaped reports whether a command's reply nests its pairs in RESP3
// (member, score or field, value arrays: WITHSCORES, WITHVALUES, ZPOPMIN
// and ZPOPMAX with a count) where RESP2 lists them flat. An SBE session,
// like a RESP2 one, gets the flat shape (with RESP3's kinds: scores are
// doubles), so its reply is compared as RESP2 only.
func pairShaped(args []string) bool {
	if len(args) > 2 && (strings.EqualFold(args[0], "zpopmin") || strings.EqualFold(args[0], "zpopmax")) {
		return true
	}
	for _, a := range args[1:] {
		if strings.EqualFold(a, "withscores") || strings.EqualFold(a, "withvalues") {
			return true
		}
	}
	return false
}
