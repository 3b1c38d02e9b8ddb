package clusterbench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

func TestMain(m *testing.M) { testproc.Main(m) }

// TestRunSmall runs one node and two for a moment each: both complete
// commands and the table names both.
func TestRunSmall(t *testing.T) {
	o := Options{Server: testproc.Build(t, "./cmd/goblin-server"), Nodes: 2, Clients: 2, Pipeline: 16,
		Duration: 300 * time.Millisecond, Keys: 2000}
	rs, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Nodes != 1 || rs[1].Nodes != 2 || rs[0].Ops == 0 || rs[1].Ops == 0 {
		t.Fatalf("results %+v", rs)
	}
	var b strings.Builder
	Print(&b, o, rs)
	if !strings.Contains(b.String(), "| 1 | ") || !strings.Contains(b.String(), "| 2 | ") {
		t.Fatalf("table:\n%s", b.String())
	}
}
