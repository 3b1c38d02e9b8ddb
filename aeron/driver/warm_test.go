package driver

import (
	"testing"

	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
)

// TestWarmAheadStaysInItsTerm: warmAhead loads from the line of pos on,
// never past its term's end (a position near the end, at the end of the
// last term, in a small term), and allocates nothing.
func TestWarmAheadStaysInItsTerm(t *testing.T) {
	const termLength = 64 << 10
	bits := logbuffer.PositionBitsToShift(termLength)
	var terms [logbuffer.PartitionCount][]byte
	for i := range terms {
		terms[i] = make([]byte, termLength)
		terms[i][0] = byte(i + 1) // each term's first word tells which term was read
	}
	d := &Driver{}
	for _, pos := range []int64{0, 32, termLength - 64, termLength - 8, 2*termLength - 1, 3*termLength - 64} {
		d.warmSink = 0
		d.warmAhead(&terms, pos, bits, termLength) // panics past a term's end
		want := int64(0)
		if pos&(termLength-1) < 64 {
			want = int64(logbuffer.IndexByPosition(pos, bits) + 1)
		}
		if d.warmSink != want {
			t.Fatalf("pos %d: loaded %d, want %d (the first word of term %d only when its first line is in reach)",
				pos, d.warmSink, want, logbuffer.IndexByPosition(pos, bits))
		}
	}
	if a := testing.AllocsPerRun(100, func() { d.warmAhead(&terms, termLength-100, bits, termLength) }); a != 0 {
		t.Fatalf("%v allocations per warmAhead", a)
	}
}
