package ring

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/transport"
)

// Fuzzing the record and fragment readers: a hostile client writes
// whatever records it likes into its request ring (any length, any more
// bit, any total in a first fragment), mixed with well-formed messages of
// any length, while the server's serve loop reads them and a client-side
// reader takes the replies. The server must never read out of bounds,
// hand its session anything but what the records spell under the rules of
// fragment.go (checked against a plain reference reader, refRecords), drop
// the client exactly when they are broken, and every echoed reply must
// come back whole.

// The fuzzed ring: 4 records of 64 bytes (56 of payload), messages of up
// to fuzzMax bytes.
const (
	fuzzRecords = 4
	fuzzSize    = 64
	fuzzPayload = fuzzSize - recHeader
	fuzzMax     = 512
)

// recorder is a Session that keeps every message it is given and echoes
// it, so long messages make long replies.
type recorder struct{ got [][]byte }

func (r *recorder) OpenMessage(proto.Protocol) transport.MessageSession { return r }
func (r *recorder) Close()                                              {}
func (r *recorder) ServeMessage(msg, out []byte) ([]byte, bool) {
	r.got = append(r.got, bytes.Clone(msg))
	return append(out, msg...), false
}

// refRecords is the reference reader: the messages a sequence of records
// (payloads as the consumer sees them, and more bits) spells, and whether
// the sequence breaks a rule before its end. It is written from the rules
// in fragment.go's comment, not from the assembler.
type refRecords struct {
	msgs    [][]byte
	in      bool
	total   int
	buf     []byte
	invalid bool
}

func (r *refRecords) add(p []byte, more bool) {
	if r.invalid {
		return
	}
	switch {
	case !r.in && !more:
		r.msgs = append(r.msgs, bytes.Clone(p))
		return
	case !r.in:
		if len(p) != fuzzPayload {
			r.invalid = true
			return
		}
		t := binary.LittleEndian.Uint64(p)
		if t <= fuzzPayload || t > fuzzMax {
			r.invalid = true
			return
		}
		r.in, r.total, r.buf = true, int(t), append([]byte(nil), p[fragPrefix:]...)
	default:
		if more && len(p) != fuzzPayload {
			r.invalid = true
			return
		}
		r.buf = append(r.buf, p...)
	}
	switch {
	case len(r.buf) > r.total, more && len(r.buf) == r.total, !more && len(r.buf) != r.total:
		r.invalid = true
	case !more:
		r.msgs = append(r.msgs, r.buf)
		r.in, r.buf = false, nil
	}
}

// fuzzHarness is one server-side client over plain memory, driven by hand.
type fuzzHarness struct {
	t      *testing.T
	s      *Server
	c      *client
	sess   *recorder
	cli    producer  // the hostile client's end of the request ring
	rep    consumer  // its end of the reply ring
	asm    assembler // its reader of long replies
	reply  []byte
	ref    refRecords
	echoes int // replies checked
	closed bool
}

func newFuzzHarness(t *testing.T) *fuzzHarness {
	g := newGeometry(fuzzRecords, fuzzSize)
	mem := make([]byte, g.size)
	h := &fuzzHarness{t: t, sess: &recorder{}}
	h.s = &Server{o: Options{Records: fuzzRecords, RecordSize: fuzzSize, MaxMessage: fuzzMax, Batch: 3}}
	h.c = &client{mem: mem, sess: h.sess,
		req: newConsumer(mem, g.reqBase, fuzzRecords, fuzzSize),
		rep: newProducer(mem, g.repBase, fuzzRecords, fuzzSize),
		asm: newAssembler(fuzzPayload, fuzzMax)}
	h.cli = newProducer(mem, g.reqBase, fuzzRecords, fuzzSize)
	h.rep = newConsumer(mem, g.repBase, fuzzRecords, fuzzSize)
	h.asm = newAssembler(fuzzPayload, fuzzMax)
	return h
}

// serve runs the server once, then reads every reply that is complete.
func (h *fuzzHarness) serve() {
	if h.closed {
		return
	}
	if _, closeConn := h.s.serve(h.c, h.s.o.Batch); closeConn {
		h.closed = true
	}
	for {
		p, more, ok := h.rep.peek()
		if !ok {
			h.rep.commit()
			return
		}
		var done bool
		var err error
		h.reply, done, err = h.asm.add(h.reply, p, more)
		h.rep.release()
		if err != nil {
			h.t.Fatalf("the server wrote a malformed reply: %v", err)
		}
		if done {
			if h.echoes >= len(h.sess.got) || !bytes.Equal(h.reply, h.sess.got[h.echoes]) {
				h.t.Fatalf("reply %d: %d bytes, not the echo of the request served", h.echoes, len(h.reply))
			}
			h.echoes++
			h.reply = h.reply[:0]
		}
	}
}

// room waits, serving, until the request ring has k free records; it
// reports false once the server has dropped the client.
func (h *fuzzHarness) room(k int64) bool {
	for range 1000 {
		if h.closed {
			return false
		}
		if h.cli.hasRoom(k) {
			return true
		}
		h.serve()
	}
	h.t.Fatalf("the server stopped taking requests with %d records pending", h.cli.next-h.c.req.next)
	return false
}

// raw publishes one record of the hostile client's making: n is what its
// header says (it may exceed the record), p what its payload holds.
func (h *fuzzHarness) raw(n int, more bool, p []byte) {
	if !h.room(1) {
		return
	}
	out := h.cli.claim()[:fuzzPayload]
	clear(out) // no bytes of an earlier lap
	copy(out, p)
	h.cli.publish(n, more)
	// What the server's consumer sees: at most a record's payload.
	m := min(n, fuzzPayload)
	seen := make([]byte, m)
	copy(seen, p)
	h.ref.add(seen, more)
}

// message writes msg whole, as a well-behaved client would.
func (h *fuzzHarness) message(msg []byte) {
	if len(msg) <= fuzzPayload {
		h.raw(len(msg), false, msg)
		return
	}
	var w fragmentWriter
	w.start(msg)
	for {
		if !h.room(1) {
			return
		}
		off := w.off
		done := w.next(&h.cli, false)
		// Mirror what went out into the reference.
		end := w.off
		if done {
			end = len(msg) // the writer is idle again
		}
		p, more := msg[off:end], !done
		if off == 0 {
			p = binary.LittleEndian.AppendUint64(nil, uint64(len(msg)))
			p = append(p, msg[:min(len(msg), fuzzPayload-fragPrefix)]...)
		}
		h.ref.add(p, more)
		if done {
			return
		}
	}
}

func FuzzRecords(f *testing.F) {
	// Seeds: well-formed messages of the boundary sizes; a torn first
	// fragment; an over-long header; a total beyond the limit; a fragment
	// that overruns its total; a message cut short.
	f.Add([]byte{0, 1, 'x', 0, 19, 'a', 2, 0, 20, 2, 0, 200, 2})
	f.Add([]byte{1, 0x80 | 56, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1, 5, 'a', 'b', 2})
	f.Add([]byte{1, 255, 'q', 2, 0, 3, 2})
	f.Add([]byte{3, 0xff, 0xff, 2, 1, 0x80 | 56, 2})
	f.Add([]byte{3, 0x00, 0x50, 1, 0x80 | 56, 1, 56, 1, 0x80 | 56, 2})
	f.Add([]byte{3, 0x00, 0x60, 1, 10, 2, 0, 1, 'k', 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		h := newFuzzHarness(t)
		next := func() byte {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return b
		}
		take := func(n int) []byte {
			n = min(n, len(data))
			b := data[:n]
			data = data[n:]
			return b
		}
		for len(data) > 0 && !h.closed && !h.ref.invalid {
			switch op := next(); op % 4 {
			case 0: // a well-formed message of 0 to 510 bytes (fuzzMax or less)
				n := min(int(next())*2, fuzzMax)
				msg := make([]byte, n)
				copy(msg, take(n))
				h.message(msg)
			case 1: // a raw record: length byte (bit 7: more), payload
				b := next()
				n := int(b & 0x7f)
				h.raw(n, b&0x80 != 0, take(min(n, fuzzPayload)))
			case 2:
				h.serve()
			case 3: // a raw first fragment announcing a total of two bytes' worth
				p := make([]byte, fuzzPayload)
				binary.LittleEndian.PutUint16(p, binary.BigEndian.Uint16([]byte{next(), next()}))
				copy(p[fragPrefix:], take(fuzzPayload-fragPrefix))
				h.raw(fuzzPayload, true, p)
			}
		}
		// Let the server take every record written.
		for range 100 {
			if h.closed || h.c.req.next == h.cli.next && !h.c.out.busy() {
				break
			}
			h.serve()
		}
		if h.closed != h.ref.invalid {
			t.Fatalf("server dropped the client: %v; the records are broken: %v", h.closed, h.ref.invalid)
		}
		if len(h.sess.got) != len(h.ref.msgs) {
			t.Fatalf("the session got %d messages, the records spell %d", len(h.sess.got), len(h.ref.msgs))
		}
		for i := range h.ref.msgs {
			if !bytes.Equal(h.sess.got[i], h.ref.msgs[i]) {
				t.Fatalf("message %d: session got %d bytes, the records spell %d", i, len(h.sess.got[i]), len(h.ref.msgs[i]))
			}
		}
		if !h.closed && h.echoes != len(h.sess.got) {
			t.Fatalf("%d replies read for %d requests", h.echoes, len(h.sess.got))
		}
		if h.closed && h.s.stats.Malformed != 1 {
			t.Fatalf("dropped without counting it malformed: %+v", h.s.stats)
		}
	})
}

// TestAssemblerErrors names the rules a fragment sequence can break.
func TestAssemblerErrors(t *testing.T) {
	first := func(total uint64) []byte {
		p := make([]byte, fuzzPayload)
		binary.LittleEndian.PutUint64(p, total)
		return p
	}
	full := make([]byte, fuzzPayload)
	for _, tc := range []struct {
		name string
		recs [][]byte
		more []bool
	}{
		{"short first fragment", [][]byte{first(100)[:10]}, []bool{true}},
		{"total fits one record", [][]byte{first(fuzzPayload)}, []bool{true}},
		{"total beyond the limit", [][]byte{first(fuzzMax + 1)}, []bool{true}},
		{"short middle fragment", [][]byte{first(200), full[:5]}, []bool{true, true}},
		{"overrun", [][]byte{first(60), full}, []bool{true, false}},
		{"ends short", [][]byte{first(100), full[:10]}, []bool{true, false}},
		{"more after the end", [][]byte{first(fuzzPayload - fragPrefix + fuzzPayload), full}, []bool{true, true}},
	} {
		a := newAssembler(fuzzPayload, fuzzMax)
		var err error
		for i, r := range tc.recs {
			if _, _, err = a.add(nil, r, tc.more[i]); err != nil {
				break
			}
		}
		if !errors.Is(err, errMalformed) || a.busy() {
			t.Errorf("%s: %v (busy %v), want errMalformed and an idle assembler", tc.name, err, a.busy())
		}
	}
	// Every length a writer can produce reads back.
	for n := 0; n <= fuzzMax; n++ {
		mem := make([]byte, ringBytes(64, fuzzSize))
		p, c := newProducer(mem, 0, 64, fuzzSize), newConsumer(mem, 0, 64, fuzzSize)
		msg := bytes.Repeat([]byte{byte(n)}, n)
		if n <= fuzzPayload {
			p.offer(msg)
		} else {
			var w fragmentWriter
			w.start(msg)
			for !w.next(&p, false) {
			}
		}
		if got := p.next; got != int64(fragmentCount(n, fuzzPayload)) {
			t.Fatalf("%d bytes took %d records, fragmentCount says %d", n, got, fragmentCount(n, fuzzPayload))
		}
		a := newAssembler(fuzzPayload, fuzzMax)
		var out []byte
		for {
			rec, more, ok := c.peek()
			if !ok {
				t.Fatalf("%d bytes: ran out of records", n)
			}
			var done bool
			var err error
			out, done, err = a.add(out, rec, more)
			c.release()
			if err != nil {
				t.Fatalf("%d bytes: %v", n, err)
			}
			if done {
				break
			}
		}
		if !bytes.Equal(out, msg) {
			t.Fatalf("%d bytes came back as %d", n, len(out))
		}
	}
}
