package acl

import (
	"bufio"
	"net"
	"sort"
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/command"
)

// oracleScripts are ACL SETUSER scripts run on redis-server and on the
// package alike; after each, ACL LIST, ACL GETUSER and DRYRUNs must agree.
var oracleScripts = [][]string{
	{"u1", "on", ">p1", "#5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8", "~foo*", "%R~bar", "%W~baz", "%R~foo*", "&ch*", "+get", "+@string", "-set", "+config|get"},
	{"u2", "on", "nopass", "allkeys", "allchannels", "+@all", "-@dangerous", "-get", "+client|list"},
	{"u3", "+@read", "+@write", "-@keyspace", "~a*", "(+set ~x* &c)", "(+@hash %R~h*)"},
	{"u4", "on", "+select|0", "+select|1", "-@all", "+select|2", "resetkeys", "%RW~*"},
	{"u5", "allcommands", "-@all", "+@geo", "+@fast", "-@read", "+@admin", "%R", "allkeys"},
	{"u6", "on", ">a", ">b", "<a", "+@all", "-config", "+config|get", "clearselectors", "(+get)"},
	{"u7", "reset", "+@pubsub", "&news.*", "&x", "+@sortedset", "-zadd"},
	{"u8", "on", "+get", "+publish", "+subscribe", "+psubscribe", "~k*", "&c*", "(+set %W~w*)", "(+get ~g*)"},
	{"u1", "reset", "on", "nopass", "+@all", "~*", "&*", "-@slow"},
	{"u9", "on", "skip-sanitize-payload", "+@all", "-@all", "+@list", "+@blocking", "-blpop"},
	{"u11", "on", "+@all", "%R~r*", "%W~w*", "%R~b*", "%W~b*"},
	{"u12", "on", "+select|Ab", "+get|x", "+CONFIG|GET", "~*", "-@all", "+select|Cd", "+select|cD", "+select|Ef", "+client|kill", "-client", "+client|list"},
	{"u13", "on", "&*", "resetchannels", "&a", "allchannels", "~a", "%W~a", "%R~b", "~b", "resetkeys", "~c", "+@all", "-@all", "+@read", "-@read"},
	{"u14", "nopass", ">x", "nopass", "resetpass", ">y", ">z", "<y", "#5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8", ">password"},
	{"u15", "on", "nopass", ">a", "skip-sanitize-payload", "reset", "on"},
	{"u10", "+@bitmap", "+@hyperloglog", "+@stream", "-@write", "+@scripting", "+@transaction", "+@connection"},
	// Errors: every one must be refused with Redis's text.
	{"e1", "+nosuch"},
	{"e2", "+@nosuch"},
	{"e3", "bad"},
	{"e4", "~*", "~x"},
	{"e5", "&*", "&x"},
	{"e6", "#ABC"},
	{"e7", "<nope"},
	{"e8", "!5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8"},
	{"e9", "+config|get|x"},
	{"e10", "-select|0"},
	{"e11", "%~x"},
	{"e12", "%RR~x"},
	{"e13", "(+get"},
	{"e14", "(+get ~x", "bad)"},
	{"e15", "(+nosuch)"},
	{"e16", "foo bar"},
	{"e 17"},
	{"e18", "+get|"},
	{"e19", "+config|nosuch"},
	{"e20", "-config|nosuch"},
	{"e21", "%X~a"},
}

// dryruns: user, command and arguments.
var oracleDryRuns = [][]string{
	{"u1", "get", "foo1"}, {"u1", "set", "a", "1"}, {"u1", "append", "baz", "x"}, {"u1", "get", "baz"},
	{"u2", "get", "x"}, {"u2", "flushall"}, {"u2", "client", "list"}, {"u2", "client", "kill", "id", "1"}, {"u2", "config", "set", "a", "b"},
	{"u3", "get", "a1"}, {"u3", "get", "b"}, {"u3", "set", "x1", "v"}, {"u3", "set", "a1", "v"}, {"u3", "hget", "h1", "f"}, {"u3", "hset", "h1", "f", "v"}, {"u3", "del", "a1"},
	{"u4", "select", "2"}, {"u4", "select", "0"}, {"u4", "get", "a"},
	{"u6", "config", "get", "x"}, {"u6", "config", "set", "x", "y"}, {"u6", "get", "k"}, {"u6", "set", "k", "v"},
	{"u7", "publish", "news.a", "m"}, {"u7", "publish", "other", "m"}, {"u7", "subscribe", "x", "y"}, {"u7", "psubscribe", "news.*"}, {"u7", "psubscribe", "news.a"}, {"u7", "zadd", "z", "1", "m"},
	{"u8", "get", "k1"}, {"u8", "get", "g1"}, {"u8", "get", "w1"}, {"u8", "set", "w1", "v"}, {"u8", "set", "k1", "v"}, {"u8", "mget", "k1", "g1", "zz"}, {"u8", "publish", "c1", "m"}, {"u8", "publish", "d1", "m"},
	{"u9", "lpush", "l", "a"}, {"u9", "blpop", "l", "0"}, {"u9", "get", "x"},
	{"u11", "incr", "r1"}, {"u11", "incr", "w1"}, {"u11", "incr", "b1"}, {"u11", "get", "r1"}, {"u11", "get", "w1"},
	{"u11", "set", "w1", "v"}, {"u11", "copy", "r1", "w1"}, {"u11", "copy", "w1", "r1"}, {"u11", "exists", "zz"}, {"u11", "type", "r1"},
	{"u12", "select", "cd"}, {"u12", "select", "CD"}, {"u12", "select", "ab"}, {"u12", "client", "list"}, {"u12", "client", "kill", "x"},
	{"default", "get", "x"}, {"u1", "nosuchcommand"},
}

func TestOracleRedis(t *testing.T) {
	rc := startRedis(t)
	table, infos := redisTable(t, rc)
	users := NewUsers(table)
	for _, script := range oracleScripts {
		args := append([]string{"ACL", "SETUSER"}, script...)
		want := rc.do(t, args...)
		_, err := users.SetUser(script[0], script[1:]...)
		got := "OK"
		if err != nil {
			got = "-ERR " + err.Error()
		}
		wantS := want.s
		if want.typ == '-' {
			wantS = "-" + want.s
		}
		if got != wantS {
			t.Errorf("ACL SETUSER %q:\n got  %s\n want %s", script, got, wantS)
		}
	}
	// ACL LIST, line by line.
	want := rc.do(t, "ACL", "LIST")
	got := users.List()
	if len(got) != len(want.kids) {
		t.Fatalf("ACL LIST: got %d users, want %d:\n%q\n%v", len(got), len(want.kids), got, want)
	}
	for i, w := range want.kids {
		if !sameRules(got[i], w.s) {
			t.Errorf("ACL LIST line %d:\n got  %s\n want %s", i, got[i], w.s)
		}
	}
	// ACL GETUSER, field by field.
	for _, name := range users.Names() {
		w := rc.do(t, "ACL", "GETUSER", name)
		in := users.Get(name).Info()
		fields := map[string]value{}
		for i := 0; i+1 < len(w.kids); i += 2 {
			fields[w.kids[i].s] = w.kids[i+1]
		}
		if g, w := strings.Join(in.Flags, " "), joinKids(fields["flags"]); g != w {
			t.Errorf("GETUSER %s flags: got %q want %q", name, g, w)
		}
		if g, w := strings.Join(in.Passwords, " "), joinKids(fields["passwords"]); g != w {
			t.Errorf("GETUSER %s passwords: got %q want %q", name, g, w)
		}
		checkSel := func(what string, g SelectorInfo, w map[string]value) {
			if !sameRules(g.Commands, w["commands"].s) {
				t.Errorf("GETUSER %s %s commands: got %q want %q", name, what, g.Commands, w["commands"].s)
			}
			if g.Keys != w["keys"].s || g.Channels != w["channels"].s {
				t.Errorf("GETUSER %s %s keys/channels: got %q %q want %q %q", name, what, g.Keys, g.Channels, w["keys"].s, w["channels"].s)
			}
		}
		checkSel("root", in.SelectorInfo, fields)
		sels := fields["selectors"].kids
		if len(sels) != len(in.Selectors) {
			t.Errorf("GETUSER %s: got %d selectors want %d", name, len(in.Selectors), len(sels))
			continue
		}
		for i, s := range sels {
			m := map[string]value{}
			for j := 0; j+1 < len(s.kids); j += 2 {
				m[s.kids[j].s] = s.kids[j+1]
			}
			checkSel("selector", in.Selectors[i], m)
		}
	}
	// ACL DRYRUN, with keys and channels taken from COMMAND GETKEYSANDFLAGS
	// and the command's channel rules, as the engine will give them.
	for _, d := range oracleDryRuns {
		w := rc.do(t, append([]string{"ACL", "DRYRUN"}, d...)...)
		wantS := w.s
		if w.typ == '-' {
			wantS = "-" + w.s
		}
		got := dryRun(t, rc, users, infos, d[0], d[1:])
		if got != wantS {
			t.Errorf("ACL DRYRUN %q:\n got  %s\n want %s", d, got, wantS)
		}
	}
}

// dryRun is the package's ACL DRYRUN: what the engine will do, with the
// keys found by redis's COMMAND GETKEYSANDFLAGS standing in for the
// engine's key specs.
func dryRun(t *testing.T, rc *redisConn, users *Users, infos map[string]value, name string, argv []string) string {
	u := users.Get(name)
	full := strings.ToLower(argv[0])
	if len(argv) > 1 {
		if _, ok := infos[full+"|"+strings.ToLower(argv[1])]; ok {
			full += "|" + strings.ToLower(argv[1])
		}
	}
	id, ok := users.Table().ID(full)
	if !ok {
		return "-ERR Command '" + argv[0] + "' not found"
	}
	var first []byte
	argi := 1
	if strings.Contains(full, "|") {
		argi = 2
	}
	if len(argv) > argi {
		first = []byte(argv[argi])
	}
	var keys []Key
	if kv := rc.do(t, append([]string{"COMMAND", "GETKEYSANDFLAGS"}, argv...)...); kv.typ == '*' {
		for _, k := range kv.kids {
			var f KeyFlags
			for _, fl := range k.kids[1].kids {
				switch fl.s {
				case "access":
					f |= KeyRead
				case "insert", "update", "delete":
					f |= KeyWrite
				}
			}
			keys = append(keys, Key{Name: []byte(k.kids[0].s), Flags: f})
		}
	}
	var chans []Channel
	switch full {
	case "publish":
		chans = append(chans, Channel{Name: []byte(argv[1])})
	case "subscribe", "psubscribe":
		for _, c := range argv[1:] {
			chans = append(chans, Channel{Name: []byte(c), Pattern: full == "psubscribe"})
		}
	}
	r := u.Allowed(id, first, keys, chans)
	var obj []byte
	switch r.Reason {
	case ReasonKey:
		obj = keys[r.Index].Name
	case ReasonChannel:
		obj = chans[r.Index].Name
	}
	return u.DenyMessage(id, r, obj)
}

func joinKids(v value) string {
	s := make([]string, len(v.kids))
	for i, k := range v.kids {
		s[i] = k.s
	}
	return strings.Join(s, " ")
}

// sameRules compares two descriptions, allowing only what Redis leaves
// to its hash table's order: the order of the single-command rules
// (+name, -name) after the category rules of each selector.
func sameRules(a, b string) bool { return canonRules(a) == canonRules(b) }

func canonRules(s string) string {
	var out []string
	var singles []string
	flush := func() {
		sort.Strings(singles)
		out = append(out, singles...)
		singles = nil
	}
	for _, f := range strings.Fields(s) {
		if len(f) > 1 && (f[0] == '+' || f[0] == '-') && f[1] != '@' && !strings.HasSuffix(f, ")") {
			singles = append(singles, f)
			continue
		}
		if strings.HasSuffix(f, ")") && len(f) > 1 && (f[0] == '+' || f[0] == '-') && f[1] != '@' {
			singles = append(singles, strings.TrimSuffix(f, ")"))
			flush()
			out = append(out, ")")
			continue
		}
		flush()
		out = append(out, f)
	}
	flush()
	return strings.Join(out, " ")
}

// TestOracleCatAndLog compares ACL CAT's lists and the ACL LOG that a
// series of denials leaves with redis-server 7.0's.
func TestOracleCatAndLog(t *testing.T) {
	rc := startRedis(t)
	table, _ := redisTable(t, rc)
	for _, name := range command.ACLCategories() {
		c, _ := categoryByName(name)
		got := table.CategoryCommands(c)
		want := joinKids(rc.do(t, "ACL", "CAT", name))
		sort.Strings(got)
		w := strings.Fields(want)
		sort.Strings(w)
		if strings.Join(got, " ") != strings.Join(w, " ") {
			t.Errorf("ACL CAT %s:\n got  %v\n want %v", name, got, w)
		}
	}

	users := NewUsers(table)
	setup := []string{"w", "on", ">pw", "~a*", "+get", "+mget", "+multi", "+exec"}
	rc.do(t, append([]string{"ACL", "SETUSER"}, setup...)...)
	if _, err := users.SetUser(setup[0], setup[1:]...); err != nil {
		t.Fatal(err)
	}
	rc.do(t, "ACL", "LOG", "RESET")
	log := NewLog(DefaultLogMaxLen)
	client := startClient(t, rc)
	if v := client.do(t, "AUTH", "w", "pw"); v.s != "OK" {
		t.Fatalf("AUTH: %v", v)
	}
	steps := [][]string{
		{"get", "b"}, {"set", "a", "1"}, {"get", "b"}, {"mget", "a1", "c", "d"}, {"get", "b"},
		{"AUTH", "w", "wrong"}, {"auth", "nobody", "x"}, {"AUTH", "w", "wrong"},
		{"MULTI"}, {"get", "z"}, {"EXEC"},
	}
	u := users.Get("w")
	inMulti := false
	for _, argv := range steps {
		client.do(t, argv...)
		ctx := ContextTopLevel
		if inMulti {
			ctx = ContextMulti
		}
		name := strings.ToLower(argv[0])
		switch name {
		case "auth":
			if !(users.Get(argv[1]) != nil && users.Get(argv[1]).CheckPassword(argv[2])) {
				log.Add(LogEntry{Reason: ReasonAuth, Context: ctx, Object: argv[0], Username: argv[1]})
			}
			continue
		case "multi":
			inMulti = true
			continue
		case "exec":
			inMulti = false
			continue
		}
		id, _ := table.ID(name)
		var keys []Key
		for _, k := range argv[1:] {
			keys = append(keys, Key{Name: []byte(k), Flags: KeyRead})
			if name == "set" {
				keys[0].Flags = KeyWrite
				break
			}
		}
		if r := u.Allowed(id, nil, keys, nil); !r.OK() {
			obj := table.Name(id)
			if r.Reason == ReasonKey {
				obj = string(keys[r.Index].Name)
			}
			log.Add(LogEntry{Reason: r.Reason, Context: ctx, Object: obj, Username: u.Name()})
		}
	}
	want := rc.do(t, "ACL", "LOG")
	got := log.Entries(10)
	if len(got) != len(want.kids) {
		t.Fatalf("ACL LOG: got %d entries, want %d: %v", len(got), len(want.kids), want)
	}
	for i, w := range want.kids {
		f := map[string]value{}
		for j := 0; j+1 < len(w.kids); j += 2 {
			f[w.kids[j].s] = w.kids[j+1]
		}
		g := got[i]
		if g.Count != int(f["count"].n) || g.Reason.String() != f["reason"].s || g.Context.String() != f["context"].s ||
			g.Object != f["object"].s || g.Username != f["username"].s {
			t.Errorf("ACL LOG entry %d: got %d %s %s %q %q, want %v", i, g.Count, g.Reason, g.Context, g.Object, g.Username, w)
		}
	}
}

// startClient opens a second connection to the redis-server rc talks to.
func startClient(t *testing.T, rc *redisConn) *redisConn {
	c, err := net.Dial("unix", rc.c.RemoteAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &redisConn{c: c, r: bufio.NewReader(c)}
}

// TestOraclePubsubDefault runs scripts with acl-pubsub-default
// allchannels, where new users and selectors start with &*.
func TestOraclePubsubDefault(t *testing.T) {
	rc := startRedis(t)
	table, _ := redisTable(t, rc)
	if v := rc.do(t, "CONFIG", "SET", "acl-pubsub-default", "allchannels"); v.s != "OK" {
		t.Fatalf("CONFIG SET acl-pubsub-default: %v", v)
	}
	users := NewUsers(table)
	users.AllChannels = true
	for _, script := range [][]string{
		{"p1"}, {"p2", "on", "+get", "(+set ~x)"}, {"p3", "&a", "reset"}, {"p4", "resetchannels", "&b", "(&c +get)"},
	} {
		want := rc.do(t, append([]string{"ACL", "SETUSER"}, script...)...)
		got := "OK"
		if _, err := users.SetUser(script[0], script[1:]...); err != nil {
			got = "ERR " + err.Error()
		}
		if got != want.s {
			t.Errorf("ACL SETUSER %q: got %s, want %s", script, got, want.s)
		}
	}
	want := rc.do(t, "ACL", "LIST")
	got := users.List()
	if strings.Join(got, "\n") != joinLines(want) {
		t.Errorf("ACL LIST:\n got\n%s\n want\n%s", strings.Join(got, "\n"), joinLines(want))
	}
}

func joinLines(v value) string {
	s := make([]string, len(v.kids))
	for i, k := range v.kids {
		s[i] = k.s
	}
	return strings.Join(s, "\n")
}
