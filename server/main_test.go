package server

import (
	"testing"

	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// TestMain runs the tests with a state directory of their own
// (testproc.Main): the servers they build without Options.Dir use
// DefaultDir, which must not be the machine's.
func TestMain(m *testing.M) { testproc.Main(m) }
