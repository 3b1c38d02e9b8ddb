package acl

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/request"
)

func TestGenerateGoblinTable(t *testing.T) {
	if os.Getenv("ACL_GEN") == "" {
		t.Skip("generator")
	}
	rc := startRedis(t)
	_, infos := redisTable(t, rc)
	var b strings.Builder
	cats := func(full string) string {
		v, ok := infos[full]
		var names []string
		if ok {
			for _, c := range v.kids[6].kids {
				names = append(names, c.s)
			}
		} else {
			names = request.Lookup(request.ByFullName(full)).CategoryNames()
		}
		var parts []string
		for _, c := range names {
			n := strings.TrimPrefix(c, "@")
			cc, _ := CategoryByName(n)
			_ = cc
			parts = append(parts, "Cat"+catIdent[n])
		}
		if len(parts) == 0 {
			parts = []string{"0"}
		}
		if !ok {
			return strings.Join(parts, " | ") + " /* goblin's own or newer than Redis 7.0 */"
		}
		return strings.Join(parts, " | ")
	}
	noauth := func(full string) string {
		v, ok := infos[full]
		if !ok {
			return ""
		}
		for _, f := range v.kids[2].kids {
			if f.s == "no_auth" {
				return ", NoAuth: true"
			}
		}
		return ""
	}
	for _, op := range request.All() {
		s := request.Lookup(op)
		if strings.Contains(s.Name, "|") {
			continue
		}
		subs := request.Subcommands(op)
		fmt.Fprintf(&b, "\t{Name: %q, Categories: %s%s", s.Name, cats(s.Name), noauth(s.Name))
		if len(subs) > 0 {
			b.WriteString(", Subcommands: []Command{\n")
			for _, so := range subs {
				ss := request.Lookup(so)
				_, short, _ := strings.Cut(ss.Name, "|")
				fmt.Fprintf(&b, "\t\t{Name: %q, Categories: %s%s},\n", short, cats(ss.Name), noauth(ss.Name))
			}
			b.WriteString("\t}")
		}
		b.WriteString("},\n")
	}
	os.WriteFile("/tmp/acl_table.txt", []byte(b.String()), 0o644)
}

var catIdent = map[string]string{"keyspace": "Keyspace", "read": "Read", "write": "Write", "set": "Set", "sortedset": "SortedSet", "list": "List", "hash": "Hash", "string": "String", "bitmap": "Bitmap", "hyperloglog": "HyperLogLog", "geo": "Geo", "stream": "Stream", "pubsub": "PubSub", "admin": "Admin", "fast": "Fast", "slow": "Slow", "blocking": "Blocking", "dangerous": "Dangerous", "connection": "Connection", "transaction": "Transaction", "scripting": "Scripting"}

// notInRedis70 are goblin's commands Redis 7.0 lacks (newer Redis ones
// and goblin's own); their categories come from goblin's command table.
var notInRedis70 = map[string]bool{"client|setinfo": true, "client|no-touch": true,
	"cluster|myshardid": true, "cluster|reload": true, "cluster|targets": true}

// TestGoblinCommandsMatchRedis holds GoblinCommands to the categories
// and no_auth flags a live redis-server 7.0 gives in COMMAND INFO.
func TestGoblinCommandsMatchRedis(t *testing.T) {
	rc := startRedis(t)
	_, infos := redisTable(t, rc)
	tab := MustTable(GoblinCommands)
	for id := 0; id < tab.Len(); id++ {
		name := tab.Name(id)
		v, ok := infos[name]
		if !ok {
			if !notInRedis70[name] {
				t.Errorf("%s: not in redis-server's COMMAND and not a known goblin-only command", name)
			}
			continue
		}
		var want Category
		for _, c := range v.kids[6].kids {
			cc, _ := CategoryByName(strings.TrimPrefix(c.s, "@"))
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

// TestGoblinCommandsCoverRequestTable fails when goblin's command table
// gains a command GoblinCommands lacks (or loses one it has), so the ACL
// categories never fall behind the commands.
func TestGoblinCommandsCoverRequestTable(t *testing.T) {
	tab := MustTable(GoblinCommands)
	seen := map[string]bool{}
	for _, op := range request.All() {
		s := request.Lookup(op)
		seen[s.Name] = true
		id, ok := tab.ID(s.Name)
		if !ok {
			t.Errorf("%s is in request's table but not in GoblinCommands: run ACL_GEN=1 go test -run TestGenerateGoblinTable ./acl/", s.Name)
			continue
		}
		var want Category
		for _, n := range s.CategoryNames() {
			c, _ := CategoryByName(strings.TrimPrefix(n, "@"))
			want |= c
		}
		if got := tab.Categories(id); got != want {
			t.Errorf("%s: GoblinCommands says %v, request's table %v", s.Name, got.Names(), want.Names())
		}
	}
	for id := 0; id < tab.Len(); id++ {
		if !seen[tab.Name(id)] {
			t.Errorf("%s is in GoblinCommands but not in request's table", tab.Name(id))
		}
	}
}
