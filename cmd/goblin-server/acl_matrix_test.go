package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/client"
	"github.com/goblin-kv/goblin/internal/testkit/testcerts"
	"github.com/goblin-kv/goblin/transport/uds"
)

// TestACLMatrix runs every command of a small set on every key class as
// each of four users, over a Unix socket (RESP), TCP (RESP and SBE), TLS
// (RESP and SBE) and the shared-memory ring (SBE) of one real
// goblin-server, and checks each
// outcome: allowed, or NOPERM naming the command or the keys, or, for a
// user that is off, WRONGPASS at AUTH. The server requires a password,
// so an unauthenticated client gets NOAUTH on every transport first.
func TestACLMatrix(t *testing.T) {
	t.Parallel() // its own processes, sockets and directories; it times nothing
	dir := t.TempDir()
	ring := "ring://" + filepath.Join(dir, "ring") + "?proto=sbe"
	f, err := testcerts.Write(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, "--listen", ring, "--listen", "tls://127.0.0.1:0", "--requirepass", "dpw",
		"--tls-cert-file", f.ServerCert, "--tls-key-file", f.ServerKey, "--tls-ca-cert-file", f.CACert)
	tlsAddr := s.p.WaitLog(t, `msg=listening target="?tls://([^?"]+)`, startTimeout)
	tlsCfg, err := uds.ClientTLSConfig(uds.ClientTLSFiles{CACert: f.CACert, Cert: f.ClientCert, Key: f.ClientKey})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	targets := []struct {
		name, target string
		opts         client.Options
	}{
		{"uds", "uds://" + s.sock, client.Options{}}, {"tcp", "tcp://" + s.tcp, client.Options{}},
		{"tcp-sbe", "tcp://" + s.tcp + "?proto=sbe", client.Options{}},
		{"tls", "tls://" + tlsAddr, client.Options{TLS: tlsCfg}}, {"tls-sbe", "tls://" + tlsAddr + "?proto=sbe", client.Options{TLS: tlsCfg}},
		{"ring", ring, client.Options{}},
	}

	admin, err := client.Dial(ctx, targets[0].target)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	mustDo := func(c *client.Client, args ...any) client.Value {
		t.Helper()
		v, err := c.Do(ctx, args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return v
	}
	mustDo(admin, "AUTH", "dpw")
	for _, u := range [][]any{
		{"reader", "on", ">rp", "~pub:*", "+@read", "+ping"},
		{"writer", "on", ">wp", "~own:*", "%R~pub:*", "+get", "+set", "+del", "+ping"},
		{"admin", "on", ">ap", "~*", "+@all"},
		{"offuser", "off", ">op", "~*", "+@all"},
	} {
		mustDo(admin, append([]any{"ACL", "SETUSER"}, u...)...)
	}

	const (
		ok     = "OK"
		denCmd = "NOPERM this user has no permissions to run the '%s' command"
		denKey = "NOPERM this user has no permissions to access one of the keys used as arguments"
	)
	cmds := [][]any{
		{"GET", "pub:1"}, {"GET", "own:1"}, {"SET", "pub:1", "v"}, {"SET", "own:1", "v"},
		{"DEL", "own:1"}, {"CONFIG", "GET", "maxmemory"}, {"PING"},
	}
	names := []string{"get", "get", "set", "set", "del", "config|get", "ping"}
	// want[user][command]: ok, "cmd" or "key".
	want := map[string][]string{
		"reader": {ok, "key", "cmd", "cmd", "cmd", "cmd", ok},
		"writer": {ok, ok, "key", ok, ok, "cmd", ok},
		"admin":  {ok, ok, ok, ok, ok, ok, ok},
	}
	pass := map[string]string{"reader": "rp", "writer": "wp", "admin": "ap", "offuser": "op"}
	checked := 0
	for _, tr := range targets {
		c, err := tr.opts.Dial(ctx, tr.target)
		if err != nil {
			t.Fatalf("%s: %v", tr.name, err)
		}
		if _, err := c.Do(ctx, "GET", "pub:1"); err == nil || !strings.Contains(err.Error(), "NOAUTH Authentication required.") {
			t.Errorf("%s: unauthenticated GET: %v, want NOAUTH", tr.name, err)
		}
		if _, err := c.Do(ctx, "AUTH", "offuser", pass["offuser"]); err == nil || !strings.Contains(err.Error(), "WRONGPASS invalid username-password pair or user is disabled.") {
			t.Errorf("%s: AUTH as a user that is off: %v, want WRONGPASS", tr.name, err)
		}
		c.Close()
		for _, user := range []string{"reader", "writer", "admin"} {
			c, err := tr.opts.Dial(ctx, tr.target)
			if err != nil {
				t.Fatalf("%s: %v", tr.name, err)
			}
			if _, err := c.Do(ctx, "AUTH", user, pass[user]); err != nil {
				t.Fatalf("%s: AUTH %s: %v", tr.name, user, err)
			}
			for i, cmd := range cmds {
				_, err := c.Do(ctx, cmd...)
				var got string
				switch {
				case err == nil:
					got = ok
				case strings.Contains(err.Error(), fmt.Sprintf(denCmd, names[i])):
					got = "cmd"
				case strings.Contains(err.Error(), denKey):
					got = "key"
				default:
					got = err.Error()
				}
				if got != want[user][i] {
					t.Errorf("%s as %s: %v: %q, want %q", tr.name, user, cmd, got, want[user][i])
				}
				checked++
			}
			c.Close()
		}
	}
	// Every denial is in the ACL LOG, whatever the transport: reader and
	// writer are refused 6 times per transport (grouped by the log into
	// entries with counts), and one AUTH as offuser per transport failed.
	entries := mustDo(admin, "ACL", "LOG", "100")
	denials := map[string]int64{}
	for _, e := range entries.Array {
		var reason, user string
		var count int64
		for i := 0; i+1 < len(e.Array); i += 2 {
			switch string(e.Array[i].Str) {
			case "reason":
				reason = string(e.Array[i+1].Str)
			case "username":
				user = string(e.Array[i+1].Str)
			case "count":
				count = e.Array[i+1].Int
			}
		}
		denials[user+"/"+reason] += count
	}
	n := int64(len(targets))
	if denials["reader/command"] != n*4 || denials["reader/key"] != n || denials["writer/command"] != n ||
		denials["writer/key"] != n || denials["offuser/auth"] != n {
		t.Errorf("ACL LOG denials by user and reason: %v (log: %s)", denials, entries.String())
	}
	t.Logf("%d user × command × key × transport cases checked", checked)
}
