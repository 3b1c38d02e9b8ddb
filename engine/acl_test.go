package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto"
)

// TestACLFile: the aclfile is read at start (LoadACLFile), ACL SAVE
// writes the users back in ACL LIST's lines, ACL LOAD replaces them all
// or none (a bad file changes nothing and names file and line), and the
// clients of users that are gone after a LOAD or a DELUSER are closed at
// their next request while the default user's clients stay.
func TestACLFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.acl")
	if err := os.WriteFile(path, []byte("user app on >pw ~app:* +get\n\nuser default on nopass ~* &* +@all\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e, _ := newEngine(t, Options{ACLFile: path})
	if err := e.LoadACLFile(); err != nil {
		t.Fatal(err)
	}
	admin := e.Open(proto.RESP, nil)
	app := e.Open(proto.RESP, nil)
	if got := do(t, e, app, "AUTH", "app", "pw"); got != "+OK" {
		t.Fatalf("AUTH app from the aclfile: %q", got)
	}
	if got := do(t, e, app, "GET", "app:1"); got != "nil" {
		t.Fatalf("GET as app: %q", got)
	}
	if got := do(t, e, admin, "ACL", "SETUSER", "ops", "on", ">o", "+@all", "~*"); got != "+OK" {
		t.Fatal(got)
	}
	if got := do(t, e, admin, "ACL", "SAVE"); got != "+OK" {
		t.Fatalf("ACL SAVE: %q", got)
	}
	saved, _ := os.ReadFile(path)
	want := "user app on #" // the password saved as its hash
	if !strings.HasPrefix(string(saved), want) || !strings.Contains(string(saved), "\nuser ops on #") {
		t.Fatalf("ACL SAVE wrote:\n%s", saved)
	}
	// A bad file: nothing changes, and the error names file and line.
	os.WriteFile(path, []byte("user app on >pw +nosuch\nnot a user line\n"), 0o600)
	got := do(t, e, admin, "ACL", "LOAD")
	if !strings.Contains(got, path+":1: Error in applying operation '+nosuch'") || !strings.Contains(got, path+":2 should start with user keyword") {
		t.Fatalf("ACL LOAD of a bad file: %q", got)
	}
	if got := do(t, e, admin, "ACL", "USERS"); !strings.Contains(got, "ops") || !strings.Contains(got, "app") {
		t.Fatalf("users after a failed LOAD: %q", got)
	}
	// A good file without app: app's client goes, default's stays.
	os.WriteFile(path, []byte("user other on >x ~* +@all\n"), 0o600)
	if got := do(t, e, admin, "ACL", "LOAD"); got != "+OK" {
		t.Fatalf("ACL LOAD: %q", got)
	}
	if _, _, closed := e.ServeStream(app, []byte("PING\r\n"), nil); !closed {
		t.Fatal("app's client, whose user ACL LOAD removed, was not closed")
	}
	if got := do(t, e, admin, "PING"); got != "+PONG" {
		t.Fatalf("default's client after ACL LOAD: %q", got)
	}
	// DELUSER closes its users' clients too.
	other := e.Open(proto.RESP, nil)
	do(t, e, other, "AUTH", "other", "x")
	if got := do(t, e, admin, "ACL", "DELUSER", "other"); got != ":1" {
		t.Fatalf("ACL DELUSER: %q", got)
	}
	if _, _, closed := e.ServeStream(other, []byte("PING\r\n"), nil); !closed {
		t.Fatal("the client of a deleted user was not closed")
	}
	// A bad aclfile refuses the start.
	os.WriteFile(path, []byte("user x on +bogus\n"), 0o600)
	e2, _ := newEngine(t, Options{ACLFile: path})
	if err := e2.LoadACLFile(); err == nil || !strings.Contains(err.Error(), path+":1:") {
		t.Fatalf("LoadACLFile of a bad file: %v", err)
	}
}

// TestDefaultUserPassword: protected mode's test (DefaultUserNoPass)
// follows the default user whichever way it gets a password:
// requirepass, CONFIG SET requirepass, or ACL SETUSER default.
func TestDefaultUserPassword(t *testing.T) {
	e, _ := newEngine(t, Options{})
	s := e.Open(proto.RESP, nil)
	if !e.DefaultUserNoPass() {
		t.Fatal("a fresh engine's default user has a password")
	}
	do(t, e, s, "ACL", "SETUSER", "default", ">pw")
	if e.DefaultUserNoPass() {
		t.Fatal("ACL SETUSER default >pw left it without a password")
	}
	do(t, e, s, "CONFIG", "SET", "requirepass", "")
	if !e.DefaultUserNoPass() {
		t.Fatal(`CONFIG SET requirepass "" did not give nopass back`)
	}
	e2, _ := newEngine(t, Options{RequirePass: "x"})
	if e2.DefaultUserNoPass() {
		t.Fatal("Options.RequirePass did not set the default user's password")
	}
	if got := do(t, e2, e2.Open(proto.RESP, nil), "GET", "k"); got != "-NOAUTH Authentication required." {
		t.Fatalf("GET before AUTH with requirepass: %q", got)
	}
}

// TestACLShapesMatchRequestKeys: the shape permit's fast path takes for
// each command (aclShapes) is what the full check would find in a
// request: no key for a keyless command, Request.Key alone with the
// shape's permissions for a one-key command (SET with and without GET).
func TestACLShapesMatchRequestKeys(t *testing.T) {
	e, _ := newEngine(t, Options{})
	args := [][]byte{[]byte("a1"), []byte("a2"), []byte("a3"), []byte("a4")}
	fast := 0
	for _, op := range command.All() {
		sh := aclShapes[op]
		spec := command.Lookup(op)
		for _, get := range []bool{false, true} {
			r := command.Request{Op: op, Key: []byte("k"), Args: args, Amount: 2}
			want := sh.flags
			if get {
				r.Flags |= command.FlagGet
			}
			if sh.kind == shapeSet {
				want = setFlags[b2i(get)]
			}
			e.argv = nil
			keys := e.requestKeys(&r, spec)
			switch sh.kind {
			case shapeKeyless:
				fast++
				if len(keys) != 0 {
					t.Errorf("%s: keyless shape, the full check finds %d keys", command.Name(op), len(keys))
				}
			case shapeOneKey, shapeSet:
				fast++
				if len(keys) != 1 || string(keys[0].Name) != "k" || keys[0].Flags != want {
					t.Errorf("%s: one-key shape with flags %v, the full check finds %+v", command.Name(op), want, keys)
				}
			}
		}
	}
	if aclShapes[command.OpGet].kind != shapeOneKey || aclShapes[command.OpPing].kind != shapeKeyless || aclShapes[command.OpSet].kind != shapeSet {
		t.Fatalf("GET, PING or SET lost its fast shape: %+v %+v %+v", aclShapes[command.OpGet], aclShapes[command.OpPing], aclShapes[command.OpSet])
	}
	t.Logf("%d of %d commands take the fast check", fast/2, len(command.All()))
}
