package proto

import "testing"

func TestParse(t *testing.T) {
	for in, want := range map[string]Protocol{"resp": RESP, "RESP": RESP, "rEsP": RESP, "sbe": SBE, "SBE": SBE, "sBe": SBE} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
		if got, _ := Parse(want.String()); got != want {
			t.Errorf("Parse(%v.String()) = %v", want, got)
		}
	}
	for _, in := range []string{"", "json", "resp3", " sbe"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) succeeded", in)
		}
	}
}

func TestSniff(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Protocol
		ok   bool
	}{
		{"", RESP, false},
		{"*", RESP, true},
		{"*1\r\n$4\r\nPING\r\n", RESP, true},
		{"PING\r\n", RESP, true},
		{"QUIT\n", RESP, true},
		{"\r\n", RESP, true},
		{"PIN", RESP, false},
		{"\x00\x00\x00\x10\xeb", RESP, false},
		{"\x00\x00\x00\x10\xeb\x50", SBE, true},
		{"\x01\x00\x00\x40\xeb\x50", SBE, true},  // a 16 MiB frame
		{"\x00\x00\x00\x10\x5b\xe0", SBE, true},  // big-endian SBE: refused by the SBE framing
		{"\x00\x00\x00\x10\xf0\x00", RESP, true}, // another SOFH encoding: not SBE
		{"GET key\r\n", RESP, true},
	} {
		if p, ok := Sniff([]byte(c.in)); p != c.want || ok != c.ok {
			t.Errorf("Sniff(%q) = %v, %v; want %v, %v", c.in, p, ok, c.want, c.ok)
		}
	}
}
