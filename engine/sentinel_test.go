package engine

import (
	"testing"

	"github.com/goblin-kv/goblin/proto"
)

// TestScriptKillAnswersNotBusy: redis-sentinel sends SCRIPT KILL to an
// instance whose PING answered BUSY; goblin runs no scripts, so it answers
// as an idle Redis does, not with an unknown-command error.
func TestScriptKillAnswersNotBusy(t *testing.T) {
	e, _ := newEngine(t, Options{})
	s := e.Open(proto.RESP, nil)
	for _, c := range [][]string{{"SCRIPT", "KILL"}, {"script", "kill"}} {
		if got := do(t, e, s, c...); got != "-NOTBUSY No scripts in execution right now." {
			t.Fatalf("%v: %q, want Redis's NOTBUSY", c, got)
		}
	}
	if got := do(t, e, s, "SCRIPT", "LOAD", "return 1"); got != "-ERR unknown subcommand 'LOAD'. Try SCRIPT HELP." {
		t.Fatalf("SCRIPT LOAD: %q", got)
	}
}
