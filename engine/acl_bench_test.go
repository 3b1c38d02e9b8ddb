package engine

import (
	"fmt"
	"testing"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/sbe"
)

// aclSessions returns an engine and n sessions speaking p (n 0: one
// session of the default user, no ACL rules at all), the i-th
// authenticated as user app<i>, allowed PING, GET and SET on key:* and
// other:app<i>:* only.
func aclSessions(tb testing.TB, n int, p proto.Protocol) (*Engine, []*Session) {
	e, rs, sbeS := benchEngine(tb)
	if n == 0 {
		if p == proto.SBE {
			return e, []*Session{sbeS}
		}
		return e, []*Session{rs}
	}
	var c sbe.Codec
	var ss []*Session
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("app%d", i)
		if got := do(tb, e, rs, "ACL", "SETUSER", name, "on", ">pw", "~key:*", "~other:"+name+":*", "+ping", "+get", "+set"); got != "+OK" {
			tb.Fatalf("ACL SETUSER: %s", got)
		}
		s := NewSession(p, nil)
		if p == proto.SBE {
			e.ServeMessage(s, c.AppendRequest(nil, &command.Request{Op: command.OpAuth, Key: []byte(name), Value: []byte("pw")}), nil)
		} else if got := do(tb, e, s, "AUTH", name, "pw"); got != "+OK" {
			tb.Fatalf("AUTH %s: %s", name, got)
		}
		if s.user.Name() != name {
			tb.Fatalf("AUTH %s: the session's user is %q", name, s.user.Name())
		}
		ss = append(ss, s)
	}
	return e, ss
}

// BenchmarkACLCheck measures PING, GET and SET through the engine
// (decode, ACL check, execute, encode), in RESP and SBE (framed, as on a
// socket), with no ACL (the default user; in RESP also with the slow log
// off, so no command is timed), one restricted user, and 100 restricted
// users whose sessions take turns. The restricted users' key patterns are
// "~key:*" and one of their own: the hot path's precomputed check
// (acl.KeyChecks) passes the benchmark's key by its prefix.
// Run: go test -run '^$' -bench BenchmarkACLCheck -benchmem ./engine/
// In instructions (the figure to compare):
// benchmarks/instructions.sh ./engine '^BenchmarkACLCheck$/^GET$/^users=1$'
func BenchmarkACLCheck(b *testing.B) {
	var c sbe.Codec
	for _, h := range hotRequests() {
		for _, p := range []proto.Protocol{proto.RESP, proto.SBE} {
			for _, users := range []int{-1, 0, 1, 100} {
				prefix := ""
				if p == proto.SBE {
					if users < 0 {
						continue
					}
					prefix = "SBE-"
				}
				name := fmt.Sprintf("%s/%susers=%d", h.name, prefix, users)
				switch users {
				case 0:
					name = h.name + "/" + prefix + "noACL"
				case -1:
					name = h.name + "/noACL-noSlowlog" // neither the ACL check's slow path nor the slow log's timing
				}
				b.Run(name, func(b *testing.B) {
					e, ss := aclSessions(b, max(users, 0), p)
					if users < 0 {
						do(b, e, ss[0], "CONFIG", "SET", "slowlog-log-slower-than", "-1")
					}
					in := h.resp
					if p == proto.SBE {
						in = h.sbeFramed
					}
					out := make([]byte, 0, 256)
					b.ReportAllocs()
					b.ResetTimer()
					j := 0
					for i := 0; i < b.N; i++ {
						_, out, _ = e.ServeStream(ss[j], in, out[:0])
						if j++; j == len(ss) {
							j = 0
						}
					}
					b.StopTimer()
					if p == proto.RESP && string(out) != h.wantRESP {
						b.Fatalf("reply %q", out)
					}
					if p == proto.SBE {
						var rep command.Reply
						msg, _, err := sbe.ReadFrame(out, 0)
						if err == nil {
							err = c.DecodeReply(msg, &rep)
						}
						if err != nil || rep.Kind != h.wantSBEKind {
							b.Fatalf("reply %+v %v", rep, err)
						}
					}
				})
			}
		}
	}
}

// TestACLCheckAllocs: the permission check allocates nothing, for the
// default user and for restricted users, allowed or denied (a denial
// with its ACL LOG entry may allocate; it is not the hot path).
func TestACLCheckAllocs(t *testing.T) {
	for _, p := range []proto.Protocol{proto.RESP, proto.SBE} {
		for _, users := range []int{0, 1, 100} {
			e, ss := aclSessions(t, users, p)
			for _, h := range hotRequests() {
				in := h.resp
				if p == proto.SBE {
					in = h.sbeFramed
				}
				out := make([]byte, 0, 256)
				i := 0
				a := testing.AllocsPerRun(500, func() {
					_, out, _ = e.ServeStream(ss[i%len(ss)], in, out[:0])
					i++
				})
				if p == proto.RESP && string(out) != h.wantRESP {
					t.Fatalf("%s with %d users: %q", h.name, users, out)
				}
				if a != 0 {
					t.Errorf("%s %s with %d users allocates %.1f times per request, want 0", p, h.name, users, a)
				}
			}
		}
	}
	// A denied request answers NOPERM.
	e, ss := aclSessions(t, 1, proto.RESP)
	if got := do(t, e, ss[0], "GET", "secret"); got != "-NOPERM this user has no permissions to access one of the keys used as arguments" {
		t.Fatalf("denied GET: %q", got)
	}
	if got := do(t, e, ss[0], "DEL", "key:1"); got != "-NOPERM this user has no permissions to run the 'del' command" {
		t.Fatalf("denied DEL: %q", got)
	}
}
