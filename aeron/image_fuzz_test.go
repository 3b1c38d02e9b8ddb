package aeron

import (
	"bytes"
	"testing"

	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
)

// fuzzTermLength is the term the fuzzed bytes are laid into.
const fuzzTermLength = 64 << 10

// seedTerm is the first term of a log written by a real publisher:
// messages of several lengths, fragmented ones, and padding at the term's
// end.
func seedTerm() []byte {
	l := newTestLog(fuzzTermLength, 1408, 0)
	values := testCounters(1 << 62)
	p := newTestExclusive(l, values)
	for i, n := range []int{0, 1, 31, 32, 1376, 1377, 5000, 8192} {
		p.Offer(payload(i, n))
	}
	for p.Offer(make([]byte, 3000)) > 0 {
	}
	return bytes.Clone(l.terms[0])
}

// FuzzImage lays arbitrary bytes into a term, as a publisher that does not
// follow the protocol could write them into an IPC log every client maps,
// and reads it with every reader the client has: Poll (alone and through
// a FragmentAssembler), ControlledPoll, NextMessage and PeekMessage. None
// may panic or read outside a frame; the position only moves forward, in
// whole frames, and never past the term.
func FuzzImage(f *testing.F) {
	f.Add(seedTerm())
	bad := make([]byte, 256)
	for _, length := range []int32{5, 31, 1 << 30, -7, 64} {
		b := bytes.Clone(bad)
		shm.PutInt32(b, 0, length)
		b[logbuffer.FrameFlagsOffset] = logbuffer.FlagsUnfragmented
		shm.PutUint16(b, logbuffer.FrameTypeOffset, logbuffer.FrameTypeData)
		f.Add(b)
	}
	frag := bytes.Clone(seedTerm()[:4096])
	shm.PutInt32(frag, 1408*2+96, 3) // a short length inside a fragmented message
	f.Add(frag)
	f.Fuzz(func(t *testing.T, data []byte) {
		l := newTestLog(fuzzTermLength, 1408, 0)
		copy(l.terms[0], data)
		delivered := 0
		for reader := range 6 {
			img := newTestImage(l, testCounters(1<<62))
			var asm *FragmentAssembler
			if reader == 1 {
				asm = NewFragmentAssembler(func(b []byte, _ *Header) { delivered += len(b) }, 0)
				asm.SetMaxLength(8192)
			}
			buf := make([]byte, 0, 256)
			var rs Reassembly
			last := img.Position()
			for range 4096 {
				n := 0
				switch reader {
				case 0:
					n = img.Poll(func(b []byte, h *Header) { delivered += len(b) + h.FrameLength() }, 10)
				case 1:
					n = img.Poll(asm.OnFragment, 10)
				case 2:
					n = img.ControlledPoll(func(b []byte, _ *Header) ControlledAction {
						delivered += len(b)
						if len(b)%3 == 0 {
							return ActionCommit
						}
						return ActionContinue
					}, 10)
				case 3:
					var ok bool
					if buf, ok = img.NextMessage(buf[:0]); ok {
						n = 1
					}
				case 4:
					if m, ok := img.PeekMessage(buf); ok {
						delivered += len(m)
						img.Consume()
						n = 1
					}
				case 5:
					var done bool
					before := img.Position()
					if buf, done = img.ReadMessage(buf, &rs); done {
						buf = buf[:0]
					}
					if img.Position() != before {
						n = 1
					}
				}
				pos := img.Position()
				if pos < last || pos%logbuffer.FrameAlignment != 0 || pos > fuzzTermLength {
					t.Fatalf("reader %d: position %d after %d", reader, pos, last)
				}
				if n == 0 && pos == last {
					break
				}
				last = pos
			}
		}
		_ = delivered
	})
}
