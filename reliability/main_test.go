package reliability

import (
	"testing"

	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

func TestMain(m *testing.M) { testproc.Main(m) }
