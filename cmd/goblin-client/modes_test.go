package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/client"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// TestCLIMonitor: one-shot "goblin-client monitor" prints OK, then a line
// for each command other clients run, until Ctrl-C (SIGINT), which exits 0.
func TestCLIMonitor(t *testing.T) {
	t.Parallel()
	tgt := testproc.StartGoblinServer(t)["uds/resp"]
	bin := testproc.Build(t, "./cmd/goblin-client")
	cmd := exec.Command(bin, "--target", tgt, "monitor")
	cmd.Env = append(os.Environ(), "GOBLIN_PASSWORD=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func(what string) string {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("goblin-client monitor ended before %s; stderr %q", what, stderr.String())
			}
			return l
		case <-time.After(20 * time.Second):
			t.Fatalf("goblin-client monitor printed no %s in 20s; stderr %q", what, stderr.String())
		}
		return ""
	}
	if l := next("OK"); l != "OK" {
		t.Fatalf("first line %q, want OK", l)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, tgt)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, k := range []string{"m1", "m2"} {
		if _, err := c.Do(ctx, "SET", k, "v"); err != nil {
			t.Fatal(err)
		}
		if l := next("line for SET " + k); !strings.Contains(strings.ToUpper(l), `"SET" "`+strings.ToUpper(k)+`" "V"`) {
			t.Fatalf("monitor line %q, want the SET of %s", l, k)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("after Ctrl-C: %v; stderr %q", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("goblin-client monitor did not exit within 10s of SIGINT")
	}
}

// TestPromptMonitorKeepsStep: monitor at the prompt streams on a
// connection of its own; when that stream ends, the next commands get
// their own replies (no MONITOR line, no earlier reply).
func TestPromptMonitorKeepsStep(t *testing.T) {
	t.Parallel()
	tgt := testproc.StartGoblinServer(t)["uds/resp"]
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := client.Dial(ctx, tgt)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	go func() {
		// Once the monitor is up, run a command it reports, then end the
		// monitor's connection from the server's side.
		var id string
		_ = testkit.Poll(20*time.Second, "the monitor in CLIENT LIST", func() (bool, string) {
			v, err := admin.Do(ctx, "CLIENT", "LIST")
			for _, l := range strings.Split(string(v.Str), "\n") {
				if err == nil && strings.Contains(l, "cmd=monitor") {
					id = strings.TrimPrefix(strings.Fields(l)[0], "id=")
					return true, ""
				}
			}
			return false, ""
		})
		admin.Do(ctx, "SET", "seen", "1")
		time.Sleep(200 * time.Millisecond)
		admin.Do(ctx, "CLIENT", "KILL", "ID", id)
	}()
	out, errs, code := promptSession(t, tgt, io.EOF, "monitor", "echo hi", "ping")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	i := strings.Index(out, "> OK\n")
	j := strings.Index(out, `"SET" "seen" "1"`)
	k := strings.Index(out, "> \"hi\"\n")
	l := strings.Index(out, "> PONG\n")
	if i < 0 || j < i || k < j || l < k {
		t.Fatalf("prompt output (want OK, the SET line, then \"hi\" and PONG in step):\n%s\nstderr %q", out, errs)
	}
}

// TestModeCommandsRefusedByCLI: SUBSCRIBE, RESET and CLIENT REPLY OFF
// would leave the connection's replies out of step; the CLI refuses them
// (exit 2) without sending them.
func TestModeCommandsRefusedByCLI(t *testing.T) {
	t.Parallel()
	tgt := testproc.StartGoblinServer(t)["uds/resp"]
	for _, args := range [][]string{{"subscribe", "ch"}, {"reset"}, {"client", "reply", "off"}} {
		r := runCLI(t, "", append([]string{"--target", tgt}, args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "Nothing was sent") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
}

// TestPromptKeepsDatabase: SELECT 3 at the prompt shows [3] in the prompt,
// and after the server closes the connection the next SET still lands in
// database 3 (the redial selects it again).
func TestPromptKeepsDatabase(t *testing.T) {
	t.Parallel()
	tgt := testproc.StartGoblinServer(t)["uds/resp"]
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := client.Dial(ctx, tgt)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	c, err := client.Dial(ctx, tgt)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out, errb bytes.Buffer
	s := &session{cfg: config{timeout: 30 * time.Second}, c: c, name: c.Target().String(), short: "g", out: &out, errw: &errb}
	in := &scriptedInput{lines: []string{"select 3", "client id"}, err: io.EOF, out: &out}
	s.prompt(in)
	if !strings.Contains(out.String(), "g> OK\ng[3]> (integer) ") {
		t.Fatalf("after select 3 the prompt is not g[3]>:\n%s", out.String())
	}
	id := strings.TrimPrefix(strings.Split(out.String(), "\n")[2], "g[3]> (integer) ")
	if _, err := admin.Do(ctx, "CLIENT", "KILL", "ID", id); err != nil {
		t.Fatal(err)
	}
	// The first command may meet the closed connection; the next redials.
	in = &scriptedInput{lines: []string{"set where here", "set where here"}, err: io.EOF, out: &out}
	s.prompt(in)
	admin.Do(ctx, "SELECT", 3)
	if v, err := admin.Do(ctx, "GET", "where"); err != nil || string(v.Str) != "here" {
		t.Fatalf("after the redial the SET is not in database 3 (GET there: %v, %v)\nprompt: %s\nstderr: %s", v, err, out.String(), errb.String())
	}
	admin.Do(ctx, "SELECT", 0)
	if v, _ := admin.Do(ctx, "GET", "where"); v.Kind != client.KindNil {
		t.Fatalf("after the redial a SET went to database 0: %v", v)
	}
	if !strings.HasSuffix(out.String(), "g[3]> OK\ng[3]> \n") {
		t.Fatalf("after the redial the prompt lost [3]:\n%s", out.String())
	}
	// -n selects the database for one-shot commands.
	runCLI(t, "", "--target", tgt, "-n", "3", "get", "where").expect(t, 0, "\"here\"\n")
	runCLI(t, "", "--target", tgt, "-n", "3", "set", "n3", "x").expect(t, 0, "OK\n")
	runCLI(t, "", "--target", tgt, "get", "n3").expect(t, 0, "(nil)\n")
}

// TestCLIStdinArgAndRaw: -x sends standard input, whole, as the last
// argument (a 200 KB file, beyond what argv holds comfortably), and --raw
// prints replies as redis-cli --raw does, byte for byte.
func TestCLIStdinArgAndRaw(t *testing.T) {
	t.Parallel()
	tgt := testproc.StartGoblinServer(t)["uds/resp"]
	raw := make([]byte, 150<<10)
	rand.Read(raw)
	value := base64.StdEncoding.EncodeToString(raw) + "\n" // 200 KB, ending in a newline kept as is
	file := filepath.Join(t.TempDir(), "value.txt")
	if err := os.WriteFile(file, []byte(value), 0o600); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(file)
	defer f.Close()
	data, _ := io.ReadAll(f)
	runCLI(t, string(data), "--target", tgt, "-x", "set", "big").expect(t, 0, "OK\n")
	runCLI(t, "", "--target", tgt, "strlen", "big").expect(t, 0, "(integer) 204801\n")
	runCLI(t, "", "--target", tgt, "--raw", "get", "big").expect(t, 0, value+"\n")
	if r := runCLI(t, "", "--target", tgt, "-x"); r.code != exitUsage || !strings.Contains(r.stderr, "-x needs a command") {
		t.Fatalf("-x without a command: exit %d, stderr %q", r.code, r.stderr)
	}

	// --raw against redis-cli --raw, on the same Redis server.
	sock := startRedis(t)
	redisCLI := testkit.Need(t, "redis-cli", "the reference output")
	setup := "rpush l a \"b c\" \"\"\nset s \"x\\ny\"\nhset h f 1\nset n 5\n"
	runCLI(t, setup, "--target", sock)
	for _, args := range [][]string{{"get", "nope"}, {"lrange", "l", "0", "-1"}, {"strlen", "s"}, {"incr", "l"}, {"ping"},
		{"get", "s"}, {"hgetall", "h"}, {"eval", "return {1,{2,'x'},{}}", "0"}} {
		want, _ := exec.Command(redisCLI, append([]string{"--raw", "-s", sock}, args...)...).Output()
		got := runCLI(t, "", append([]string{"--target", sock, "--raw"}, args...)...)
		if got.stdout != string(want) {
			t.Errorf("--raw %v printed %q; redis-cli --raw printed %q", args, got.stdout, want)
		}
	}
	// -x on redis-cli and goblin-client stores the same bytes.
	runCLI(t, "abc\n", "--target", sock, "-x", "set", "nl").expect(t, 0, "OK\n")
	want, _ := exec.Command(redisCLI, "--no-raw", "-s", sock, "get", "nl").Output()
	runCLI(t, "", "--target", sock, "get", "nl").expect(t, 0, string(want))
}

// TestRESP3PrintsLikeRedisCLI: goblin-client -3 prints every RESP3 reply
// type redis-cli 7.0 knows (DEBUG PROTOCOL sends each) exactly as
// redis-cli -3 does, quoted and --raw; and "hello 3" at the prompt no
// longer drops the connection.
func TestRESP3PrintsLikeRedisCLI(t *testing.T) {
	t.Parallel()
	bin := testkit.Need(t, "redis-server", "the RESP3 reference server")
	redisCLI := testkit.Need(t, "redis-cli", "the reference output")
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	testproc.Start(t, bin, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no",
		"--dir", dir, "--enable-debug-command", "yes")
	testproc.WaitDial(t, "unix", sock, 30*time.Second)
	runCLI(t, "hset h a 1 b 2\nsadd s x\nzadd z 1.5 a\n", "--target", sock)
	cases := [][]string{{"hgetall", "h"}, {"smembers", "s"}, {"hgetall", "nope"}, {"smembers", "nope"},
		{"zscore", "z", "a"}, {"config", "get", "maxmemory"}}
	for _, ty := range []string{"string", "integer", "double", "null", "array", "set", "map", "push", "verbatim", "true", "false"} {
		cases = append(cases, []string{"debug", "protocol", ty})
	}
	for _, args := range cases {
		for _, mode := range []string{"--no-raw", "--raw"} {
			want, err := exec.Command(redisCLI, append([]string{mode, "-3", "-s", sock}, args...)...).Output()
			if err != nil {
				t.Fatalf("redis-cli %v: %v", args, err)
			}
			gmode := []string{"--raw"}
			if mode == "--no-raw" {
				gmode = nil
			}
			got := runCLI(t, "", append(append([]string{"--target", sock, "-3"}, gmode...), args...)...)
			if got.stdout != string(want) || got.code != 0 {
				t.Errorf("-3 %s %v: exit %d, printed %q (stderr %q); redis-cli printed %q", mode, args, got.code, got.stdout, got.stderr, want)
			}
		}
	}
	// hello 3 in a script: the connection stays, later replies are RESP3.
	r := runCLI(t, "hello 3\nhgetall h\nping\n", "--target", sock)
	if r.code != 0 || !strings.Contains(r.stdout, "1# \"a\" => \"1\"\n2# \"b\" => \"2\"\nPONG\n") {
		t.Fatalf("hello 3 then hgetall: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestCLISBEAgainstRESPServer: --proto sbe against a server that speaks
// only RESP (redis-server) says so, rather than a bare i/o timeout.
func TestCLISBEAgainstRESPServer(t *testing.T) {
	t.Parallel()
	sock := startRedis(t)
	r := runCLI(t, "", "--target", sock, "--proto", "sbe", "--timeout", "1s", "ping")
	if r.code != exitConnect || !strings.Contains(r.stderr, "no SBE reply: is this a goblin server speaking SBE?") {
		t.Fatalf("exit %d, stderr %q; want exit 3 and the no-SBE-reply explanation", r.code, r.stderr)
	}
}

// TestCLIAeronDir: goblin-client honours $AERON_DIR as Aeron's tools do:
// aeron:ipc reaches the server whose media driver runs there, not the one
// in the default directory; and when nothing answers, the error names the
// directory and that it came from $AERON_DIR.
func TestCLIAeronDir(t *testing.T) {
	dir := filepath.Join("/dev/shm", "goblin-cli-aerondir-"+strconv.Itoa(os.Getpid()))
	t.Cleanup(func() { os.RemoveAll(dir) })
	srv := testproc.Start(t, testproc.Build(t, "./cmd/goblin-server"), "--metrics", "off",
		"--listen", "aeron:ipc?proto=resp|dir="+dir)
	srv.WaitLog(t, `msg=ready`, 60*time.Second)
	t.Setenv("AERON_DIR", dir)
	runCLI(t, "", "--target", "aeron:ipc", "set", "where", "aerondir").expect(t, 0, "OK\n")
	runCLI(t, "", "--target", "aeron:ipc?dir="+dir, "get", "where").expect(t, 0, "\"aerondir\"\n")
	empty := t.TempDir()
	t.Setenv("AERON_DIR", empty)
	r := runCLI(t, "", "--timeout", "3s", "--target", "aeron:ipc", "ping")
	if r.code != exitConnect || !strings.Contains(r.stderr, empty) || !strings.Contains(r.stderr, "$AERON_DIR") {
		t.Fatalf("AERON_DIR naming no driver: exit %d, stderr %q; want exit 3 naming %s and $AERON_DIR", r.code, r.stderr, empty)
	}
}

// TestCLIClusterKeyless: with --cluster, flushall empties every node,
// dbsize and keys count every node, mget across slots answers in key
// order, one-node commands are refused, and a Unix-socket seed works.
func TestCLIClusterKeyless(t *testing.T) {
	t.Parallel()
	tc := testproc.StartGoblinCluster(t)
	seed := "tcp://" + tc.Addrs[0]
	cli := func(args ...string) cliResult {
		return runCLI(t, "", append([]string{"--cluster", "--target", seed}, args...)...)
	}
	script := ""
	for i := range 30 {
		script += "set c" + strconv.Itoa(i) + " v" + strconv.Itoa(i) + "\n"
	}
	if r := runCLI(t, script, "--cluster", "--target", seed); r.code != 0 {
		t.Fatalf("setting keys: exit %d, stderr %q", r.code, r.stderr)
	}
	cli("dbsize").expect(t, 0, "(integer) 30\n")
	if r := cli("keys", "*"); r.code != 0 || strings.Count(r.stdout, "\n") != 30 {
		t.Fatalf("keys *: exit %d, %d lines", r.code, strings.Count(r.stdout, "\n"))
	}
	cli("mget", "c1", "nope", "c2", "c3").expect(t, 0, "1) \"v1\"\n2) (nil)\n3) \"v2\"\n4) \"v3\"\n")
	if r := cli("scan", "0"); r.code != exitUsage || !strings.Contains(r.stderr, "one node") {
		t.Fatalf("scan: exit %d, stderr %q", r.code, r.stderr)
	}
	cli("flushall").expect(t, 0, "OK\n")
	for _, addr := range tc.Addrs {
		runCLI(t, "", "--target", addr, "dbsize").expect(t, 0, "(integer) 0\n")
	}
	// A Unix-socket seed (SBE): dialled as the socket, not tcp://<path>.
	runCLI(t, "", "--cluster", "--target", tc.Socks[0], "set", "u", "1").expect(t, 0, "OK\n")
	runCLI(t, "", "--cluster", "--target", seed, "get", "u").expect(t, 0, "\"1\"\n")
}
