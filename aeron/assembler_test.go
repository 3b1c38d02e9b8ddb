package aeron

import (
	"bytes"
	"testing"

	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
)

// frameAt writes one data frame into term at off and returns a Header for it.
func frameAt(term []byte, off int, session int32, flags uint8, payload []byte) *Header {
	shm.PutInt32(term, off+logbuffer.FrameLengthOffset, int32(logbuffer.HeaderLength+len(payload)))
	term[off+logbuffer.FrameFlagsOffset] = flags
	shm.PutUint16(term, off+logbuffer.FrameTypeOffset, logbuffer.FrameTypeData)
	shm.PutInt32(term, off+logbuffer.FrameTermOffsetOffset, int32(off))
	shm.PutInt32(term, off+logbuffer.FrameSessionIDOffset, session)
	copy(term[off+logbuffer.HeaderLength:], payload)
	return &Header{term: term, offset: off, bitsToShift: 16}
}

func TestFragmentAssemblerInterleavedSessions(t *testing.T) {
	var got []string
	asm := NewFragmentAssembler(func(b []byte, h *Header) {
		got = append(got, string(b))
	}, 8)
	t1 := make([]byte, 4096)
	t2 := make([]byte, 4096)
	// Session 1 and session 2 interleave their fragments (two images).
	asm.OnFragment([]byte("a1"), frameAt(t1, 0, 1, logbuffer.FlagBegin, []byte("a1")))
	asm.OnFragment([]byte("b1"), frameAt(t2, 0, 2, logbuffer.FlagBegin, []byte("b1")))
	asm.OnFragment([]byte("whole"), frameAt(t2, 64, 3, logbuffer.FlagsUnfragmented, []byte("whole")))
	asm.OnFragment([]byte("a2"), frameAt(t1, 64, 1, 0, []byte("a2")))
	asm.OnFragment([]byte("b2"), frameAt(t2, 64, 2, logbuffer.FlagEnd, []byte("b2")))
	asm.OnFragment([]byte("a3-longer-than-the-initial-buffer"), frameAt(t1, 128, 1, logbuffer.FlagEnd, []byte("a3-longer-than-the-initial-buffer")))
	want := []string{"whole", "b1b2", "a1a2a3-longer-than-the-initial-buffer"}
	if len(got) != len(want) {
		t.Fatalf("got %q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}

func TestFragmentAssemblerDropsOnGap(t *testing.T) {
	n := 0
	asm := NewFragmentAssembler(func(b []byte, h *Header) { n++ }, 0)
	term := make([]byte, 4096)
	asm.OnFragment([]byte("x"), frameAt(term, 0, 1, logbuffer.FlagBegin, []byte("x")))
	// Expected the next fragment at 64; one at 128 means a gap.
	asm.OnFragment([]byte("z"), frameAt(term, 128, 1, logbuffer.FlagEnd, []byte("z")))
	// A continuation without a beginning is ignored too.
	asm.OnFragment([]byte("q"), frameAt(term, 192, 1, logbuffer.FlagEnd, []byte("q")))
	if n != 0 {
		t.Fatalf("delivered %d messages from a broken sequence", n)
	}
	// The assembler recovers on the next BEGIN.
	asm.OnFragment([]byte("ok"), frameAt(term, 256, 1, logbuffer.FlagBegin, []byte("ok")))
	asm.OnFragment([]byte("!"), frameAt(term, 320, 1, logbuffer.FlagEnd, []byte("!")))
	if n != 1 {
		t.Fatal("no recovery after a gap")
	}
}

func TestFragmentAssemblerReusesBuffers(t *testing.T) {
	var last []byte
	asm := NewFragmentAssembler(func(b []byte, h *Header) { last = b }, 0)
	term := make([]byte, 4096)
	p := bytes.Repeat([]byte("p"), 100)
	h1 := frameAt(term, 0, 1, logbuffer.FlagBegin, p)
	h2 := frameAt(term, 160, 1, logbuffer.FlagEnd, p)
	h3 := frameAt(term, 320, 1, logbuffer.FlagsUnfragmented, p)
	asm.OnFragment(p, h1)
	asm.OnFragment(p, h2)
	allocs := testing.AllocsPerRun(100, func() {
		asm.OnFragment(p, h1)
		asm.OnFragment(p, h2)
		asm.OnFragment(p, h3)
	})
	if allocs != 0 {
		t.Fatalf("steady-state reassembly allocates %.1f times", allocs)
	}
	if len(last) != 100 {
		t.Fatal("handler not called")
	}
}
