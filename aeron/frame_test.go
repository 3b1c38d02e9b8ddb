package aeron

import (
	"bytes"
	"testing"

	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
)

// TestExclusiveOfferFastPath checks the exclusive publisher's fast path
// (assembly on amd64 without -race, its portable twin otherwise) against
// the reader: every length from 0 to 200 split at every point between the
// two parts of Offer2, byte for byte, with the header fields and positions
// a reader sees, across term rotations (which take the slow path).
func TestExclusiveOfferFastPath(t *testing.T) {
	l := newTestLog(testTermLength, 1408, 77)
	values := testCounters(1 << 62)
	p := newTestExclusive(l, values)
	img := newTestImage(l, values)
	var want []byte
	var got int
	handler := func(buf []byte, h *Header) {
		if !bytes.Equal(buf, want) {
			t.Fatalf("message %d: got %x, want %x", got, buf, want)
		}
		if h.SessionID() != testSessionID || h.StreamID() != testStreamID || h.Type() != logbuffer.FrameTypeData || h.Flags() != logbuffer.FlagsUnfragmented {
			t.Fatalf("header session %d stream %d type %d flags %x", h.SessionID(), h.StreamID(), h.Type(), h.Flags())
		}
		if h.Position() != p.Position() {
			t.Fatalf("header position %d, publication %d", h.Position(), p.Position())
		}
		got++
	}
	sent := 0
	for length := 0; length <= 200; length++ {
		msg := payload(length, length)
		for split := 0; split <= length; split++ {
			want = msg
			var pos int64
			for tries := 0; ; tries++ {
				if pos = p.Offer2(msg[:split], msg[split:]); pos > 0 {
					break
				}
				if pos != AdminAction || tries > 2 {
					t.Fatalf("offer of %d bytes: %s", length, StatusString(pos))
				}
				driverClean(l)
			}
			sent++
			if pos != p.Position() {
				t.Fatalf("offer returned %d, Position %d", pos, p.Position())
			}
			for k := 0; img.Position() < pos && k < 3; k++ {
				img.Poll(handler, 10)
			}
			if got != sent || img.Position() != pos {
				t.Fatalf("after %d offers the reader has %d at %d, want %d", sent, got, img.Position(), pos)
			}
		}
	}
	if tc := l.activeTermCount(); tc < 10 {
		t.Fatalf("only %d rotations; the test should cross many terms", tc)
	}
}

// TestExclusiveOfferAtLimit checks that an offer at the publisher limit
// writes nothing and reports back pressure, and that raising the limit
// lets the same offer through.
func TestExclusiveOfferAtLimit(t *testing.T) {
	l := newTestLog(testTermLength, 1408, 0)
	values := testCounters(0)
	p := newTestExclusive(l, values)
	msg := payload(1, 40)
	if r := p.Offer(msg); r != BackPressured {
		t.Fatalf("offer at limit 0: %s, want BACK_PRESSURED", StatusString(r))
	}
	if tail := shm.GetInt64(l.meta, logbuffer.TermTailCountersOffset); tail != logbuffer.PackTail(0, 0) {
		t.Fatalf("a refused offer moved the raw tail to %x", tail)
	}
	if n := shm.GetInt32(l.terms[0], 0); n != 0 {
		t.Fatalf("a refused offer wrote a frame length %d", n)
	}
	shm.PutInt64(values, 0, 1<<20)
	if r := p.Offer(msg); r != 96 {
		t.Fatalf("offer after raising the limit: %s, want position 96", StatusString(r))
	}
	if n := shm.GetInt32(l.terms[0], 0); n != 72 {
		t.Fatalf("frame length %d, want 72", n)
	}
}
