package acl

import (
	"fmt"
	"testing"
)

// BenchmarkAllowed measures the permission check the engine will make
// for every command: a GET of one key.
func BenchmarkAllowed(b *testing.B) {
	get, _ := goblinTable.ID("get")
	key := []Key{{Name: []byte("user:1000:profile"), Flags: KeyRead}}
	patterns := func(n int) []string {
		ops := []string{"on", "+@read"}
		for i := n - 1; i > 0; i-- {
			ops = append(ops, fmt.Sprintf("~tenant%d:*", i))
		}
		return append(ops, "~user:*") // the key matches the last pattern
	}
	cases := []struct {
		name string
		ops  []string
	}{
		{"allcommands", []string{"on", "+@all", "~*", "&*"}},
		{"bitmap", []string{"on", "+@read", "-keys", "~*"}},
		{"1pattern", patterns(1)},
		{"10patterns", patterns(10)},
	}
	for _, c := range cases {
		users := NewUsers(goblinTable)
		u, err := users.SetUser("u", c.ops...)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !u.Allowed(get, nil, key, nil).OK() {
					b.Fatal("denied")
				}
			}
		})
	}
	// 100 users, each request from the next one: the users' rules are
	// out of cache more often, as on a server with many tenants.
	users := NewUsers(goblinTable)
	var all []*User
	for i := range 100 {
		u, err := users.SetUser(fmt.Sprint("u", i), "on", "+@read", "+@write", fmt.Sprintf("~t%d:*", i), "~user:*")
		if err != nil {
			b.Fatal(err)
		}
		all = append(all, u)
	}
	b.Run("100users", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if !all[i].Allowed(get, nil, key, nil).OK() {
				b.Fatal("denied")
			}
			i++
			if i == len(all) {
				i = 0
			}
		}
	})
}
