package engine

import (
	"testing"
	"time"

	"github.com/goblin-kv/goblin/proto"
)

// TestNoExpiryWhilePaused: while a pause holds clients (the cluster
// bus's manual-failover pause, CLIENT PAUSE WRITE, CLIENT PAUSE ALL), a
// key past its time reads as missing but is neither deleted by the
// active sweep nor on access (DBSIZE still counts it, as Redis's does);
// when the pause ends, by ClusterPause(0), CLIENT UNPAUSE or its own
// deadline with no request arriving, the sweep deletes it.
func TestNoExpiryWhilePaused(t *testing.T) {
	for _, tc := range []struct {
		name         string
		pause, after func(e *Engine, c *Session, clock interface{ Advance(time.Duration) })
	}{
		{"cluster manual failover",
			func(e *Engine, _ *Session, _ interface{ Advance(time.Duration) }) { e.ClusterPause(10 * time.Second) },
			func(e *Engine, _ *Session, _ interface{ Advance(time.Duration) }) { e.ClusterPause(0) }},
		{"CLIENT PAUSE WRITE, UNPAUSE",
			func(e *Engine, c *Session, _ interface{ Advance(time.Duration) }) {
				do(t, e, c, "CLIENT", "PAUSE", "10000", "WRITE")
			},
			func(e *Engine, c *Session, _ interface{ Advance(time.Duration) }) { do(t, e, c, "CLIENT", "UNPAUSE") }},
		{"CLIENT PAUSE WRITE, its deadline",
			func(e *Engine, c *Session, _ interface{ Advance(time.Duration) }) {
				do(t, e, c, "CLIENT", "PAUSE", "3000", "WRITE")
			},
			func(e *Engine, _ *Session, clock interface{ Advance(time.Duration) }) { clock.Advance(3 * time.Second) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, clock := newEngine(t, Options{})
			c := e.Open(proto.RESP, nil)
			do(t, e, c, "SET", "gone", "v", "PX", "100")
			do(t, e, c, "SET", "stays", "v")
			tc.pause(e, c, clock)
			clock.Advance(time.Second)
			for range 5 {
				e.Tick(1 << 16)
				clock.Advance(200 * time.Millisecond)
			}
			if got := do(t, e, c, "GET", "gone"); got != "nil" {
				t.Errorf("GET of an expired key while paused: %s, want nil", got)
			}
			e.Tick(1 << 16)
			if got := do(t, e, c, "DBSIZE"); got != ":2" {
				t.Fatalf("DBSIZE while paused: %s, want :2 (the expired key kept)", got)
			}
			tc.after(e, c, clock)
			for range 3 {
				clock.Advance(200 * time.Millisecond)
				e.Tick(1 << 16)
			}
			if got := do(t, e, c, "DBSIZE"); got != ":1" {
				t.Fatalf("DBSIZE after the pause: %s, want :1 (the expired key deleted)", got)
			}
		})
	}
}

// TestNoExpiryWhenPromotedDuringPause: a replica made a primary again
// (REPLICAOF NO ONE) while CLIENT PAUSE WRITE holds writes leaves the
// replica's expiry mode for the pause's, not for a primary's own: the
// expired key stays until the pause ends.
func TestNoExpiryWhenPromotedDuringPause(t *testing.T) {
	e, clock := newEngine(t, Options{})
	c := e.Open(proto.RESP, nil)
	do(t, e, c, "SET", "gone", "v", "PX", "100")
	do(t, e, c, "SET", "stays", "v")
	e.SetReplica(true)
	do(t, e, c, "CLIENT", "PAUSE", "10000", "WRITE")
	clock.Advance(time.Second)
	e.SetReplica(false)
	for range 5 {
		e.Tick(1 << 16)
		clock.Advance(200 * time.Millisecond)
	}
	if got := do(t, e, c, "DBSIZE"); got != ":2" {
		t.Fatalf("DBSIZE while paused after the promotion: %s, want :2 (the expired key kept)", got)
	}
	do(t, e, c, "CLIENT", "UNPAUSE")
	for range 3 {
		clock.Advance(200 * time.Millisecond)
		e.Tick(1 << 16)
	}
	if got := do(t, e, c, "DBSIZE"); got != ":1" {
		t.Fatalf("DBSIZE after the pause: %s, want :1 (the expired key deleted)", got)
	}
}
