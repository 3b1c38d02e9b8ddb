package unixgroup

import (
	"os/user"
	"strconv"
	"testing"

	"github.com/goblin-kv/goblin/internal/testkit"
)

func TestLookup(t *testing.T) {
	if gid, err := Lookup("4242"); err != nil || gid != 4242 {
		t.Fatalf("numeric gid: %d, %v", gid, err)
	}
	g, err := user.LookupGroupId("0")
	if err != nil {
		testkit.Missing(t, "group 0: %v", err)
	}
	if gid, err := Lookup(g.Name); err != nil || strconv.Itoa(gid) != g.Gid {
		t.Fatalf("group %q: %d, %v", g.Name, gid, err)
	}
	if _, err := Lookup("no-such-group-goblin"); err == nil {
		t.Fatal("an unknown group name was accepted")
	}
}
