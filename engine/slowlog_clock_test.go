package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/argv"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/proto/sbe"
)

// countingClock is a monotonic clock for Options.Monotonic that counts its
// reads and returns at, which the test moves.
type countingClock struct {
	at    int64
	reads int
}

func (c *countingClock) now() int64 { c.reads++; return c.at }

// TestCommandClockReads: with the slow log on (the default threshold),
// a PING, GET or SET driven by the loop's cycles reads the monotonic clock
// not at all: a compact SBE PING is not timed, and the others, served on
// the hot paths, join the cycle's batch, which the next cycle's reading
// times (batchtime.go); the one command in sampleEvery timed for the
// latency histograms reads it twice. Once the next cycle begins, every
// command but the compact PINGs is in its latency histogram.
// (Until session 9 each hot GET, SET and RESP PING read the clock once,
// at its end: about 110 instructions of a 930-instruction SBE GET.)
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
				want := 2 * timed
				if timed != n/sampleEvery {
					t.Errorf("%d of %d commands timed for the histograms, want %d", timed, n, n/sampleEvery)
				}
				if clk.reads != want {
					t.Errorf("%d commands read the clock %d times, want %d (%.3f per command)", n, clk.reads, want, float64(want)/n)
				}
				e.BeginCycle(1) // the loop's next cycle closes the batch
				if l := len(e.slow.entries); l != 0 {
					t.Errorf("%d slow log entries for commands that took no time", l)
				}
				inHist := 0
				if hist := e.lat.hist[op]; hist != nil {
					inHist = int(hist.total)
				}
				wantHist := n
				if h.name == "PING" && run.p == proto.SBE {
					wantHist = timed // the compact PING's fast path times nothing
				}
				if inHist != wantHist {
					t.Errorf("%d of %d commands in the latency histogram, want %d", inHist, n, wantHist)
				}
			})
		}
	}
}

// TestSlowlogTimesFromCycleStart: a command timed on its own is timed
// from the later of the duty cycle's start and the previous timed
// command's end, so a command after an idle spell is not charged with it,
// and one that took the threshold is logged with its time. (STRLEN: a GET
// is served on the hot path and timed with its batch, see
// TestSlowlogBatches.)
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
	do(t, e, s, "STRLEN", "k") // 0 → 9 ms: under 10 ms
	if n := slowlogLen(); n != 0 {
		t.Fatalf("a STRLEN timed at 9 ms was logged (%d entries)", n)
	}

	// An hour idle between cycles: the next command starts from its
	// cycle, not from the last command.
	clk.at = 3600_000 * ms
	e.BeginCycle(clk.at)
	clk.at += 1000
	do(t, e, s, "STRLEN", "k")
	if n := slowlogLen(); n != 0 {
		t.Fatalf("a STRLEN after an idle hour was logged (%d entries): timed from before the cycle", n)
	}

	// Two commands in one cycle: the second starts where the first ended.
	clk.at += 4 * ms
	do(t, e, s, "STRLEN", "k")
	clk.at += 12 * ms
	do(t, e, s, "STRLEN", "slow")
	if n := slowlogLen(); n != 1 {
		t.Fatalf("%d slow log entries, want the STRLEN that took 12 ms", n)
	}
	if en := e.slow.entries[0]; en.micros != 12000 || string(en.argv[1]) != "slow" {
		t.Errorf("entry %d µs %q, want 12000 µs for STRLEN slow", en.micros, en.argv)
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

// TestSlowlogBatches: hot requests (PING, GET, SET) served in a loop
// cycle are timed together when the next cycle begins (batchtime.go): a
// batch under the threshold logs nothing, one that took it is logged as
// its last request with the batch's time, words cut as the slow log cuts
// them, in either protocol; the latency histograms count each request
// with its share of the batch.
func TestSlowlogBatches(t *testing.T) {
	ms := int64(time.Millisecond)
	long := strings.Repeat("v", 200)
	for _, p := range []proto.Protocol{proto.RESP, proto.SBE} {
		t.Run(p.String(), func(t *testing.T) {
			clk := &countingClock{}
			e, _ := newEngine(t, Options{Monotonic: clk.now})
			s := NewSession(p, nil)
			serve := func(args ...string) {
				t.Helper()
				if p == proto.RESP { // a stream, where RESP's hot path is
					in := resp.AppendCommandString(nil, args...)
					if n, _, closed := e.ServeStream(s, in, nil); n != len(in) || closed {
						t.Fatalf("%q: %d of %d bytes served, closed %v", args, n, len(in), closed)
					}
					return
				}
				words := make([][]byte, len(args))
				for i, a := range args {
					words[i] = []byte(a)
				}
				var d argv.Decoder
				var r command.Request
				if !d.Decode(&r, words) {
					t.Fatalf("%q does not decode", args)
				}
				var c sbe.Codec
				if _, closed := e.ServeMessage(s, c.AppendRequest(nil, &r), nil); closed {
					t.Fatalf("%q closed the session", args)
				}
			}
			e.BeginCycle(0)
			serve("SET", "k", "v") // the sampled one: timed alone
			e.BeginCycle(clk.at)
			hist := func(op command.Op) uint64 {
				if h := e.lat.hist[op]; h != nil {
					return h.total
				}
				return 0
			}
			sets := hist(command.OpSet)
			clk.reads = 0

			// Three requests in 9 ms: under the threshold.
			serve("GET", "k")
			serve("SET", "k", "w")
			serve("PING")
			clk.at += 9 * ms
			if e.batch.n != 3 || clk.reads != 0 {
				t.Fatalf("batch of %d after three hot requests, %d clock reads; want 3 and none", e.batch.n, clk.reads)
			}
			e.BeginCycle(clk.at)
			if n := len(e.slow.entries); n != 0 {
				t.Fatalf("a batch of 9 ms was logged (%d entries)", n)
			}
			if g, st := hist(command.OpGet), hist(command.OpSet); g != 1 || st != sets+1 {
				t.Errorf("histograms count %d GETs and %d SETs, want 1 and %d", g, st, sets+1)
			}

			// A batch of 12 ms: its last request is logged with 12 ms.
			serve("GET", "k")
			serve("SET", "slow", long)
			clk.at += 12 * ms
			e.BeginCycle(clk.at)
			if n := len(e.slow.entries); n != 1 {
				t.Fatalf("%d slow log entries, want the batch of 12 ms", n)
			}
			en := e.slow.entries[0]
			want := []string{"SET", "slow", long[:128] + "... (72 more bytes)"}
			if en.micros != 12000 || len(en.argv) != 3 || string(en.argv[0]) != want[0] || string(en.argv[1]) != want[1] || string(en.argv[2]) != want[2] {
				t.Errorf("entry %d µs %q, want 12000 µs %q", en.micros, en.argv, want)
			}
			if g := hist(command.OpGet); g != 2 {
				t.Errorf("the GET histogram counts %d, want 2", g)
			}

			// A command that reads the slow log or the histograms sees
			// the requests before it in its cycle.
			admin := NewSession(proto.RESP, nil)
			serve("GET", "k")
			clk.at += 12 * ms
			if got := do(t, e, admin, "SLOWLOG", "LEN"); got != ":2" {
				t.Errorf("SLOWLOG LEN after a slow GET in the same cycle answered %s, want :2", got)
			}
			if g := hist(command.OpGet); g != 3 {
				t.Errorf("the GET histogram counts %d after SLOWLOG LEN, want 3", g)
			}

			// A command timed on its own after a batch in the same cycle
			// starts where the batch ends: it is not charged for the
			// batch's 12 ms, nor the batch for it.
			n0 := len(e.slow.entries)
			serve("GET", "k")
			clk.at += 12 * ms
			if got := do(t, e, admin, "INCR", "counter"); got != ":1" {
				t.Fatalf("INCR answered %s", got)
			}
			e.BeginCycle(clk.at)
			if n := len(e.slow.entries); n != n0+1 {
				t.Fatalf("%d new slow log entries after a 12 ms batch and an instant INCR, want the batch's one", n-n0)
			}
			for _, en := range e.slow.entries {
				if strings.EqualFold(string(en.argv[0]), "INCR") {
					t.Errorf("INCR, which took no time, was logged with %d µs: the batch before it", en.micros)
				}
			}

			// The loop's own long work (Tick, watched by the latency
			// monitor here) is not charged to the batch before it.
			if got := do(t, e, admin, "CONFIG", "SET", "latency-monitor-threshold", "100"); got != "+OK" {
				t.Fatalf("CONFIG SET latency-monitor-threshold answered %s", got)
			}
			e.BeginCycle(clk.at)
			n0 = len(e.slow.entries)
			serve("GET", "k")
			if e.batch.n != 1 {
				t.Fatalf("GET with the latency monitor on was not batched (batch of %d)", e.batch.n)
			}
			clk.at += ms
			e.Tick(1000)
			clk.at += 20 * ms // as if Tick had taken 20 ms
			e.BeginCycle(clk.at)
			if n := len(e.slow.entries); n != n0 {
				t.Errorf("a 1 ms batch followed by 20 ms of Tick left %d slow log entries, want none", n-n0)
			}
		})
	}
}

// TestBatchKeepsWords: the batch's record of its last request (untimed:
// keepShort's two moves for words of 8 to 16 bytes, keepLong for the
// rest) holds the first bytes of the key and value, at most the slow
// log's 128, and their lengths, for words of every length around the
// moves' range and the slow log's cut, over a record that held other
// words before.
func TestBatchKeepsWords(t *testing.T) {
	e, _ := newEngine(t, Options{})
	s := NewSession(proto.SBE, nil)
	word := func(n int, c byte) []byte {
		w := make([]byte, n)
		for i := range w {
			w[i] = c + byte(i%26)
		}
		return w
	}
	lens := []int{0, 1, 7, 8, 9, 15, 16, 17, 127, 128, 129, 200}
	for _, kn := range lens {
		for _, vn := range lens {
			l := &e.batch.last
			for i := range l.key { // scribble what an earlier request left
				l.key[i], l.val[i] = '#', '#'
			}
			key, value := word(kn, 'a'), word(vn, 'A')
			e.untimed(s, command.OpSet, key, value, hotSet)
			kk, vk := min(kn, slowlogMaxString), min(vn, slowlogMaxString)
			if l.keyN != kn || l.valN != vn || string(l.key[:kk]) != string(key[:kk]) || string(l.val[:vk]) != string(value[:vk]) {
				t.Errorf("key %d and value %d bytes: kept %d %q and %d %q", kn, vn, l.keyN, l.key[:kk], l.valN, l.val[:vk])
			}
		}
	}
}

// TestSampledServedInPlace: the one request in sampleEvery timed for the
// latency histograms, a GET or SET over RESP or SBE, is served on the
// in-place hot path (no Request decoded, no argument vector made) and
// counted as the general path counts it: timed alone by two clock
// readings (the first closes the batch before it), in commandstats'
// sampled calls and the histogram, and logged with its own words and
// time when it took the threshold. The clock here moves 20 ms at every
// reading, so every batch and every sampled request is slow.
func TestSampledServedInPlace(t *testing.T) {
	const n = 2 * sampleEvery
	for _, h := range hotRequests()[1:] { // SET, GET
		for _, run := range []struct {
			name string
			p    proto.Protocol
			f    func(e *Engine, s *Session, out []byte) []byte
		}{
			{"RESP", proto.RESP, func(e *Engine, s *Session, out []byte) []byte { _, out, _ = e.ServeStream(s, h.resp, out); return out }},
			{"SBE-message", proto.SBE, func(e *Engine, s *Session, out []byte) []byte {
				out, _ = e.ServeMessage(s, h.sbeMessage, out)
				return out
			}},
		} {
			t.Run(h.name+"/"+run.name, func(t *testing.T) {
				const step = 20 * int64(time.Millisecond)
				clk := &countingClock{at: 1}
				e, _ := newEngine(t, Options{Monotonic: func() int64 { clk.at += step; return clk.now() }})
				s := NewSession(run.p, nil)
				do(t, e, NewSession(proto.RESP, nil), "SET", "key:000000000042", "0123456789abcdef")
				e.BeginCycle(clk.now())
				run.f(e, s, nil) // the session's first request resolves its user: the general way
				e.BeginCycle(clk.now())
				e.sampleLeft = sampleEvery // the count starts afresh: requests sampleEvery*k are the sampled ones
				e.slow.entries = e.slow.entries[:0]
				op := command.ByName([]byte(h.name))
				sampled, inHist := e.cmd[op].sampled, e.lat.hist[op].total
				e.req, e.argv = command.Request{}, nil
				out := make([]byte, 0, 256)
				for range n {
					out = run.f(e, s, out[:0])
				}
				if e.req.Op != command.OpNone || e.argv != nil {
					t.Errorf("a request went the general way (Request %v, %d words)", e.req.Op, len(e.argv))
				}
				if got := e.cmd[op].sampled - sampled; got != n/sampleEvery {
					t.Errorf("%d requests timed for the histograms, want %d", got, n/sampleEvery)
				}
				if got := e.lat.hist[op].total - inHist; got != n { // each sampled request and the batch before it
					t.Errorf("%d requests in the latency histogram, want %d", got, n)
				}
				// Each sampled request: the batch before it (its last request),
				// then the request itself, both 20 ms.
				if len(e.slow.entries) != 2*n/sampleEvery {
					t.Fatalf("%d slow log entries, want %d", len(e.slow.entries), 2*n/sampleEvery)
				}
				want := "GET key:000000000042"
				if op == command.OpSet {
					want = "SET key:000000000042 0123456789abcdef"
				}
				for i, en := range e.slow.entries {
					var w []string
					for _, a := range en.argv {
						w = append(w, string(a))
					}
					if got := strings.Join(w, " "); !strings.EqualFold(got, want) || en.micros != step/1000 {
						t.Errorf("slow log entry %d: %q %d µs, want %q %d µs", i, got, en.micros, want, step/1000)
					}
				}
			})
		}
	}
}
