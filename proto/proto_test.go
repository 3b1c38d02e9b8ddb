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
