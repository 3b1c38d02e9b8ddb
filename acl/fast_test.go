package acl

import (
	"math/rand/v2"
	"testing"
)

// TestFastChecksAgreeWithAllowed: for random users (rules drawn from
// commands, categories, key patterns with and without permissions,
// selectors, allkeys and nocommands) and random commands and keys, the
// fast checks the engine makes first answer exactly as Allowed does with
// no first argument and no channel: AllowsCommand for a command with no
// key, AllowsKey for one key with each permission.
func TestFastChecksAgreeWithAllowed(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 7))
	tab := goblinTable
	cmdRules := []string{"+get", "+set", "-get", "+ping", "+@read", "+@write", "-@write", "+@all", "-@all",
		"+@string", "-@dangerous", "allcommands", "nocommands", "+client|list", "+config", "-config|set",
		"+select|0", "+@keyspace", "-@keyspace"}
	keyRules := []string{"~key:*", "~a*", "%R~r*", "%W~w*", "%RW~rw:*", "~x", "~k?y", "~[ab]c", "allkeys",
		"resetkeys", "~*", "%R~*", "~key:1", "~te\\*st"}
	keys := []string{"", "key:", "key:1", "key:12", "abc", "a", "r1", "w1", "rw:1", "x", "kxy", "ky", "ac", "bc",
		"cc", "te*st", "test", "other"}
	flagSets := []KeyFlags{0, KeyRead, KeyWrite, KeyRead | KeyWrite}
	checks := 0
	for n := 0; n < 300; n++ {
		users := NewUsers(tab)
		var rules []string
		pick := func() string {
			if rng.IntN(2) == 0 {
				return cmdRules[rng.IntN(len(cmdRules))]
			}
			return keyRules[rng.IntN(len(keyRules))]
		}
		for i := rng.IntN(6); i >= 0; i-- {
			rules = append(rules, pick())
		}
		for i := rng.IntN(3); i > 0; i-- { // selectors
			sel := "(" + pick()
			for j := rng.IntN(3); j >= 0; j-- {
				sel += " " + pick()
			}
			rules = append(rules, sel+")")
		}
		u, err := users.SetUser("u", rules...)
		if err != nil {
			continue // a refused combination (~x after allkeys)
		}
		for id := 0; id < tab.Len(); id++ {
			want := u.Allowed(id, nil, nil, nil).OK()
			if got := u.AllowsCommand(id); got != want {
				t.Fatalf("rules %q: AllowsCommand(%s) = %v, Allowed says %v", rules, tab.Name(id), got, want)
			}
			for _, k := range keys {
				for _, f := range flagSets {
					want := u.Allowed(id, nil, []Key{{Name: []byte(k), Flags: f}}, nil).OK()
					if got := u.AllowsKey(id, []byte(k), f); got != want {
						t.Fatalf("rules %q: AllowsKey(%s, %q, %v) = %v, Allowed says %v", rules, tab.Name(id), k, f, got, want)
					}
					checks++
				}
			}
		}
	}
	if checks == 0 {
		t.Fatal("no user was accepted: the rules drawn are all refused")
	}
	// The zero User (a session not yet authenticated) allows nothing.
	var zero User
	if zero.AllowsCommand(0) || zero.AllowsKey(0, []byte("k"), KeyRead) {
		t.Fatal("the zero User allows a command")
	}
}

// TestFastChecksAllocateNothing: AllowsCommand and AllowsKey, allowed or
// not, with patterns to match.
func TestFastChecksAllocateNothing(t *testing.T) {
	users := NewUsers(goblinTable)
	u, err := users.SetUser("u", "on", "+get", "~key:*", "~a?c", "(+set ~w*)")
	if err != nil {
		t.Fatal(err)
	}
	get, _ := goblinTable.ID("get")
	set, _ := goblinTable.ID("set")
	key, other := []byte("abc"), []byte("zzz")
	a := testing.AllocsPerRun(100, func() {
		if !u.AllowsKey(get, key, KeyRead) || u.AllowsKey(set, other, KeyWrite) || !u.AllowsCommand(get) {
			panic("wrong answer")
		}
	})
	if a != 0 {
		t.Fatalf("%.1f allocations per check, want 0", a)
	}
}
