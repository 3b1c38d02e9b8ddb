package acl

import (
	"math/rand/v2"
	"testing"
)

// TestKeyCheckNeverWiderThanAllowsKey: for random users and keys, a
// precomputed check (KeyCheck, CommandCheck) passes only what AllowsKey
// or AllowsCommand allows, passes what they allow in the forms it covers
// (any key; a pattern "*" or "prefix*", of at most 7 bytes, with a key of
// 8 bytes or more), and every change to the rules empties the user's
// Checks.
func TestKeyCheckNeverWiderThanAllowsKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 9))
	tab := goblinTable
	get, _ := tab.ID("get")
	set, _ := tab.ID("set")
	ping, _ := tab.ID("ping")
	cmdRules := []string{"+get", "+set", "-get", "+ping", "-ping", "+@read", "+@write", "-@write", "+@all", "-@all",
		"allcommands", "nocommands"}
	keyRules := []string{"~key:*", "%R~key:*", "%W~key:*", "~k*", "~*", "%R~*", "allkeys", "resetkeys",
		"~tenant:acme:*", "~key:0000000000*", "~key?*", "~key:00000000", "~12345678*", "~1234567*", "~[k]ey:*"}
	keys := []string{"key:000000000042", "key:1", "key:", "k", "", "key:00000000", "key:000000001", "12345678",
		"123456789", "1234567", "tenant:acme:1", "other:000000001", "KEY:000000000042"}
	flagSets := []KeyFlags{KeyRead, KeyWrite, KeyRead | KeyWrite}
	passed := 0
	for n := 0; n < 2000; n++ {
		users := NewUsers(tab)
		var rules []string
		for i := rng.IntN(4); i >= 0; i-- {
			rules = append(rules, cmdRules[rng.IntN(len(cmdRules))])
		}
		for i := rng.IntN(3); i >= 0; i-- {
			rules = append(rules, keyRules[rng.IntN(len(keyRules))])
		}
		if rng.IntN(4) == 0 {
			rules = append(rules, "("+cmdRules[rng.IntN(len(cmdRules))]+" "+keyRules[rng.IntN(len(keyRules))]+")")
		}
		u, err := users.SetUser("u", rules...)
		if err != nil {
			continue // a refused combination (~x after allkeys)
		}
		for _, id := range []int{get, set, ping} {
			c := u.CommandCheck(id)
			u.Checks().Set(6, c)
			if c.Passes(nil) != u.AllowsCommand(id) || u.Checks().Passes(6, nil) != c.Passes(nil) || u.Checks().PassesNoKey(6) != c.Passes(nil) {
				t.Fatalf("rules %q: CommandCheck(%s) passes %v, AllowsCommand says %v", rules, tab.Name(id), c.Passes(nil), u.AllowsCommand(id))
			}
			for _, f := range flagSets {
				u.Checks().Set(5, u.KeyCheck(id, f))
				for _, k := range keys {
					if u.Checks().Passes(5, []byte(k)) {
						if !u.AllowsKey(id, []byte(k), f) {
							t.Fatalf("rules %q: KeyCheck(%s, %v) passes %q, AllowsKey refuses it", rules, tab.Name(id), f, k)
						}
						passed++
					}
				}
			}
		}
	}
	if passed == 0 {
		t.Fatal("no precomputed check passed a key")
	}
	// The forms a KeyCheck covers, which it must pass.
	for _, tc := range []struct {
		rules []string
		flags KeyFlags
		key   string
	}{
		{[]string{"+get", "allkeys"}, KeyRead, ""},
		{[]string{"+get", "~*"}, KeyRead, ""},
		{[]string{"+get", "%R~*"}, KeyRead, "12345678"},
		{[]string{"+get", "%R~key:*"}, KeyRead, "key:000000000042"},
		{[]string{"+get", "~other:*", "%W~key:*"}, KeyWrite, "key:000000000042"},
		{[]string{"+get", "~tenant:acme:*", "~key:*"}, KeyRead, "key:000000000042"}, // the shortest prefix
		{[]string{"+get", "~1234567*"}, KeyRead, "12345678"},
		{[]string{"(~key:* +get)"}, KeyRead, "key:000000000042"},
	} {
		u, err := NewUsers(tab).SetUser("u", tc.rules...)
		if err != nil {
			t.Fatal(err)
		}
		if c := u.KeyCheck(get, tc.flags); !c.Passes([]byte(tc.key)) {
			t.Errorf("rules %q: KeyCheck(get, %v) refuses %q", tc.rules, tc.flags, tc.key)
		}
	}
	// A change to the rules empties the user's Checks, in place.
	users := NewUsers(tab)
	u, _ := users.SetUser("u", "on", "+get", "~key:*")
	u.Checks().Set(3, u.KeyCheck(get, KeyRead))
	if !u.Checks().Known(3) || !u.Checks().Passes(3, []byte("key:000000000042")) {
		t.Fatal("KeyCheck(get) refuses key:000000000042")
	}
	if v, _ := users.SetUser("u", "-get"); v != u || u.Checks().Known(3) || u.Checks().Passes(3, []byte("key:000000000042")) {
		t.Fatalf("after ACL SETUSER u -get the user's check is still there: %+v", u.Checks())
	}
	// The zero User (a session not yet authenticated) has checks that
	// pass nothing.
	var zero User
	c, k := zero.CommandCheck(ping), zero.KeyCheck(get, KeyRead)
	if zero.Checks().Passes(0, nil) || zero.Checks().Passes(3, []byte("key:000000000042")) || c.Passes(nil) || k.Passes([]byte("key:000000000042")) {
		t.Fatal("the zero User's checks pass a request")
	}
}
