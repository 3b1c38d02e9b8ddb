package redisconf

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// oracleConf is the file both redis-server and Rewrite start from: comments,
// blank runs, repeated save lines, values in forms CONFIG REWRITE
// normalises, a rename-command it keeps and a directive set back to its
// default.
const oracleConf = `# goblin oracle configuration
port 0
unixsocket @SOCK@
dir @DIR@

# memory
maxmemory 1048576
MaxMemory-Policy ALLKEYS-LRU
save 900 1
save 300 10
save 60 10000


timeout 0
appendonly no
hz 10
requirepass secret
masterauth pw
rename-command DEBUG ""
client-output-buffer-limit pubsub 32mb 8mb 60
hash-max-ziplist-entries 512
   LOGFILE   ""
# trailing comment
`

// oracleAdded are lines added to the file after the server started (it
// would refuse them at start): CONFIG REWRITE comments them out.
const oracleAdded = "frobnicate 1\nbad \"quote\n"

// oracleSets are the CONFIG SETs applied to both.
var oracleSets = [][2]string{
	{"maxmemory", "200mb"},
	{"timeout", "30"},
	{"save", "3600 1"},
	{"requirepass", ""},
	{"masterauth", ""},
	{"hz", "20"},
	{"slowlog-max-len", "1024"},
	{"appendfsync", "always"},
	{"client-output-buffer-limit", "normal 1mb 512kb 10"},
	{"maxmemory-clients", "10%"},
	{"notify-keyspace-events", ""},
	{"hash-max-listpack-entries", "256"},
}

// TestRewriteOracle starts redis-server 7.0 with oracleConf, applies
// oracleSets with CONFIG SET, runs CONFIG REWRITE, and compares the file it
// writes with Rewrite's from the same file and the same values. Lines only
// Redis writes (ACL users) are dropped, and the appended block is sorted
// because Redis appends in its hash table's order.
func TestRewriteOracle(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "r.sock")
	text := strings.NewReplacer("@SOCK@", sock, "@DIR@", dir).Replace(oracleConf)
	redisFile := writeFile(t, filepath.Join(dir, "redis.conf"), text)
	ourFile := writeFile(t, filepath.Join(dir, "ours.conf"), text)
	conn := startRedis(t, redisFile, sock)
	if os.Getenv("REDISCONF_ORACLE_DUMP") != "" {
		defer func() { b, _ := os.ReadFile(redisFile); t.Logf("redis-server wrote:\n%q", b) }()
	}
	defer conn.Close()
	call := func(args ...string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := conn.Write([]byte(b.String())); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 512)
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("%q: no reply: %v", args, err)
		}
		return string(buf[:n])
	}
	if r := call("AUTH", "secret"); r != "+OK\r\n" {
		t.Fatalf("AUTH: %q", r)
	}
	for _, s := range oracleSets {
		if r := call("CONFIG", "SET", s[0], s[1]); r != "+OK\r\n" {
			t.Fatalf("CONFIG SET %s %q: %q", s[0], s[1], r)
		}
	}
	for _, f := range []string{redisFile, ourFile} {
		fh, err := os.OpenFile(f, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fh.WriteString(oracleAdded)
		fh.Close()
	}
	if r := call("CONFIG", "REWRITE"); r != "+OK\r\n" {
		t.Fatalf("CONFIG REWRITE: %q", r)
	}
	want, err := os.ReadFile(redisFile)
	if err != nil {
		t.Fatal(err)
	}

	// Ours: the file's values, the same SETs, every Redis directive formatted.
	dirs, err := (&Parser{}).Parse(ourFile, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Check(dirs)
	if err != nil {
		t.Fatal(err)
	}
	vals := rep.Values()
	for _, s := range oracleSets {
		args, err := SplitArgs(s[1])
		if err != nil {
			t.Fatal(err)
		}
		if len(args) == 0 || s[1] == "" {
			args = []string{""}
		}
		if s[0] == "client-output-buffer-limit" { // CONFIG SET sets the classes it names
			args = append(append([]string{}, vals[s[0]]...), args...)
		}
		vals[s[0]] = args
	}
	var values []Value
	for _, spec := range redisDirectives {
		if spec.Alias != "" || spec.Kind == KindSpecial {
			continue
		}
		args, ok := vals[spec.Name]
		if !ok {
			args = DefaultArgs(spec)
		}
		if spec.Name == "dir" && !ok {
			args = []string{dir}
		}
		values = append(values, Format(spec, args))
	}
	old, _ := os.ReadFile(ourFile)
	if err := WriteFileAtomic(ourFile, Rewrite(old, values)); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(ourFile)
	if g, w := normaliseRewrite(string(got)), normaliseRewrite(string(want)); g != w {
		t.Fatalf("Rewrite differs from redis-server's CONFIG REWRITE\n--- ours:\n%s\n--- redis-server 7.0:\n%s", g, w)
	}
}

// startRedis starts redis-server 7.0 on the configuration file conf (which
// must make it listen on the Unix socket sock), in conf's directory, and
// returns a connection to it; the server is killed when the test ends.
func startRedis(t *testing.T, conf, sock string) net.Conn {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err == nil {
		if v, verr := exec.Command(bin, "--version").Output(); verr != nil || !bytes.Contains(v, []byte(" v=7.0.")) {
			err = fmt.Errorf("want redis-server 7.0.x, have %q (%v)", v, verr)
		}
	}
	testkit.Require(t, "redis-server 7.0 for the oracle", err)
	cmd := exec.Command(bin, conf)
	cmd.Dir = filepath.Dir(conf)
	var logbuf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logbuf, &logbuf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var conn net.Conn
	err = testkit.Poll(20*time.Second, "redis-server to listen on "+sock, func() (bool, string) {
		var err error
		conn, err = net.Dial("unix", sock)
		return err == nil, fmt.Sprint(err)
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, logbuf.String())
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// normaliseRewrite drops ACL user lines (written by Redis's ACL code, not by
// this package) and sorts the appended block.
func normaliseRewrite(s string) string {
	var head, tail []string
	inTail := false
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if strings.HasPrefix(l, "user ") {
			continue
		}
		if l == RewriteSignature {
			inTail = true
		}
		if inTail && l != RewriteSignature {
			tail = append(tail, l)
		} else {
			head = append(head, l)
		}
	}
	sort.Strings(tail)
	return strings.Join(append(head, tail...), "\n")
}

func TestRewriteRules(t *testing.T) {
	spec := func(name string) Spec { s, _ := Lookup(name); return s }
	// The wants follow rewriteConfig's rules; TestRewriteOracle checks the
	// same rules against a running redis-server 7.0.
	cases := []struct {
		name, old string
		values    []Value
		want      string
	}{
		{"empty file, default value", "", []Value{Format(spec("hz"), []string{"10"})}, ""},
		{"empty file, changed value", "", []Value{Format(spec("hz"), []string{"11"})}, "# Generated by CONFIG REWRITE\nhz 11\n"},
		{"signature written once", "hz 1\n# Generated by CONFIG REWRITE\n", []Value{Format(spec("timeout"), []string{"5"})},
			"hz 1\n# Generated by CONFIG REWRITE\n\ntimeout 5\n"},
		{"alias line takes the primary name", "slave-priority 5\n", []Value{Format(spec("replica-priority"), []string{"7"})}, "replica-priority 7\n\n"},
		{"canonical forms", "AppendOnly YES\nmaxmemory 2048\ndbfilename x.rdb\nmaxmemory-policy ALLKEYS-LRU\n",
			[]Value{Format(spec("appendonly"), []string{"YES"}), Format(spec("maxmemory"), []string{"2048"}),
				Format(spec("dbfilename"), []string{"x.rdb"}), Format(spec("maxmemory-policy"), []string{"ALLKEYS-LRU"})},
			"appendonly yes\nmaxmemory 2kb\ndbfilename \"x.rdb\"\nmaxmemory-policy allkeys-lru\n\n"},
		{"unknown and unparsable lines commented", "frob 1\nx \"y\ninclude /etc/x.conf\n", nil,
			"# ??? frob 1\n# ??? x \"y\ninclude /etc/x.conf\n\n"},
		// redis-server 7.0 splits the file on "\n": the empty string after the
		// last newline is a line, so a rewritten file ends in "\n\n" (once:
		// runs of empty lines become one).
		{"last empty line", "hz 5\n\n", nil, "hz 5\n\n"},
		{"no last newline", "hz 5", nil, "hz 5\n"},
		{"save more lines than before", "save 1 1\n# end\n", []Value{Format(spec("save"), []string{"1", "1", "2", "2"})},
			"save 1 1\n# end\n\n# Generated by CONFIG REWRITE\nsave 2 2\n"},
		{"save none", "save 1 1\nsave 2 2\n", []Value{Format(spec("save"), []string{""})}, "save \"\"\n\n"},
		{"client-output-buffer-limit classes", "client-output-buffer-limit replica 1gb 1gb 0\nclient-output-buffer-limit normal 0 0 0\n",
			[]Value{Format(spec("client-output-buffer-limit"), []string{"slave", "1073741824", "1gb", "0", "pubsub", "1mb", "1k", "5"})},
			"client-output-buffer-limit normal 0 0 0\nclient-output-buffer-limit replica 1gb 1gb 0\n\n# Generated by CONFIG REWRITE\nclient-output-buffer-limit pubsub 1mb 1000 5\n"},
		{"string quoting", "", []Value{Format(spec("logfile"), []string{"/var/log/my \"log\"\n"})},
			"# Generated by CONFIG REWRITE\nlogfile \"/var/log/my \\\"log\\\"\\n\"\n"},
		{"trimmed lines", "  hz 5  \r\n\t# note\t\n", nil, "hz 5\n# note\n\n"},
	}
	for _, c := range cases {
		if got := string(Rewrite([]byte(c.old), c.values)); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	name := writeFile(t, filepath.Join(dir, "g.conf"), "old\n")
	if err := os.Chmod(name, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(name, []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(name)
	fi, _ := os.Stat(name)
	ents, _ := os.ReadDir(dir)
	if string(b) != "new\n" || fi.Mode().Perm() != 0o600 || len(ents) != 1 {
		t.Fatalf("content %q, mode %v, %d files in the directory; want \"new\\n\", 0600, 1", b, fi.Mode().Perm(), len(ents))
	}
	if err := WriteFileAtomic(filepath.Join(dir, "missing", "g.conf"), nil); err == nil {
		t.Fatal("WriteFileAtomic into a missing directory succeeded")
	}
}

// FuzzRewrite checks that any file survives parsing and rewriting without a
// panic, that a rewrite with no values is stable from the second pass on
// (the first may add a last newline, the second the empty line after it, as
// redis-server does), and that a file that parsed still parses rewritten.
func FuzzRewrite(f *testing.F) {
	f.Add(oracleConf)
	f.Add("save 1 1\nsave 2 2\n\n\n# c\nhz 5")
	f.Add("frob \"x\nMAXMEMORY 1gb\r\n")
	f.Fuzz(func(t *testing.T, text string) {
		var p Parser
		p.ReadFile = func(string) ([]byte, error) { return nil, os.ErrNotExist }
		dirs, perr := p.Parse("f.conf", []byte(text))
		if perr == nil {
			Check(dirs)
		}
		once := Rewrite([]byte(text), nil)
		twice := Rewrite(once, nil)
		if thrice := Rewrite(twice, nil); !bytes.Equal(twice, thrice) {
			t.Fatalf("Rewrite not stable:\n%q\n%q", twice, thrice)
		}
		if _, err := p.Parse("f.conf", once); perr == nil && err != nil {
			t.Fatalf("rewritten file does not parse: %v\n%q", err, once)
		}
	})
}
