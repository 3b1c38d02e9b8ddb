package driver

import (
	"net"
	"net/netip"
	"strings"
	"testing"
)

// TestInterfaceByName: interface={name} and {name}:port resolve to the
// named interface's first address of the channel's family, as the Java
// driver's NamedInterface does; an unknown name or a malformed one is
// refused.
func TestInterfaceByName(t *testing.T) {
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	lo := ""
	for _, i := range ifaces {
		if i.Flags&net.FlagLoopback != 0 {
			lo = i.Name
			break
		}
	}
	if lo == "" {
		t.Fatal("no loopback interface")
	}
	for v, want := range map[string]netip.AddrPort{
		"{" + lo + "}":       netip.MustParseAddrPort("127.0.0.1:0"),
		"{" + lo + "}:24501": netip.MustParseAddrPort("127.0.0.1:24501"),
	} {
		u, err := parseURI("aeron:udp?endpoint=127.0.0.1:24500|interface=" + v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := resolveInterface(u, false, false)
		if err != nil || got != want {
			t.Errorf("interface=%s: %v, %v; want %v", v, got, err, want)
		}
	}
	for v, msg := range map[string]string{"{no-such-interface}": "unknown interface no-such-interface",
		"{" + lo: "{" + lo, "{}": "{}", "{" + lo + "}x": "x", "{" + lo + "}:99999": "port out of range"} {
		u, err := parseURI("aeron:udp?endpoint=127.0.0.1:24500|interface=" + v)
		if err != nil {
			continue
		}
		if _, err := resolveInterface(u, false, false); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("interface=%s: %v, want an error saying %q", v, err, msg)
		}
	}
}
