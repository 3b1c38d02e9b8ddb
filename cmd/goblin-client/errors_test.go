package main

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// TestCLIErrors provokes real failures and checks what goblin-client
// prints: the whole error chain once (the words every layer added, none
// twice), the exit code, and the "Start it with goblin-server --listen"
// hint only when nothing listens at the target.
func TestCLIErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ringDir := filepath.Join(dir, "ring")
	sbeSock := filepath.Join(dir, "sbe.sock")
	srv := testproc.Start(t, testproc.Build(t, "./cmd/goblin-server"), "--metrics", "off",
		"--listen", "ring://"+ringDir+"?proto=sbe", "--listen", "uds://"+sbeSock+"?proto=sbe")
	srv.WaitLog(t, `msg=ready`, 60*time.Second)

	// A TCP port nothing listens on: one just closed.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := l.Addr().String()
	l.Close()
	missing := filepath.Join(dir, "nobody.sock")

	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string // each must appear in stderr
		not  []string // none may appear in stderr
		hint bool     // "Start it with: goblin-server --listen"
	}{
		{name: "nothing listens", args: []string{"--target", missing, "ping"}, code: exitConnect,
			want: []string{"cannot connect to uds://" + missing, "dial unix " + missing + ": connect: no such file or directory"},
			hint: true},
		{name: "refused TCP", args: []string{"--target", "tcp://" + refused, "ping"}, code: exitConnect,
			want: []string{"dial tcp " + refused + ": connect: connection refused"}, not: []string{"uds:"},
			hint: true},
		{name: "DNS failure", args: []string{"--timeout", "30s", "--target", "tcp://goblin-cli-test.invalid:6380", "ping"},
			code: exitConnect, want: []string{"lookup goblin-cli-test.invalid"}},
		{name: "wrong protocol", args: []string{"--target", "ring://" + ringDir + "?proto=resp", "ping"}, code: exitConnect,
			want: []string{"speaks sbe", "resp"}},
		{name: "aeron udp without control", args: []string{"--target", "aeron:udp?endpoint=127.0.0.1:40123", "ping"},
			code: exitUsage, want: []string{"needs control=HOST:PORT"}, not: []string{"bad configuration\n"}},
		{name: "command without SBE encoding", args: []string{"--target", sbeSock, "--proto", "sbe", "slowlog", "len"},
			code: exitUsage, want: []string{"no SBE encoding", "--proto resp"}, not: []string{"ERR unknown command"}},
		{name: "ring target with one slash", args: []string{"--target", "ring:" + ringDir, "ping"}, code: exitUsage,
			want: []string{"bad syntax", "ring:///" + strings.TrimPrefix(ringDir, "/")}, not: []string{"tcp://ring"}},
		{name: "unknown tcp parameter", args: []string{"--target", "tcp://" + refused + "?nosuch=1", "ping"}, code: exitUsage,
			want: []string{`unknown target parameter "nosuch"`, "proto=resp|sbe"}},
		{name: "unknown uds parameter", args: []string{"--target", "uds://" + sbeSock + "?nosuch=1", "ping"}, code: exitUsage,
			want: []string{`unknown target parameter "nosuch"`, "mode="}},
		{name: "unknown ring parameter", args: []string{"--target", "ring://" + ringDir + "?nosuch=1", "ping"}, code: exitUsage,
			want: []string{`unknown target parameter "nosuch"`, "wait"}},
		{name: "subcommand without SBE encoding", args: []string{"--target", sbeSock, "--proto", "sbe", "client", "nosuch"},
			code: exitUsage, want: []string{"no SBE encoding", "--proto resp"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, "", tc.args...)
			if r.code != tc.code || r.stdout != "" {
				t.Errorf("exit %d, stdout %q; want exit %d and nothing on stdout", r.code, r.stdout, tc.code)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q", w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(r.stderr, n) {
					t.Errorf("stderr has %q", n)
				}
			}
			if hint := strings.Contains(r.stderr, "goblin-server --listen"); hint != tc.hint {
				t.Errorf("start-a-server hint printed: %v, want %v", hint, tc.hint)
			}
			if seg := repeatedSegment(r.stderr); seg != "" {
				t.Errorf("%q is said twice", seg)
			}
			if t.Failed() {
				t.Logf("goblin-client %s\nstderr:\n%s", strings.Join(tc.args, " "), r.stderr)
			}
		})
	}
}

// repeatedSegment returns a part of an error line (the text between ": "
// separators) that occurs twice in that line, or "".
func repeatedSegment(out string) string {
	for _, line := range strings.Split(out, "\n") {
		seen := map[string]bool{}
		for _, seg := range strings.Split(line, ": ") {
			seg = strings.TrimSpace(seg)
			if seg == "" {
				continue
			}
			if seen[seg] {
				return seg
			}
			seen[seg] = true
		}
	}
	return ""
}

func TestRepeatedSegment(t *testing.T) {
	for in, want := range map[string]string{
		"uds: dial tcp 127.0.0.1:1: dial tcp 127.0.0.1:1: connect: connection refused": "dial tcp 127.0.0.1:1",
		"goblin-client: cannot connect to x: dial tcp 127.0.0.1:1: connect: refused":   "",
		"a: b\nb: c": "",
	} {
		if got := repeatedSegment(in); got != want {
			t.Errorf("repeatedSegment(%q) = %q, want %q", in, got, want)
		}
	}
}
