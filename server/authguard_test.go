package server

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestAuthGuardDelays: three free failures per connection, then doubling
// delays up to the cap; past the server-wide burst every failure waits at
// least a second; the log holds at most authLogBurst lines a second plus
// a summary.
func TestAuthGuardDelays(t *testing.T) {
	var logs bytes.Buffer
	g := &authGuard{log: slog.New(slog.NewTextHandler(&logs, nil))}
	want := []time.Duration{0, 0, 0, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond,
		1600 * time.Millisecond, 3200 * time.Millisecond, 5 * time.Second, 5 * time.Second}
	for i, w := range want {
		if d := g.failed("uds/resp", "", uint64(i+1)); d != w {
			t.Errorf("failure %d on one connection: delay %v, want %v", i+1, d, w)
		}
	}
	for i := len(want); i < authBurst; i++ {
		g.failed("tcp/resp", "", 1)
	}
	if d := g.failed("tcp/resp", "", 1); d != time.Second {
		t.Errorf("a first failure past the server-wide burst: delay %v, want 1s", d)
	}
	if n := strings.Count(logs.String(), "authentication failed"); n != authLogBurst {
		t.Errorf("%d failures logged one by one, want %d", n, authLogBurst)
	}
	g.window = g.window.Add(-2 * time.Second) // the next second
	g.failed("uds/resp", "", 1)
	if !strings.Contains(logs.String(), "authentication failures not logged one by one") {
		t.Errorf("no summary of the failures left out:\n%s", logs.String())
	}
}
