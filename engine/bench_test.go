package engine

import (
	"testing"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/internal/monotime"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/proto/sbe"
)

// hotRequests are the wire bytes of PING, SET (16-byte value) and GET in
// each protocol: RESP as redis-benchmark sends it, SBE SOFH-framed as on a
// socket and bare as on the ring or Aeron.
type hotRequest struct {
	name        string
	resp        []byte
	sbeFramed   []byte
	sbeMessage  []byte
	wantRESP    string
	wantSBEKind command.Kind
}

func hotRequests() []hotRequest {
	var c sbe.Codec
	key := []byte("key:000000000042")
	val := []byte("0123456789abcdef")
	mk := func(name string, args []string, r command.Request, want string, kind command.Kind) hotRequest {
		r.CorrelationID = 77
		return hotRequest{
			name: name, resp: resp.AppendCommandString(nil, args...),
			sbeFramed: sbe.AppendFramed(nil, &c, &r), sbeMessage: c.AppendRequest(nil, &r),
			wantRESP: want, wantSBEKind: kind,
		}
	}
	return []hotRequest{
		mk("PING", []string{"PING"}, command.Request{Op: command.OpPing, Compact: true}, "+PONG\r\n", command.Simple), // compact, as the client sends it
		mk("SET", []string{"SET", string(key), string(val)}, command.Request{Op: command.OpSet, Key: key, Value: val}, "+OK\r\n", command.Simple),
		mk("GET", []string{"GET", string(key)}, command.Request{Op: command.OpGet, Key: key}, "$16\r\n0123456789abcdef\r\n", command.Bulk),
	}
}

// benchEngine returns an engine timed as the store loop drives it (from
// its duty cycle's clock reading), holding the key GET reads, and a RESP
// and an SBE session.
func benchEngine(tb testing.TB) (*Engine, *Session, *Session) {
	e, _ := newEngine(tb, Options{})
	e.BeginCycle(monotime.Now())
	rs := NewSession(proto.RESP, nil)
	ss := NewSession(proto.SBE, nil)
	do(tb, e, rs, "SET", "key:000000000042", "0123456789abcdef")
	return e, rs, ss
}

// BenchmarkServe measures decode + execute + encode of one request,
// through the same entry points the transports call.
func BenchmarkServe(b *testing.B) {
	for _, h := range hotRequests() {
		b.Run(h.name+"/RESP", func(b *testing.B) {
			e, s, _ := benchEngine(b)
			out := make([]byte, 0, 256)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_, out, _ = e.ServeStream(s, h.resp, out[:0])
			}
			if string(out) != h.wantRESP {
				b.Fatalf("reply %q", out)
			}
		})
		b.Run(h.name+"/SBE-stream", func(b *testing.B) {
			e, _, s := benchEngine(b)
			out := make([]byte, 0, 256)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_, out, _ = e.ServeStream(s, h.sbeFramed, out[:0])
			}
		})
		b.Run(h.name+"/SBE-message", func(b *testing.B) {
			e, _, s := benchEngine(b)
			out := make([]byte, 0, 256)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				out, _ = e.ServeMessage(s, h.sbeMessage, out[:0])
			}
		})
	}
}

// BenchmarkServeCycle is BenchmarkServe's SBE-message and RESP cases as
// a ping-pong drives them, one request per loop cycle: each iteration
// begins a cycle with a reading of the clock, as the loop does, and
// serves one request, so what closing each request's batch costs
// (batchtime.go) is counted with it, and so is the loop's one clock read
// per cycle (about 35 instructions under callgrind, which counts the
// TSC read as one).
func BenchmarkServeCycle(b *testing.B) {
	for _, h := range hotRequests() {
		b.Run(h.name+"/RESP", func(b *testing.B) {
			e, s, _ := benchEngine(b)
			out := make([]byte, 0, 256)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				e.BeginCycle(monotime.Now())
				_, out, _ = e.ServeStream(s, h.resp, out[:0])
			}
		})
		b.Run(h.name+"/SBE-message", func(b *testing.B) {
			e, _, s := benchEngine(b)
			out := make([]byte, 0, 256)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				e.BeginCycle(monotime.Now())
				out, _ = e.ServeMessage(s, h.sbeMessage, out[:0])
			}
		})
	}
}

// TestServeAllocs proves with AllocsPerRun what the benchmarks report:
// PING, SET and GET in either protocol allocate nothing, nor does closing
// their batch at the next loop cycle (batchtime.go).
func TestServeAllocs(t *testing.T) {
	e, rs, ss := benchEngine(t)
	var c sbe.Codec
	var rep command.Reply
	for _, h := range hotRequests() {
		out := make([]byte, 0, 256)
		// Check the replies once, then count allocations.
		_, out, _ = e.ServeStream(rs, h.resp, out[:0])
		if string(out) != h.wantRESP {
			t.Fatalf("%s RESP reply %q", h.name, out)
		}
		out, _ = e.ServeMessage(ss, h.sbeMessage, out[:0])
		if err := c.DecodeReply(out, &rep); err != nil || rep.Kind != h.wantSBEKind || rep.CorrelationID != 77 {
			t.Fatalf("%s SBE reply %+v %v", h.name, rep, err)
		}
		for _, run := range []struct {
			name string
			f    func()
		}{
			{"RESP", func() { _, out, _ = e.ServeStream(rs, h.resp, out[:0]) }},
			{"SBE-stream", func() { _, out, _ = e.ServeStream(ss, h.sbeFramed, out[:0]) }},
			{"SBE-message", func() { out, _ = e.ServeMessage(ss, h.sbeMessage, out[:0]) }},
			// A ping-pong's cycle: the batch of one request closed (with
			// the real clock: a made-up reading would make the sampled
			// request's batch look slow and allocate a slow log entry).
			{"SBE-message-cycle", func() { e.BeginCycle(monotime.Now()); out, _ = e.ServeMessage(ss, h.sbeMessage, out[:0]) }},
			{"RESP-cycle", func() { e.BeginCycle(monotime.Now()); _, out, _ = e.ServeStream(rs, h.resp, out[:0]) }},
		} {
			if a := testing.AllocsPerRun(500, run.f); a != 0 {
				t.Errorf("%s %s allocates %.1f times per request, want 0", h.name, run.name, a)
			}
		}
	}
}

// BenchmarkServeTiming shows what command timing costs a request: "on" is
// the default (the slow log at 10 ms and latency tracking, one clock read
// per command), "slowlog-all" logs every command (slowlog-log-slower-than
// 0), "off" has neither (slowlog-log-slower-than -1, latency-tracking no):
// no clock read. One call in LatencySampling is timed for commandstats'
// usec and the latency metrics in every case.
func BenchmarkServeTiming(b *testing.B) {
	off, all := int64(-1), int64(0)
	modes := []struct {
		name string
		o    Options
	}{
		{"on", Options{}},
		{"off", Options{SlowlogSlowerThan: &off, LatencyTrackingOff: true}},
		{"slowlog-all", Options{SlowlogSlowerThan: &all, SlowlogMaxLen: 16}},
	}
	for _, h := range hotRequests() {
		for _, m := range modes {
			b.Run(h.name+"/RESP/"+m.name, func(b *testing.B) {
				e, s, _ := timingEngine(b, m.o)
				out := make([]byte, 0, 256)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					_, out, _ = e.ServeStream(s, h.resp, out[:0])
				}
				if string(out) != h.wantRESP {
					b.Fatalf("reply %q", out)
				}
			})
			b.Run(h.name+"/SBE-message/"+m.name, func(b *testing.B) {
				e, _, s := timingEngine(b, m.o)
				out := make([]byte, 0, 256)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					out, _ = e.ServeMessage(s, h.sbeMessage, out[:0])
				}
			})
		}
	}
}

// timingEngine is benchEngine with options.
func timingEngine(tb testing.TB, o Options) (*Engine, *Session, *Session) {
	e, _ := newEngine(tb, o)
	e.BeginCycle(monotime.Now())
	rs := NewSession(proto.RESP, nil)
	ss := NewSession(proto.SBE, nil)
	do(tb, e, rs, "SET", "key:000000000042", "0123456789abcdef")
	return e, rs, ss
}
