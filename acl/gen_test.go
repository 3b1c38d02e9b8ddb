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
