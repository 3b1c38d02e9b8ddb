package acl

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/command"
)

// goblinTable is goblin's commands.
var goblinTable = MustTable(commandList())

func TestSetUserRules(t *testing.T) {
	const hash = "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8" // "password"
	tests := []struct {
		ops  []string
		want string // Describe
	}{
		{nil, "off resetchannels -@all"},
		{[]string{"on"}, "on resetchannels -@all"},
		{[]string{"on", "off"}, "off resetchannels -@all"},
		{[]string{">password"}, "off #" + hash + " resetchannels -@all"},
		{[]string{"#" + hash, ">password"}, "off #" + hash + " resetchannels -@all"},
		{[]string{">password", "<password"}, "off resetchannels -@all"},
		{[]string{">password", "!" + hash}, "off resetchannels -@all"},
		{[]string{">password", "nopass"}, "off nopass resetchannels -@all"},
		{[]string{"nopass", "resetpass"}, "off resetchannels -@all"},
		{[]string{"nopass", ">x", ">x"}, "off #2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881 resetchannels -@all"},
		{[]string{"~a*", "%R~b", "%W~c", "%RW~d", "%r~a*"}, "off ~a* %R~b %W~c ~d resetchannels -@all"},
		{[]string{"~a", "allkeys"}, "off ~* resetchannels -@all"},
		{[]string{"~*", "resetkeys", "~b"}, "off ~b resetchannels -@all"},
		{[]string{"%RW~*"}, "off ~* resetchannels -@all"},
		{[]string{"%R"}, "off %R~ resetchannels -@all"},
		{[]string{"&a", "&b", "&a"}, "off resetchannels &a &b -@all"},
		{[]string{"&a", "allchannels"}, "off &* -@all"},
		{[]string{"&*", "resetchannels"}, "off resetchannels -@all"},
		{[]string{"+get"}, "off resetchannels -@all +get"},
		{[]string{"+GET", "+set", "-get"}, "off resetchannels -@all +set"},
		{[]string{"allcommands"}, "off resetchannels +@all"},
		{[]string{"+@all", "-get"}, "off resetchannels +@all -get"},
		{[]string{"+@all", "nocommands"}, "off resetchannels -@all"},
		{[]string{"+@all", "-@all", "+get"}, "off resetchannels -@all +get"},
		{[]string{"+config|get"}, "off resetchannels -@all +config|get"},
		{[]string{"+config", "-config|set"}, "off resetchannels -@all +config -config|set"},
		{[]string{"+select|0", "+select|1"}, "off resetchannels -@all +select|0 +select|1"},
		{[]string{"+select|0", "+select"}, "off resetchannels -@all +select"},
		{[]string{"+select|0", "-@all"}, "off resetchannels -@all"},
		{[]string{"(+get ~a)", "(+set)"}, "off resetchannels -@all (~a resetchannels -@all +get) (resetchannels -@all +set)"},
		{[]string{"(+get", "~a)"}, "off resetchannels -@all (~a resetchannels -@all +get)"},
		{[]string{"(+get)", "clearselectors"}, "off resetchannels -@all"},
		{[]string{"on", ">x", "~a", "&b", "+get", "(+set)", "reset"}, "off sanitize-payload resetchannels -@all"},
		{[]string{"skip-sanitize-payload"}, "off skip-sanitize-payload resetchannels -@all"},
		{[]string{"skip-sanitize-payload", "sanitize-payload"}, "off sanitize-payload resetchannels -@all"},
	}
	for _, tt := range tests {
		users := NewUsers(goblinTable)
		u, err := users.SetUser("u", tt.ops...)
		if err != nil {
			t.Errorf("SetUser %q: %v", tt.ops, err)
			continue
		}
		if got := u.Describe(); got != tt.want {
			t.Errorf("SetUser %q:\n got  %q\n want %q", tt.ops, got, tt.want)
		}
	}
}

func TestSetUserErrors(t *testing.T) {
	const msg = "Error in ACL SETUSER modifier '"
	tests := []struct {
		ops  []string
		want string
	}{
		{[]string{"+nosuch"}, msg + "+nosuch': Unknown command or category name in ACL"},
		{[]string{"-nosuch"}, msg + "-nosuch': Unknown command or category name in ACL"},
		{[]string{"+@nosuch"}, msg + "+@nosuch': Unknown command or category name in ACL"},
		{[]string{"-select|0"}, msg + "-select|0': Unknown command or category name in ACL"},
		{[]string{"+config|nosuch"}, msg + "+config|nosuch': Unknown command or category name in ACL"},
		{[]string{"+config|get|x"}, msg + "+config|get|x': Allowing first-arg of a subcommand is not supported"},
		{[]string{"+select|"}, msg + "+select|': Syntax error"},
		{[]string{"bad"}, msg + "bad': Syntax error"},
		{[]string{""}, msg + "': Syntax error"},
		{[]string{"~a b"}, msg + "~a b': Syntax error"},
		{[]string{"&a b"}, msg + "&a b': Syntax error"},
		{[]string{"%~x"}, msg + "%~x': Syntax error"},
		{[]string{"%RR~x"}, msg + "%RR~x': Syntax error"},
		{[]string{"%X~x"}, msg + "%X~x': Syntax error"},
		{[]string{"~*", "~x"}, msg + "~x': " + ErrKeysAfterAll.Error()},
		{[]string{"allkeys", "%R~x"}, msg + "%R~x': " + ErrKeysAfterAll.Error()},
		{[]string{"&*", "&x"}, msg + "&x': " + ErrChannelsAfterAll.Error()},
		{[]string{"#ABC"}, msg + "#ABC': The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"},
		{[]string{"!abc"}, msg + "!abc': The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"},
		{[]string{"<nope"}, msg + "<nope': The password you are trying to remove from the user does not exist"},
		{[]string{"(+get ~x", "bad)"}, msg + "(+get ~x bad)': Syntax error"},
		{[]string{"(+nosuch)"}, msg + "(+nosuch)': Unknown command or category name in ACL"},
		{[]string{"(+get"}, "Unmatched parenthesis in acl selector starting at '(+get'."},
	}
	for _, tt := range tests {
		users := NewUsers(goblinTable)
		users.SetUser("u", "on", "+get")
		before := users.Get("u")
		_, err := users.SetUser("u", append([]string{"+set"}, tt.ops...)...)
		if err == nil || err.Error() != tt.want {
			t.Errorf("SetUser %q: got %v, want %q", tt.ops, err, tt.want)
		}
		if users.Get("u") != before || before.Describe() != "on resetchannels -@all +get" {
			t.Errorf("SetUser %q changed the user on error: %s", tt.ops, users.Get("u").Describe())
		}
	}
	users := NewUsers(goblinTable)
	for _, name := range []string{"a b", "a\x00", "a\tb"} {
		if _, err := users.SetUser(name); err != ErrBadUsername {
			t.Errorf("SetUser(%q): got %v, want %v", name, err, ErrBadUsername)
		}
	}
	_, err := users.SetUser("u", "+nosuch")
	var me *ModifierError
	if !errors.As(err, &me) || !errors.Is(err, ErrUnknownName) {
		t.Errorf("SetUser +nosuch: %v is not a *ModifierError wrapping ErrUnknownName", err)
	}
	if _, err := users.DelUser("x", "default"); err != ErrDeleteDefault {
		t.Errorf("DelUser default: got %v", err)
	}
}

// TestSetUserUpdatesHeldUser: a client holding a *User sees ACL SETUSER's
// changes at its next command, as a Redis client does.
func TestSetUserUpdatesHeldUser(t *testing.T) {
	users := NewUsers(goblinTable)
	held, _ := users.SetUser("u", "on", "+@all", "~*", "&*")
	get := id(t, "get")
	if !held.Allowed(get, nil, nil, nil).OK() {
		t.Fatal("allowed before")
	}
	if _, err := users.SetUser("u", "-get"); err != nil {
		t.Fatal(err)
	}
	if held.Allowed(get, nil, nil, nil).OK() {
		t.Error("a held *User must see -get at once")
	}
	if _, err := users.SetUser("u", "+get", "+nosuch"); err == nil || !strings.Contains(held.Describe(), "-get") {
		t.Errorf("a refused SETUSER must leave the held user alone: %v, %s", err, held.Describe())
	}
}

func TestDefaultUserAndInfo(t *testing.T) {
	users := NewUsers(goblinTable)
	if got := users.List(); len(got) != 1 || got[0] != "user default on nopass ~* &* +@all" {
		t.Fatalf("fresh List: %q", got)
	}
	d := users.Get("default")
	if !d.CheckPassword("anything") || !d.Allowed(0, nil, nil, nil).OK() {
		t.Fatal("the default user must take any password and run anything")
	}
	u, _ := users.SetUser("u", "on", ">secret", "~a*", "%R~b*", "&c", "+get", "(+set ~x)")
	in := u.Info()
	want := Info{Flags: []string{"on"}, Passwords: []string{hashPassword("secret")},
		SelectorInfo: SelectorInfo{Commands: "-@all +get", Keys: "~a* %R~b*", Channels: "&c"},
		Selectors:    []SelectorInfo{{Commands: "-@all +set", Keys: "~x", Channels: ""}}}
	if got, w := strings.Join(in.Flags, ","), strings.Join(want.Flags, ","); got != w {
		t.Errorf("flags %q want %q", got, w)
	}
	if in.SelectorInfo != want.SelectorInfo || len(in.Selectors) != 1 || in.Selectors[0] != want.Selectors[0] || in.Passwords[0] != want.Passwords[0] {
		t.Errorf("Info:\n got  %+v\n want %+v", in, want)
	}
	if !u.CheckPassword("secret") || u.CheckPassword("other") {
		t.Error("CheckPassword")
	}
	users.SetUser("u", "off")
	if users.Get("u").CheckPassword("secret") {
		t.Error("a user that is off must not authenticate")
	}
	if got := users.Names(); strings.Join(got, ",") != "default,u" {
		t.Errorf("Names: %q", got)
	}
}

func id(t testing.TB, name string) int {
	i, ok := goblinTable.ID(name)
	if !ok {
		t.Fatalf("no command %q", name)
	}
	return i
}

func TestAllowed(t *testing.T) {
	users := NewUsers(goblinTable)
	users.SetUser("r", "on", "+get", "+set", "+select|1", "%R~r*", "%W~w*", "~rw*", "&news.*", "+publish", "+psubscribe", "(+del ~d*)")
	users.SetUser("all", "on", "+@all", "~*", "&*")
	users.SetUser("cmds", "on", "+@read", "allkeys", "allchannels")
	users.SetUser("future", "on", "+@all", "-flushall", "~*", "&*")
	k := func(name string, f KeyFlags) []Key { return []Key{{Name: []byte(name), Flags: f}} }
	tests := []struct {
		user     string
		cmd      string
		first    string
		keys     []Key
		channels []Channel
		want     Result
	}{
		{"all", "flushall", "", nil, nil, Result{}},
		{"cmds", "get", "", k("x", KeyRead), nil, Result{}},
		{"cmds", "set", "", k("x", KeyWrite), nil, Result{Reason: ReasonCommand}},
		{"future", "flushall", "", nil, nil, Result{Reason: ReasonCommand}},
		{"future", "get", "", k("x", KeyRead), nil, Result{}},
		{"r", "get", "", k("r1", KeyRead), nil, Result{}},
		{"r", "get", "", k("w1", KeyRead), nil, Result{Reason: ReasonKey}},
		{"r", "set", "", k("w1", KeyWrite), nil, Result{}},
		{"r", "set", "", k("r1", KeyWrite), nil, Result{Reason: ReasonKey}},
		{"r", "set", "", k("rw1", KeyRead|KeyWrite), nil, Result{}},
		{"r", "set", "", k("r1", KeyRead|KeyWrite), nil, Result{Reason: ReasonKey}},
		{"r", "get", "", []Key{{[]byte("r1"), KeyRead}, {[]byte("x"), KeyRead}, {[]byte("y"), KeyRead}}, nil, Result{Reason: ReasonKey, Index: 1}},
		{"r", "type", "", k("zz", 0), nil, Result{Reason: ReasonCommand}},
		{"r", "select", "1", nil, nil, Result{}},
		{"r", "select", "2", nil, nil, Result{Reason: ReasonCommand}},
		{"r", "select", "", nil, nil, Result{Reason: ReasonCommand}},
		{"r", "del", "", k("d1", KeyWrite), nil, Result{}},
		{"r", "del", "", k("x", KeyWrite), nil, Result{Reason: ReasonKey}},
		{"r", "publish", "", nil, []Channel{{Name: []byte("news.a")}}, Result{}},
		{"r", "publish", "", nil, []Channel{{Name: []byte("other")}}, Result{Reason: ReasonChannel}},
		{"r", "psubscribe", "", nil, []Channel{{Name: []byte("news.*"), Pattern: true}}, Result{}},
		{"r", "psubscribe", "", nil, []Channel{{Name: []byte("news.a"), Pattern: true}, {Name: []byte("news.*"), Pattern: true}}, Result{Reason: ReasonChannel}},
		{"r", "auth", "", nil, nil, Result{}}, // no_auth
		{"r", "hello", "", nil, nil, Result{}},
	}
	for _, tt := range tests {
		var first []byte
		if tt.first != "" {
			first = []byte(tt.first)
		}
		got := users.Get(tt.user).Allowed(id(t, tt.cmd), first, tt.keys, tt.channels)
		if got != tt.want {
			t.Errorf("%s %s %q %v: got %+v want %+v", tt.user, tt.cmd, tt.first, tt.keys, got, tt.want)
		}
	}
	if got := users.Get("r").Allowed(-1, nil, nil, nil); got.Reason != ReasonCommand {
		t.Errorf("an ID out of range must be denied, got %+v", got)
	}
}

func TestAllowedAllocatesNothing(t *testing.T) {
	users := NewUsers(goblinTable)
	users.SetUser("all", "on", "+@all", "~*", "&*")
	users.SetUser("bits", "on", "+@read", "~*", "&*")
	users.SetUser("keys", "on", "+@read", "~a*", "~b*", "(+set ~c*)")
	keys := []Key{{Name: []byte("b1"), Flags: KeyRead}}
	get := id(t, "get")
	for _, name := range []string{"all", "bits", "keys"} {
		u := users.Get(name)
		if n := testing.AllocsPerRun(100, func() { u.Allowed(get, nil, keys, nil) }); n != 0 {
			t.Errorf("%s: Allowed allocates %v times", name, n)
		}
	}
}

func TestDenyMessages(t *testing.T) {
	users := NewUsers(goblinTable)
	u, _ := users.SetUser("u", "on", "+get", "~a")
	if got := u.DenyMessage(id(t, "config|set"), Result{Reason: ReasonCommand}, nil); got != "This user has no permissions to run the 'config|set' command" {
		t.Error(got)
	}
	if got := u.DenyMessage(0, Result{Reason: ReasonKey}, []byte("k")); got != "This user has no permissions to access the 'k' key" {
		t.Error(got)
	}
	if got := u.DenyMessage(0, Result{Reason: ReasonChannel}, []byte("c")); got != "This user has no permissions to access the 'c' channel" {
		t.Error(got)
	}
	if got := u.NoPermError(id(t, "set"), Result{Reason: ReasonCommand}); got != "NOPERM this user has no permissions to run the 'set' command" {
		t.Error(got)
	}
	if got := u.NoPermError(0, Result{Reason: ReasonKey}); got != "NOPERM this user has no permissions to access one of the keys used as arguments" {
		t.Error(got)
	}
}

func TestLoadErrors(t *testing.T) {
	file := "user a on +nosuch ~x\n\n# comment\nfoo bar\nuser a off\nuser c bad +@nosuch\n  user d on \"x y\"\nuser\n"
	// Redis 7.0.15's reply to ACL LOAD of that file, without "ERR ".
	want := "users.acl:1: Error in applying operation '+nosuch': Unknown command or category name in ACL. " +
		"users.acl:3 should start with user keyword followed by the username. " +
		"users.acl:4 should start with user keyword followed by the username. " +
		"WARNING: Duplicate user 'a' found on line 5. " +
		"users.acl:6: Syntax error. " +
		"users.acl:6: Error in applying operation '+@nosuch': Unknown command or category name in ACL. " +
		"users.acl:7: Syntax error. " +
		"users.acl:8 should start with user keyword followed by the username. " +
		"WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
	users := NewUsers(goblinTable)
	users.SetUser("keep", "on")
	err := users.Load(strings.NewReader(file), "users.acl")
	if err == nil || err.Error() != want {
		t.Errorf("Load:\n got  %v\n want %s", err, want)
	}
	if users.Get("keep") == nil {
		t.Error("a failed Load must change nothing")
	}
	err = users.Load(strings.NewReader("user b on (+get ~x\n"), "users.acl")
	if err == nil || !strings.HasPrefix(err.Error(), "users.acl:1: Unmatched parenthesis in acl selector starting at '(+get'. ") {
		t.Errorf("Load unmatched: %v", err)
	}
}

func TestLoadSaveRoundTrip(t *testing.T) {
	users := NewUsers(goblinTable)
	if err := users.Load(strings.NewReader("user a on >x (+get ~y) &c\r\nuser b\n"), "f"); err != nil {
		t.Fatal(err)
	}
	// Redis 7.0.15's ACL LIST after ACL LOAD of that file.
	want := []string{
		"user a on #2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881 resetchannels &c -@all (~y resetchannels -@all +get)",
		"user b off resetchannels -@all",
		"user default on nopass ~* &* +@all",
	}
	if got := users.List(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after Load:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	users.SetUser("c", "on", "+@all", "-@dangerous", "%R~r*", "(+set ~s*)")
	var buf bytes.Buffer
	if err := users.Save(&buf); err != nil {
		t.Fatal(err)
	}
	again := NewUsers(goblinTable)
	if err := again.Load(&buf, "f"); err != nil {
		t.Fatalf("loading what Save wrote: %v", err)
	}
	if a, b := strings.Join(users.List(), "\n"), strings.Join(again.List(), "\n"); a != b {
		t.Errorf("round trip:\n%s\nbecame\n%s", a, b)
	}
}

func TestLog(t *testing.T) {
	l := NewLog(3)
	t0 := time.Unix(1000, 0)
	e := func(obj string, at time.Duration) LogEntry {
		return LogEntry{Reason: ReasonKey, Object: obj, Username: "u", ClientInfo: "id=" + at.String(), Time: t0.Add(at)}
	}
	l.Add(e("a", 0))
	l.Add(e("b", time.Second))
	l.Add(e("a", 2*time.Second)) // groups with the first, which moves to the front
	got := l.Entries(-1)
	if len(got) != 2 || got[0].Object != "a" || got[0].Count != 2 || got[0].ClientInfo != "id=2s" || got[1].Object != "b" {
		t.Fatalf("grouping: %+v", got)
	}
	l.Add(e("a", 2*time.Second+61*time.Second)) // over 60 s after the last: a new entry
	if got := l.Entries(-1); len(got) != 3 || got[0].Count != 1 {
		t.Fatalf("60 s window: %+v", got)
	}
	other := e("b", 3*time.Second)
	other.Context = ContextMulti // another context: a new entry
	l.Add(other)
	if got := l.Entries(-1); len(got) != 3 || got[0].Context != ContextMulti || got[2].Object != "a" || got[2].Count != 2 {
		t.Fatalf("max length 3: %+v", got)
	}
	if got := l.Entries(1); len(got) != 1 {
		t.Fatalf("Entries(1): %d", len(got))
	}
	if age := got[0].AgeSeconds(got[0].Time.Add(1500 * time.Millisecond)); age != 1.5 {
		t.Errorf("AgeSeconds %v", age)
	}
	l.Reset()
	if l.Len() != 0 {
		t.Error("Reset")
	}
	if ReasonAuth.String() != "auth" || ContextLua.String() != "lua" {
		t.Error("names")
	}
}

func TestGenPass(t *testing.T) {
	for bits, n := range map[int]int{256: 64, 5: 2, 1: 1, 4096: 1024, 7: 2} {
		p, err := GenPass(bits)
		if err != nil || len(p) != n || strings.Trim(p, "0123456789abcdef") != "" {
			t.Errorf("GenPass(%d) = %q, %v", bits, p, err)
		}
	}
	for _, bits := range []int{0, -1, 4097} {
		if _, err := GenPass(bits); err != ErrGenPassBits {
			t.Errorf("GenPass(%d): %v", bits, err)
		}
	}
}

func TestCategories(t *testing.T) {
	want := "keyspace read write set sortedset list hash string bitmap hyperloglog geo stream pubsub admin fast slow blocking dangerous connection transaction scripting"
	if got := strings.Join(command.ACLCategories(), " "); got != want {
		t.Errorf("CategoryNames: %s", got)
	}
	if c, ok := categoryByName("SortedSet"); !ok || c != command.CatSortedSet {
		t.Error("CategoryByName")
	}
	if got := goblinTable.CategoryCommands(command.CatHyperLogLog); len(got) != 0 && got[0] == "" {
		t.Error("CategoryCommands")
	}
	if _, err := NewTable([]Command{{Name: "a"}, {Name: "A"}}); err == nil {
		t.Error("NewTable must refuse a name twice")
	}
}
