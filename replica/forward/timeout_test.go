package forward

import (
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/engine"
)

// A forwarded write the replica has not applied within Timeout is answered
// TRYAGAIN, timed on the clock of Poll's now (the loop's cycle clock: no
// clock read of its own per forward): not one nanosecond early.
func TestLaggedOnPollClock(t *testing.T) {
	var replies []string
	f, err := New(Options{
		Primary: func() (string, int, bool) { return "127.0.0.1", 1, true },
		Applied: func() int64 { return 5 },
		Done:    func(_ *engine.Session, _ uint64, reply []byte) { replies = append(replies, string(reply)) },
		Timeout: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.inQueue++
	f.results <- result{token: 1, offset: 10} // the primary ran it at 10; the replica is at 5
	const t0 = int64(1_000_000_000)
	f.Poll(t0)
	f.Poll(t0 + int64(time.Second) - 1)
	if len(replies) != 0 {
		t.Fatalf("answered before the timeout: %q", replies)
	}
	f.Poll(t0 + int64(time.Second))
	var st Stats
	f.Stats(&st)
	if len(replies) != 1 || !strings.HasPrefix(replies[0], "-TRYAGAIN forwarded write") || st.Lagged != 1 {
		t.Fatalf("at the timeout: replies %q, lagged %d; want one TRYAGAIN, lagged 1", replies, st.Lagged)
	}
}
