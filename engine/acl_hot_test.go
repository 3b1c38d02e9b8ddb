package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/goblin-kv/goblin/acl"
	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/sbe"
)

// TestACLChangeReachesLiveHotSession: a change to a user's rules applies
// to its live sessions at their next request, on the hot path too (whose
// precomputed checks, acl.User.Checks, must be emptied): ACL SETUSER taking away a
// command, a key pattern or write access, an AUTH as another user on the
// same connection, over RESP and SBE. Each refusal answers NOPERM and
// adds an ACL LOG entry, as the general path's.
func TestACLChangeReachesLiveHotSession(t *testing.T) {
	const key, otherKey = "key:000000000042", "other:0000000001" // 8 bytes or more: the cache's prefix form covers them
	const (
		okGet      = "$v"
		noGet      = "-NOPERM this user has no permissions to run the 'get' command"
		noSet      = "-NOPERM this user has no permissions to run the 'set' command"
		noPing     = "-NOPERM this user has no permissions to run the 'ping' command"
		noKey      = "-NOPERM this user has no permissions to access one of the keys used as arguments"
		setUserApp = "ACL SETUSER app"
	)
	var c sbe.Codec
	for _, p := range []proto.Protocol{proto.RESP, proto.SBE} {
		t.Run(p.String(), func(t *testing.T) {
			e, _ := newEngine(t, Options{})
			admin := NewSession(proto.RESP, nil)
			setUser := func(rules ...string) {
				t.Helper()
				if got := do(t, e, admin, append([]string{"ACL", "SETUSER"}, rules...)...); got != "+OK" {
					t.Fatalf("ACL SETUSER %q: %s", rules, got)
				}
			}
			setUser("app", "on", ">pw", "~key:*", "+ping", "+get", "+set")
			setUser("other", "on", ">pw", "~other:*", "+ping", "+get", "+set")
			do(t, e, admin, "SET", key, "v")
			do(t, e, admin, "SET", otherKey, "v")
			s := NewSession(p, nil)
			// run sends one request as the session's client would, and
			// returns its reply as do's text; hot reports whether the
			// hot path's cache passed it (so the change had to reach
			// the cache, not only permit).
			run := func(op command.Op, args ...string) (reply string, hot bool) {
				t.Helper()
				r := command.Request{Op: op, CorrelationID: 9}
				if len(args) > 0 {
					r.Key = []byte(args[0])
				}
				if len(args) > 1 {
					r.Value = []byte(args[1])
				}
				if p == proto.RESP {
					reply = do(t, e, s, append([]string{command.Name(op)}, args...)...)
				} else {
					r.Version = 2
					r.Compact = op == command.OpPing // as the client sends it: plain's pong, when pingCheck passes
					n, out, _ := e.ServeStream(s, sbe.AppendFramed(nil, &c, &r), nil)
					msg, _, err := sbe.ReadFrame(out, 0)
					if n == 0 || err != nil {
						t.Fatalf("%s %q over SBE: consumed %d, %v", command.Name(op), args, n, err)
					}
					var rep command.Reply
					if err := c.DecodeReply(msg, &rep); err != nil {
						t.Fatal(err)
					}
					reply = sbeText(&rep)
				}
				hot = hotCheck(s.user, &r)
				if op == command.OpPing && e.plain(s) != hot {
					t.Fatalf("PING: plain %v, hotCheck %v", e.plain(s), hot)
				}
				return reply, hot
			}
			auth := func(name string) {
				t.Helper()
				got := ""
				if p == proto.RESP {
					got = do(t, e, s, "AUTH", name, "pw")
				} else {
					out, _ := e.ServeMessage(s, c.AppendRequest(nil, &command.Request{Op: command.OpAuth, Key: []byte(name), Value: []byte("pw")}), nil)
					var rep command.Reply
					if err := c.DecodeReply(out, &rep); err != nil {
						t.Fatal(err)
					}
					got = sbeText(&rep)
				}
				if got != "+OK" || s.user.Name() != name {
					t.Fatalf("AUTH %s: %s, the session's user %q", name, got, s.user.Name())
				}
			}
			auth("app")
			for _, step := range []struct {
				change []string // ACL SETUSER app ... before the request; nil: none
				auth   string   // AUTH as this user before the request
				op     command.Op
				args   []string
				want   string
				hot    bool // passed by the session's cache
			}{
				{op: command.OpGet, args: []string{key}, want: okGet, hot: true},
				{op: command.OpPing, want: "+PONG", hot: true},
				{change: []string{"-get"}, op: command.OpGet, args: []string{key}, want: noGet},
				{change: []string{"+get"}, op: command.OpGet, args: []string{key}, want: okGet, hot: true},
				{change: []string{"resetkeys", "~other:*"}, op: command.OpGet, args: []string{key}, want: noKey},
				{change: []string{"resetkeys", "%R~key:*"}, op: command.OpGet, args: []string{key}, want: okGet, hot: true},
				{op: command.OpSet, args: []string{key, "v"}, want: noKey},
				{change: []string{"~key:*"}, op: command.OpSet, args: []string{key, "v"}, want: "+OK", hot: true},
				{change: []string{"-set"}, op: command.OpSet, args: []string{key, "v"}, want: noSet},
				{change: []string{"-ping"}, op: command.OpPing, want: noPing},
				{change: []string{"+ping"}, op: command.OpPing, want: "+PONG", hot: true},
				{change: []string{"allkeys", "+@all"}, op: command.OpSet, args: []string{key, "v"}, want: "+OK", hot: true},
				{auth: "other", op: command.OpGet, args: []string{key}, want: noKey},
				{op: command.OpGet, args: []string{otherKey}, want: okGet, hot: true},
			} {
				if step.change != nil {
					setUser(append([]string{"app"}, step.change...)...)
				}
				if step.auth != "" {
					auth(step.auth)
				}
				e.aclLog.Reset()
				got, hot := run(step.op, step.args...)
				if got != step.want {
					t.Fatalf("after %s %q (auth %q): %s %q answered %q, want %q",
						setUserApp, step.change, step.auth, command.Name(step.op), step.args, got, step.want)
				}
				if hot != step.hot {
					t.Errorf("after %s %q (auth %q): %s %q passed by the hot path's cache: %v, want %v",
						setUserApp, step.change, step.auth, command.Name(step.op), step.args, hot, step.hot)
				}
				if denied := got[0] == '-'; denied != (e.aclLog.Len() == 1) {
					t.Errorf("after %s %q (auth %q): %s %q answered %q and left %d ACL LOG entries",
						setUserApp, step.change, step.auth, command.Name(step.op), step.args, got, e.aclLog.Len())
				}
			}
		})
	}
}

// TestHotCheckAgreesWithHotPermit: for random rules and keys, hotReady's
// check of a restricted user (hotCheck, then hotPermitSlow, which fills
// the user's precomputed checks) answers exactly as hotPermit, and
// hotCheck alone passes only what hotPermit passes, the usual forms
// included once the slot is filled.
func TestHotCheckAgreesWithHotPermit(t *testing.T) {
	e, _ := newEngine(t, Options{})
	rng := rand.New(rand.NewPCG(34, 9))
	cmdRules := []string{"+ping", "+get", "+set", "-get", "-set", "+@read", "+@write", "+@all", "-@all", "allcommands", "nocommands"}
	keyRules := []string{"~key:*", "%R~key:*", "%W~key:*", "~k*", "~*", "%R~*", "allkeys", "resetkeys",
		"~tenant:acme:*", "~key:0000000000*", "~key?*", "~key:00000000", "~12345678*", "~1234567*"}
	keys := []string{"key:000000000042", "key:1", "key:", "k", "", "key:00000000", "key:000000001", "12345678",
		"123456789", "1234567", "tenant:acme:1", "other:000000001", "KEY:000000000042"}
	passed := 0
	for i := 0; i < 2000; i++ {
		rules := []string{"on"}
		for n := rng.IntN(4); n >= 0; n-- {
			rules = append(rules, cmdRules[rng.IntN(len(cmdRules))])
		}
		for n := rng.IntN(3); n >= 0; n-- {
			rules = append(rules, keyRules[rng.IntN(len(keyRules))])
		}
		if rng.IntN(4) == 0 { // a second selector
			rules = append(rules, fmt.Sprintf("(%s %s)", cmdRules[rng.IntN(len(cmdRules))], keyRules[rng.IntN(len(keyRules))]))
		}
		u, err := acl.NewUsers(acl.CommandTable()).SetUser("u", rules...)
		if err != nil {
			continue // a rule the random mix made invalid
		}
		s := NewSession(proto.RESP, nil)
		s.user, s.authed = u, true
		for _, op := range []command.Op{command.OpPing, command.OpGet, command.OpSet} {
			for _, k := range keys {
				r := command.Request{Op: op, Key: []byte(k)}
				if op == command.OpPing {
					r.Key = nil
				}
				exact := hotPermit(u, &r)
				if got := hotCheck(u, &r) || e.hotPermitSlow(s, &r); got != exact {
					t.Fatalf("rules %q: %s %q: hotReady's check says %v, hotPermit %v", rules, command.Name(op), k, got, exact)
				}
				if hotCheck(u, &r) {
					if !exact {
						t.Fatalf("rules %q: %s %q passed by hotCheck, refused by hotPermit", rules, command.Name(op), k)
					}
					passed++
				}
			}
		}
	}
	if passed == 0 {
		t.Fatal("the random rules never let hotCheck pass a request")
	}
}
