package engine

import (
	"fmt"
	"testing"

	"github.com/goblin-kv/goblin/proto"
)

// aclSessions returns an engine and n RESP sessions (n 0: one session
// of the default user, no ACL rules at all), the i-th authenticated as
// user app<i>, allowed PING and GET on key:* only.
func aclSessions(tb testing.TB, n int) (*Engine, []*Session) {
	e, rs, _ := benchEngine(tb)
	if n == 0 {
		return e, []*Session{rs}
	}
	var ss []*Session
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("app%d", i)
		if got := do(tb, e, rs, "ACL", "SETUSER", name, "on", ">pw", "~key:*", "~other:"+name+":*", "+ping", "+get"); got != "+OK" {
			tb.Fatalf("ACL SETUSER: %s", got)
		}
		s := NewSession(proto.RESP, nil)
		if got := do(tb, e, s, "AUTH", name, "pw"); got != "+OK" {
			tb.Fatalf("AUTH %s: %s", name, got)
		}
		ss = append(ss, s)
	}
	return e, ss
}

// BenchmarkACLCheck measures PING and GET through the engine (decode,
// ACL check, execute, encode) with no ACL (the default user; also with
// the slow log off, so no command is timed), one restricted user, and 100
// restricted users whose sessions take turns.
// Run: go test -run '^$' -bench BenchmarkACLCheck -benchmem ./engine/
func BenchmarkACLCheck(b *testing.B) {
	for _, h := range hotRequests() {
		if h.name == "SET" {
			continue
		}
		for _, users := range []int{-1, 0, 1, 100} {
			name := fmt.Sprintf("%s/users=%d", h.name, users)
			switch users {
			case 0:
				name = h.name + "/noACL"
			case -1:
				name = h.name + "/noACL-noSlowlog" // neither the ACL check's slow path nor the slow log's timing
			}
			b.Run(name, func(b *testing.B) {
				e, ss := aclSessions(b, max(users, 0))
				if users < 0 {
					do(b, e, ss[0], "CONFIG", "SET", "slowlog-log-slower-than", "-1")
				}
				out := make([]byte, 0, 256)
				b.ReportAllocs()
				b.ResetTimer()
				j := 0
				for i := 0; i < b.N; i++ {
					_, out, _ = e.ServeStream(ss[j], h.resp, out[:0])
					if j++; j == len(ss) {
						j = 0
					}
				}
				if string(out) != h.wantRESP {
					b.Fatalf("reply %q", out)
				}
			})
		}
	}
}

// TestACLCheckAllocs: the permission check allocates nothing, for the
// default user and for restricted users, allowed or denied (a denial
// with its ACL LOG entry may allocate; it is not the hot path).
func TestACLCheckAllocs(t *testing.T) {
	for _, users := range []int{0, 1, 100} {
		e, ss := aclSessions(t, users)
		for _, h := range hotRequests() {
			if h.name == "SET" {
				continue
			}
			out := make([]byte, 0, 256)
			i := 0
			a := testing.AllocsPerRun(500, func() {
				_, out, _ = e.ServeStream(ss[i%len(ss)], h.resp, out[:0])
				i++
			})
			if string(out) != h.wantRESP {
				t.Fatalf("%s with %d users: %q", h.name, users, out)
			}
			if a != 0 {
				t.Errorf("%s with %d users allocates %.1f times per request, want 0", h.name, users, a)
			}
		}
	}
	// A denied request answers NOPERM.
	e, ss := aclSessions(t, 1)
	if got := do(t, e, ss[0], "GET", "secret"); got != "-NOPERM this user has no permissions to access one of the keys used as arguments" {
		t.Fatalf("denied GET: %q", got)
	}
	if got := do(t, e, ss[0], "SET", "key:1", "v"); got != "-NOPERM this user has no permissions to run the 'set' command" {
		t.Fatalf("denied SET: %q", got)
	}
}
