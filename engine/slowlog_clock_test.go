package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto"
)

// countingClock is a monotonic clock for Options.Monotonic that counts its
// reads and returns at, which the test moves.
type countingClock struct {
	at    int64
	reads int
}

func (c *countingClock) now() int64 { c.reads++; return c.at }

// TestCommandClockReads: with the slow log on (the default threshold),
// a command driven by the loop's cycles reads the monotonic clock once, at
// its end; the one command in sampleEvery timed for the latency histograms
// reads it twice; a compact SBE PING on the fast path (message or framed
// stream) reads it not at all.
// Each read costs about 80 instructions, as much as the whole fast-path
// PING: two per command made RESP PING and SBE GET/SET tens of ns slower.
func TestCommandClockReads(t *testing.T) {
	const n = 40 * sampleEvery
	for _, h := range hotRequests() {
		for _, run := range []struct {
			name string
			p    proto.Protocol
			f    func(e *Engine, s *Session, out []byte) []byte
		}{
			{"RESP", proto.RESP, func(e *Engine, s *Session, out []byte) []byte { _, out, _ = e.ServeStream(s, h.resp, out); return out }},
			{"SBE-stream", proto.SBE, func(e *Engine, s *Session, out []byte) []byte {
				_, out, _ = e.ServeStream(s, h.sbeFramed, out)
				return out
			}},
			{"SBE-message", proto.SBE, func(e *Engine, s *Session, out []byte) []byte {
				out, _ = e.ServeMessage(s, h.sbeMessage, out)
				return out
			}},
		} {
			t.Run(h.name+"/"+run.name, func(t *testing.T) {
				clk := &countingClock{at: 1}
				e, _ := newEngine(t, Options{Monotonic: clk.now})
				s := NewSession(run.p, nil)
				e.BeginCycle(1)
				op := command.ByName([]byte(h.name))
				sampled := e.cmd[op].sampled
				clk.reads = 0
				out := make([]byte, 0, 256)
				for i := 0; i < n; i++ {
					out = run.f(e, s, out[:0])
				}
				timed := int(e.cmd[op].sampled - sampled) // two reads each
				want := n + timed
				if h.name == "PING" && run.p == proto.SBE {
					// The compact PING's fast path times nothing, on a
					// message transport and framed on a stream alike.
					want = 2 * timed
				}
				if timed != n/sampleEvery {
					t.Errorf("%d of %d commands timed for the histograms, want %d", timed, n, n/sampleEvery)
				}
				if clk.reads != want {
					t.Errorf("%d commands read the clock %d times, want %d (%.3f per command)", n, clk.reads, want, float64(want)/n)
				}
				if l := len(e.slow.entries); l != 0 {
					t.Errorf("%d slow log entries for commands that took no time", l)
				}
			})
		}
	}
}

// TestSlowlogTimesFromCycleStart: a command is timed from the later of the
// duty cycle's start and the previous timed command's end, so a command
// after an idle spell is not charged with it, and one that took the
// threshold is logged with its time.
func TestSlowlogTimesFromCycleStart(t *testing.T) {
	clk := &countingClock{}
	e, _ := newEngine(t, Options{Monotonic: clk.now})
	s := NewSession(proto.RESP, nil)
	ms := int64(time.Millisecond)
	slowlogLen := func() int {
		t.Helper()
		return len(e.slow.entries)
	}

	e.BeginCycle(0)
	do(t, e, s, "SET", "k", "v") // the sampled one: timed alone
	clk.at = 9 * ms
	do(t, e, s, "GET", "k") // 0 → 9 ms: under 10 ms
	if n := slowlogLen(); n != 0 {
		t.Fatalf("a GET timed at 9 ms was logged (%d entries)", n)
	}

	// An hour idle between cycles: the next command starts from its
	// cycle, not from the last command.
	clk.at = 3600_000 * ms
	e.BeginCycle(clk.at)
	clk.at += 1000
	do(t, e, s, "GET", "k")
	if n := slowlogLen(); n != 0 {
		t.Fatalf("a GET after an idle hour was logged (%d entries): timed from before the cycle", n)
	}

	// Two commands in one cycle: the second starts where the first ended.
	clk.at += 4 * ms
	do(t, e, s, "GET", "k")
	clk.at += 12 * ms
	do(t, e, s, "GET", "slow")
	if n := slowlogLen(); n != 1 {
		t.Fatalf("%d slow log entries, want the GET that took 12 ms", n)
	}
	if en := e.slow.entries[0]; en.micros != 12000 || string(en.argv[1]) != "slow" {
		t.Errorf("entry %d µs %q, want 12000 µs for GET slow", en.micros, en.argv)
	}
	if got := do(t, e, s, "SLOWLOG", "LEN"); !strings.Contains(got, "1") {
		t.Errorf("SLOWLOG LEN answered %s", got)
	}
}

// TestSlowlogWithoutCycles: an engine nobody calls BeginCycle on (tests,
// embedders without the store loop) reads the clock at a timed command's
// start too, so an idle spell is never charged to a command.
func TestSlowlogWithoutCycles(t *testing.T) {
	clk := &countingClock{}
	e, _ := newEngine(t, Options{Monotonic: clk.now})
	s := NewSession(proto.RESP, nil)
	do(t, e, s, "SET", "k", "v")
	clk.at = 3600 * int64(time.Second)
	clk.reads = 0
	do(t, e, s, "GET", "k")
	if len(e.slow.entries) != 0 || clk.reads != 2 {
		t.Errorf("GET after an idle hour: %d entries, %d clock reads; want 0 and 2", len(e.slow.entries), clk.reads)
	}
}
