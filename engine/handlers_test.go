package engine

import (
	"testing"

	"github.com/goblin-kv/goblin/command"
)

// TestEveryCommandHasAHandler keeps the command table (request's specs) and
// handlers in step, both ways: every command in the table has a handler,
// and every handler's Op is a command in the table. The one exception is a
// container marked Dispatch (CLIENT, CONFIG, ...): its name alone is not a
// command, so it has no handler and the engine answers it with the wrong
// number of arguments (unknownOp); a handler would shadow that answer.
func TestEveryCommandHasAHandler(t *testing.T) {
	commands := 0
	for i := 0; i < command.NumOps; i++ {
		op := command.Op(i)
		spec, h := command.Lookup(op), handlers[op]
		switch {
		case spec == nil && h != nil:
			t.Errorf("op %d has a handler but is not in the command table (command/table.go)", op)
		case spec == nil:
		case spec.Dispatch && h != nil:
			t.Errorf("%s (op %d) is a Dispatch container but has a handler, which would shadow its wrong-arguments answer", spec.Name, op)
		case spec.Dispatch:
		case h == nil:
			t.Errorf("%s (op %d) is in the command table but has no handler in engine/exec.go's handlers", spec.Name, op)
		default:
			commands++
		}
	}
	// The walk above covers the table only if All lists what Lookup knows.
	if n := len(command.All()); n == 0 || commands == 0 {
		t.Fatalf("the table lists %d commands and %d have handlers: the walk found nothing to check", n, commands)
	}
	for _, op := range command.All() {
		if command.Lookup(op) == nil {
			t.Errorf("command.All lists op %d, which Lookup does not know", op)
		}
	}
}
