package aeron

import (
	"errors"
	"testing"
)

func TestParseChannel(t *testing.T) {
	good := []string{
		"aeron:ipc",
		"aeron:ipc?term-length=64k|alias=x",
		"aeron:udp?endpoint=127.0.0.1:40123",
		"aeron:udp?endpoint=localhost:0|mtu=1408|term-length=1m",
		"aeron:udp?control-mode=response|control=127.0.0.1:40124",
		"aeron:udp?endpoint=127.0.0.1:1|response-correlation-id=42",
		"aeron:udp?control-mode=response|control=127.0.0.1:2|response-correlation-id=prototype",
		"aeron:ipc?control-mode=response",
		"aeron-spy:aeron:udp?endpoint=127.0.0.1:5",
		"aeron:ipc?init-term-id=1|term-id=3|term-offset=64",
	}
	for _, s := range good {
		u, err := ParseChannel(s)
		if err != nil {
			t.Errorf("%s: %v", s, err)
			continue
		}
		if u.String() != s {
			t.Errorf("round trip %q → %q", s, u.String())
		}
	}
	bad := []string{
		"", "aeron:", "aeron:tcp", "udp:ipc", "aeron:udp", "aeron:udp?ttl=1",
		"aeron:ipc?term-length=1000", "aeron:ipc?term-length=32k", "aeron:ipc?mtu=100",
		"aeron:udp?endpoint=nocolon", "aeron:udp?endpoint=h:99999", "aeron:ipc?=x", "aeron:ipc?a",
		"aeron:ipc?session-id=abc", "aeron:ipc?response-correlation-id=x", "aeron:ipc?reliable=yes",
		"aeron:udp?control-mode=dynamic", "aeron:ipc?control-mode=weird", "aeron:ipc?term-id=1",
		"aeron:ipc?alias=a|alias=b",
		// An empty query and a size that wraps round to 1k (the driver
		// refuses both), a key repeated after an empty first value.
		"aeron:ipc?", "aeron:ipc?alias=|alias=b", "aeron:ipc?mtu=18014398509481985k",
	}
	for _, s := range bad {
		if _, err := ParseChannel(s); !errors.Is(err, ErrInvalidChannel) {
			t.Errorf("%q: err %v, want ErrInvalidChannel", s, err)
		}
	}
}

func TestChannelBuilder(t *testing.T) {
	s, err := UDP().ControlMode(ControlModeResponse).Control("127.0.0.1:4000").TermLength(64 << 10).Build()
	if err != nil || s != "aeron:udp?control-mode=response|control=127.0.0.1:4000|term-length=65536" {
		t.Fatalf("%q %v", s, err)
	}
	s = IPC().ResponseCorrelationID(77).String()
	if s != "aeron:ipc?response-correlation-id=77" {
		t.Fatal(s)
	}
	if _, err := UDP().Build(); !errors.Is(err, ErrInvalidChannel) {
		t.Fatalf("udp without endpoint: %v", err)
	}
	if _, err := IPC().MTU(33).Build(); !errors.Is(err, ErrInvalidChannel) {
		t.Fatalf("bad mtu: %v", err)
	}
	u, _ := ParseChannel("aeron:udp?endpoint=127.0.0.1:1|alias=a")
	u.Set(ParamAlias, "").Set(ParamMTU, "8k")
	if u.String() != "aeron:udp?endpoint=127.0.0.1:1|mtu=8k" || u.Get(ParamEndpoint) != "127.0.0.1:1" {
		t.Fatal(u.String())
	}
}

func FuzzParseChannel(f *testing.F) {
	for _, s := range []string{"aeron:ipc", "aeron:udp?endpoint=127.0.0.1:1|mtu=1408", "aeron-spy:aeron:udp?control-mode=response"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseChannel(s)
		if err != nil {
			return
		}
		// Whatever parses must format back to something that parses the same.
		u2, err := ParseChannel(u.String())
		if err != nil || u2.String() != u.String() {
			t.Fatalf("%q → %q → %v", s, u.String(), err)
		}
	})
}
