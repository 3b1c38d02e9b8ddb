package acl

import (
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/command"
)

// notInRedis70 are goblin's commands Redis 7.0 lacks (newer Redis ones
// and goblin's own); their categories come from goblin's command table.
var notInRedis70 = map[string]bool{"client|setinfo": true, "client|no-touch": true,
	"cluster|myshardid": true, "cluster|reload": true, "cluster|targets": true}

// TestCommandTableMatchesRedis holds CommandTable (package command's
// table) to the categories and no_auth flags a live redis-server 7.0
// gives in COMMAND INFO.
func TestCommandTableMatchesRedis(t *testing.T) {
	rc := startRedis(t)
	_, infos := redisTable(t, rc)
	tab := CommandTable()
	for id := 0; id < tab.Len(); id++ {
		name := tab.Name(id)
		v, ok := infos[name]
		if !ok {
			if !notInRedis70[name] {
				t.Errorf("%s: not in redis-server's COMMAND and not a known goblin-only command", name)
			}
			continue
		}
		var want command.Categories
		for _, c := range v.kids[6].kids {
			cc, _ := categoryByName(strings.TrimPrefix(c.s, "@"))
			want |= cc
		}
		if got := tab.Categories(id); got != want {
			t.Errorf("%s: categories %v, redis-server says %v", name, got.Names(), want.Names())
		}
		noAuth := false
		for _, f := range v.kids[2].kids {
			noAuth = noAuth || f.s == "no_auth"
		}
		if got := tab.noAuth[id/64]&(1<<(id%64)) != 0; got != noAuth {
			t.Errorf("%s: NoAuth %v, redis-server says %v", name, got, noAuth)
		}
	}
}
