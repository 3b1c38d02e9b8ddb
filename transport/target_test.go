package transport

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/proto"
)

func TestParse(t *testing.T) {
	cases := []struct {
		in   string
		want Target
	}{
		{"uds:///run/goblin/goblin.sock?proto=resp", Target{Scheme: UDS, Path: "/run/goblin/goblin.sock", ProtoSet: true}},
		{"/tmp/g.sock", Target{Scheme: UDS, Path: "/tmp/g.sock"}},
		// Characters URLs give a meaning must survive the round trip.
		{"/tmp/a?b#c 100%.sock", Target{Scheme: UDS, Path: "/tmp/a?b#c 100%.sock"}},
		{"ring:///dev/shm/a%3Fb", Target{Scheme: Ring, Path: "/dev/shm/a?b"}},
		{"tcp://127.0.0.1:6380?proto=sbe", Target{Scheme: TCP, Address: "127.0.0.1:6380", Proto: proto.SBE, ProtoSet: true}},
		{"tcp://localhost", Target{Scheme: TCP, Address: "localhost:6380"}},
		{"127.0.0.1:7000", Target{Scheme: TCP, Address: "127.0.0.1:7000"}},
		{"ring:///dev/shm/goblin?proto=sbe&max=4096", Target{Scheme: Ring, Path: "/dev/shm/goblin", Proto: proto.SBE, ProtoSet: true, Params: map[string]string{"max": "4096"}}},
		{"aeron:ipc?proto=sbe", Target{Scheme: Aeron, Address: "ipc", Proto: proto.SBE, ProtoSet: true}},
		{"aeron:udp?endpoint=10.0.0.1:40123|control=10.0.0.1:40124", Target{Scheme: Aeron, Address: "udp",
			Params: map[string]string{"endpoint": "10.0.0.1:40123", "control": "10.0.0.1:40124"}}},
	}
	for _, c := range cases {
		got, err := ParseTarget(c.in)
		if err != nil {
			t.Errorf("ParseTarget(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseTarget(%q) = %+v, want %+v", c.in, got, c.want)
		}
		again, err := ParseTarget(got.String())
		named := got
		named.ProtoSet = true // String always names the protocol
		if err != nil || !reflect.DeepEqual(again, named) {
			t.Errorf("round trip of %q via %q = %+v, %v", c.in, got.String(), again, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"", "http://x", "uds://host/path", "tcp://", "aeron:tcp", "aeron:udp", "aeron:ipc?x", "uds:///a?proto=json", "nonsense"} {
		if _, err := ParseTarget(in); !errors.Is(err, ErrTargetSyntax) {
			t.Errorf("ParseTarget(%q) error = %v, want ErrTargetSyntax", in, err)
		}
	}
}

// TestParseSchemeTypos: a scheme with one slash (ring:/dev/shm/goblin) or
// none is a bad target naming the right spelling, not the TCP host
// "ring"; a bare host:port needs a numeric port.
func TestParseSchemeTypos(t *testing.T) {
	for in, want := range map[string]string{
		"ring:/dev/shm/goblin": "ring:///dev/shm/goblin",
		"ring:dev/shm/goblin":  "ring:///dev/shm/goblin",
		"uds:/tmp/g.sock":      "uds:///tmp/g.sock",
		"tcp:127.0.0.1:6380":   "tcp://127.0.0.1:6380",
		"tcp:/127.0.0.1:6380":  "tcp://127.0.0.1:6380",
		"localhost:http":       "not a number",
		"host:99999":           "not a number",
	} {
		_, err := ParseTarget(in)
		if !errors.Is(err, ErrTargetSyntax) || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseTarget(%q) = %v, want ErrTargetSyntax mentioning %q", in, err, want)
		}
	}
}

func TestDefault(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/1000")
	if got := DefaultTarget().Path; got != "/run/user/1000/goblin.sock" {
		t.Fatalf("DefaultTarget().Path = %q", got)
	}
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("TMPDIR", "/var/tmp")
	want := fmt.Sprintf("/var/tmp/goblin-%d/goblin.sock", os.Geteuid())
	if os.Geteuid() == 0 {
		want = "/run/goblin/goblin.sock"
	}
	if got := DefaultTarget(); got.Scheme != UDS || got.Path != want {
		t.Fatalf("DefaultTarget() = %+v, want the path %s", got, want)
	}
	if got, err := ParseTarget("uds://?proto=sbe"); err != nil || got.Path != want || got.Proto != proto.SBE {
		t.Fatalf("ParseTarget(uds://?proto=sbe) = %+v, %v; want the default socket", got, err)
	}
}
