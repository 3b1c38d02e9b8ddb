package acl

import (
	"bytes"
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/internal/glob"
)

// FuzzSetUser feeds space-separated rules to SetUser. Whatever it
// accepts must describe itself in a form that, saved and loaded as an
// aclfile, gives the same description and the same permission answers.
func FuzzSetUser(f *testing.F) {
	for _, s := range []string{
		"on >pass ~a* &c +get",
		"+@all -@dangerous -get +client|list",
		"%R~r* %W~w* %RW~rw ~x allkeys resetkeys",
		"(+get ~a) (+set %W~b) clearselectors",
		"+select|0 +select|1 -@all +select|2",
		"#5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8 !5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8",
		"reset nopass resetpass skip-sanitize-payload allcommands nocommands",
		"+@read +@write -@keyspace +config|get -config +config",
		"%R %~x %RR~x ~* ~x &* &y (+get",
		"allchannels resetchannels &a &a +@pubsub",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rules string) {
		users := NewUsers(goblinTable)
		ops := strings.Split(rules, " ")
		u, err := users.SetUser("u", ops...)
		if err != nil {
			if users.Get("u") != nil {
				t.Fatalf("a refused SetUser created the user")
			}
			return
		}
		desc := u.Describe()
		if strings.ContainsAny(desc, "()\"'\x00\t\r\n\v\f") && len(u.sels) == 1 || strings.ContainsAny(desc, "\"'\x00\t\r\n\v\f") {
			return // patterns with parentheses or quotes do not survive the line format, in Redis either
		}
		for i := 1; i < len(u.sels); i++ {
			if strings.ContainsAny(u.sels[i].info(goblinTable).Keys+u.sels[i].info(goblinTable).Channels, "()") {
				return
			}
		}
		var buf bytes.Buffer
		users.Save(&buf)
		again := NewUsers(goblinTable)
		if err := again.Load(&buf, "fuzz"); err != nil {
			t.Fatalf("rules %q: loading %q: %v", rules, desc, err)
		}
		v := again.Get("u")
		if got := v.Describe(); got != desc {
			t.Fatalf("rules %q: described %q, reloaded as %q", rules, desc, got)
		}
		keys := [][]Key{nil, {{Name: []byte("a1"), Flags: KeyRead}}, {{Name: []byte("b"), Flags: KeyWrite}}, {{Name: []byte("x"), Flags: KeyRead | KeyWrite}}}
		for id := 0; id < goblinTable.Len(); id++ {
			for _, k := range keys {
				if a, slow := u.Allowed(id, []byte("0"), k, nil), u.check(id, []byte("0"), k, nil); a != slow {
					t.Fatalf("rules %q: %s %v: Allowed %+v, the full check %+v", rules, goblinTable.Name(id), k, a, slow)
				}
				if a, b := u.Allowed(id, []byte("0"), k, nil), v.Allowed(id, []byte("0"), k, nil); a != b {
					t.Fatalf("rules %q: %s %v: %+v before saving, %+v after", rules, goblinTable.Name(id), k, a, b)
				}
			}
		}
	})
}

// FuzzKeyPattern holds the key check's shortcuts (literal prefix,
// prefix-and-star) to glob.Match, which is Redis's matcher.
func FuzzKeyPattern(f *testing.F) {
	for _, s := range [][2]string{{"user:*", "user:1"}, {"user:*", "user:"}, {"*", ""}, {"a?c*", "abcd"}, {"[a-c]x", "bx"}, {"a\\*", "a*"}, {"x*", "x"}, {"", ""}, {"ab", "ab"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, key string) {
		if hasSpace(pattern) {
			return
		}
		s := selector{keys: []keyPattern{newKeyPattern(pattern, keyAll)}}
		got := s.keyAllowed(&Key{Name: []byte(key), Flags: KeyRead})
		if want := glob.MatchString(pattern, key); got != want {
			t.Fatalf("pattern %q key %q: keyAllowed %v, glob.Match %v", pattern, key, got, want)
		}
	})
}
