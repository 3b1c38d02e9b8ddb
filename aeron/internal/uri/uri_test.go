package uri

import (
	"errors"
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/aeron/internal/command"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		spy  bool
		want string // media?k=v|k=v
	}{
		{"aeron:ipc", false, "ipc"},
		{"aeron:ipc?term-length=64k|alias=x", false, "ipc?term-length=64k|alias=x"},
		{"aeron-spy:aeron:udp?endpoint=127.0.0.1:5", true, "udp?endpoint=127.0.0.1:5"},
		{"aeron:udp?alias=a|alias=b", false, "udp?alias=a|alias=b"}, // repeats kept, in order
		{"aeron:udp?alias=", false, "udp?alias="},                   // empty value
		{"aeron:udp?k=a=b", false, "udp?k=a=b"},                     // the first '=' splits
	} {
		u, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		var b strings.Builder
		b.WriteString(u.Media)
		for i, p := range u.Params {
			b.WriteString([]string{"?", "|"}[min(i, 1)] + p[0] + "=" + p[1])
		}
		if u.Spy != c.spy || b.String() != c.want {
			t.Errorf("Parse(%q) = spy %v %q, want spy %v %q", c.in, u.Spy, b.String(), c.spy, c.want)
		}
	}
	u, _ := Parse("aeron:udp?alias=a|mtu=8k|alias=b")
	if v, ok := u.Get("alias"); !ok || v != "b" {
		t.Errorf("Get(alias) = %q %v, want the last value b", v, ok)
	}
	if _, ok := u.Get("ttl"); ok {
		t.Error("Get(ttl) found a parameter never given")
	}

	for _, c := range []struct {
		in   string
		kind Kind
		part string // Error.Media or Error.Param
	}{
		{strings.Repeat("x", command.MaxChannelLength+1), TooLong, ""},
		{"", NoPrefix, ""},
		{"udp:ipc", NoPrefix, ""},
		{"aeron-spy:udp", NoPrefix, ""},
		{"aeron:", UnknownMedia, ""},
		{"aeron:tcp", UnknownMedia, "tcp"},
		{"aeron:ud|p", ReservedInMedia, "ud|p"},
		{"aeron:aeron:ipc", ReservedInMedia, "aeron:ipc"},
		{"aeron:ipc?", NoValue, ""},
		{"aeron:ipc?a", NoValue, "a"},
		{"aeron:ipc?a=1|", NoValue, ""},
		{"aeron:ipc?=x", EmptyKey, "=x"},
	} {
		_, err := Parse(c.in)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("Parse(%.40q) = %v, want an *Error of kind %d", c.in, err, c.kind)
			continue
		}
		if e.Kind != c.kind || e.Media+e.Param != c.part || e.Error() == "" {
			t.Errorf("Parse(%.40q) = %+v (%v), want kind %d about %q", c.in, *e, e, c.kind, c.part)
		}
	}
}

func TestParseSize(t *testing.T) {
	for v, want := range map[string]int64{"64k": 64 << 10, "64K": 64 << 10, "16M": 16 << 20, "16m": 16 << 20,
		"1g": 1 << 30, "1G": 1 << 30, "4096": 4096, "0": 0, "4194304g": 1 << 52} {
		if n, err := ParseSize(v); err != nil || n != want {
			t.Errorf("ParseSize(%q) = %d, %v, want %d", v, n, err, want)
		}
	}
	// 18014398509481985k is 2^64+1024 bytes: it must not wrap round to 1k.
	for _, v := range []string{"", "k", "-1", "10x", "1.5m", " 1", "9223372036854775807", "18014398509481985k", "4294967297g"} {
		if n, err := ParseSize(v); !errors.Is(err, ErrSize) {
			t.Errorf("ParseSize(%q) = %d, %v, want ErrSize", v, n, err)
		}
	}
}

// FuzzParse: Parse never panics, and what it accepts it accepts again
// when formatted back, with the same parts.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"aeron:ipc", "aeron:udp?endpoint=127.0.0.1:1|mtu=1408",
		"aeron-spy:aeron:udp?control-mode=response", "aeron:udp?alias=a|alias=", "aeron:ipc?", "aeron:ipc?=x",
		"aeron:ud|p", "aeron:udp?endpoint=localhost:0|term-length=1m|session-id=tag:7"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := Parse(s)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Kind == 0 {
				t.Fatalf("Parse(%q): %v is not an *Error with a kind", s, err)
			}
			return
		}
		var b strings.Builder
		if u.Spy {
			b.WriteString(SpyPrefix)
		}
		b.WriteString(Prefix + u.Media)
		for i, p := range u.Params {
			b.WriteString([]string{"?", "|"}[min(i, 1)] + p[0] + "=" + p[1])
		}
		if b.String() != s {
			t.Fatalf("Parse(%q) formats back as %q", s, b.String())
		}
	})
}
