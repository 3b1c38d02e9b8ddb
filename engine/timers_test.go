package engine

import (
	"testing"
	"time"

	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
)

// TestTimerSlack: an idle engine lets the loop doze for all it asks; a
// blocked client's timeout and a CLIENT PAUSE's end bound the doze to the
// time left; a key with a TTL keeps the loop to its backoff's parks (0)
// while the expiry sweep passes over the slots, and to the sweep's 100 ms
// rest after each pass, so no expiry is delayed beyond the sweep's own
// rest and the loop still dozes between passes.
func TestTimerSlack(t *testing.T) {
	e, clock := newEngine(t, Options{})
	const ask = 100 * time.Millisecond
	if d := e.TimerSlack(ask); d != ask {
		t.Fatalf("an idle engine allows %v of %v", d, ask)
	}
	var out pushed
	s := e.Open(proto.RESP, nil)
	s.Attach(out.conn("127.0.0.1:40001"))
	if n, _, _ := e.ServeStream(s, resp.AppendCommandString(nil, "BLPOP", "k", "0.03"), nil); n == 0 {
		t.Fatal("BLPOP not consumed")
	}
	if d := e.TimerSlack(ask); d != 30*time.Millisecond {
		t.Fatalf("a BLPOP timing out in 30 ms: %v allowed, want 30ms", d)
	}
	clock.Advance(10 * time.Millisecond)
	if d := e.TimerSlack(ask); d != 20*time.Millisecond {
		t.Fatalf("10 ms later: %v allowed, want 20ms", d)
	}
	clock.Advance(20 * time.Millisecond)
	e.Tick(100) // the timeout answers it
	if string(out.b) != "*-1\r\n" {
		t.Fatalf("BLPOP after its timeout: %q", out.b)
	}
	if d := e.TimerSlack(ask); d != ask {
		t.Fatalf("no blocked client left: %v allowed", d)
	}
	c := e.Open(proto.RESP, nil)
	if got := do(t, e, c, "CLIENT", "PAUSE", "50", "WRITE"); got != "+OK" {
		t.Fatalf("CLIENT PAUSE: %s", got)
	}
	if d := e.TimerSlack(ask); d != 50*time.Millisecond {
		t.Fatalf("a pause ending in 50 ms: %v allowed, want 50ms", d)
	}
	do(t, e, c, "CLIENT", "UNPAUSE")
	if got := do(t, e, c, "SET", "v", "1", "PX", "100000"); got != "+OK" {
		t.Fatalf("SET PX: %s", got)
	}
	if d := e.TimerSlack(ask); d != 0 {
		t.Fatalf("a key with a TTL, its sweep's pass not done: %v allowed, want 0 (the loop ticks the sweep on)", d)
	}
	e.Tick(1000) // a whole pass over the slots: the sweep rests 100 ms
	if d := e.TimerSlack(2 * ask); d != 100*time.Millisecond {
		t.Fatalf("a key with a TTL, the sweep resting 100 ms: %v of %v allowed, want 100ms", d, 2*ask)
	}
	clock.Advance(40 * time.Millisecond)
	if d := e.TimerSlack(2 * ask); d != 60*time.Millisecond {
		t.Fatalf("40 ms into the sweep's rest: %v allowed, want 60ms", d)
	}
	clock.Advance(60 * time.Millisecond)
	if d := e.TimerSlack(ask); d != 0 {
		t.Fatalf("the sweep's rest over: %v allowed, want 0 (its next pass is due)", d)
	}
	do(t, e, c, "DEL", "v")
	if d := e.TimerSlack(ask); d != ask {
		t.Fatalf("the key with a TTL deleted: %v allowed", d)
	}
}
