package engine

import (
	"errors"
	"slices"
	"testing"
)

// TestYesNoFlags: every settable engine parameter whose value is yes or
// no takes both in any case, shows them in lower case, refuses anything
// else with Redis's words (ErrYesNo) and keeps its value then; the
// flags known to be built with YesNoParam are among them.
func TestYesNoFlags(t *testing.T) {
	e, _ := newEngine(t, Options{})
	// appendonly reads "no" but is refused "yes" (goblin does not persist).
	notFlags := map[string]bool{"appendonly": true}
	var seen []string
	for _, p := range e.params() {
		if p.Set == nil || notFlags[p.Name] {
			continue
		}
		was := p.Get()
		if was != "yes" && was != "no" {
			continue
		}
		seen = append(seen, p.Name)
		for _, tc := range []struct{ in, want string }{{"YES", "yes"}, {"No", "no"}, {"yes", "yes"}, {"nO", "no"}} {
			if err := p.Set(tc.in); err != nil {
				t.Errorf("%s: Set(%q): %v", p.Name, tc.in, err)
			} else if got := p.Get(); got != tc.want {
				t.Errorf("%s: Set(%q) then Get: %q, want %q", p.Name, tc.in, got, tc.want)
			}
		}
		for _, bad := range []string{"", "y", "true", "1", "yes "} {
			before := p.Get()
			if err := p.Set(bad); !errors.Is(err, ErrYesNo) {
				t.Errorf("%s: Set(%q): %v, want %v", p.Name, bad, err, ErrYesNo)
			}
			if got := p.Get(); got != before {
				t.Errorf("%s: a refused Set(%q) changed it from %q to %q", p.Name, bad, before, got)
			}
		}
		if err := p.Set(was); err != nil {
			t.Fatalf("%s: putting %q back: %v", p.Name, was, err)
		}
	}
	for _, name := range []string{"repl-diskless-sync", "lazyfree-lazy-expire", "lazyfree-lazy-eviction",
		"rdbcompression", "rdbchecksum", "stop-writes-on-bgsave-error", "latency-tracking"} {
		if !slices.Contains(seen, name) {
			t.Errorf("%s is not a settable yes/no parameter (have %q)", name, seen)
		}
	}
}
