package client

import (
	"os/exec"
	"strings"
	"testing"
)

// TestSocketClientLinksNoMessageTransport: a program that imports package
// client alone links neither goblin's shared-memory ring nor the Aeron
// client and its media drivers; those opt in by import (transport.Dialer).
func TestSocketClientLinksNoMessageTransport(t *testing.T) {
	const mod = "github.com/goblin-kv/goblin/"
	out, err := exec.Command("go", "list", "-deps", mod+"client").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %sclient: %v\n%s", mod, err, out)
	}
	deps := strings.Fields(string(out))
	var sockets bool
	for _, p := range deps {
		switch {
		case p == mod+"transport/uds":
			sockets = true
		case p == mod+"aeron" || strings.HasPrefix(p, mod+"aeron/"),
			p == mod+"transport/aeron", p == mod+"transport/ring":
			t.Errorf("package client links %s; the ring and Aeron transports must only be linked by programs that import them", p)
		}
	}
	if !sockets {
		t.Fatalf("go list -deps %sclient does not list transport/uds, which the client dials sockets with:\n%s", mod, out)
	}
}
