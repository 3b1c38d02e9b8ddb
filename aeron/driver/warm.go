package driver

import (
	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
)

// warmLines is how many cache lines from a log's next write position a
// duty cycle loads (warmAhead).
const warmLines = 4

// warmAhead loads the cache lines of the term at pos and the few after it
// (not past the term's end), where the next frames of a log will be
// written: by the receiver for an image, by a publisher's Offer for a
// publication. A line a core has loaded alone it may then write without
// a miss, and a page not yet touched faults here, so neither stands
// between a datagram and its reply. The loads are atomic (acquire) reads
// of words others may be writing; their values are dropped.
func (c *conductor) warmAhead(terms *[logbuffer.PartitionCount][]byte, pos int64, bitsToShift, termLength int) {
	term := terms[logbuffer.IndexByPosition(pos, bitsToShift)]
	off := int(pos&int64(termLength-1)) &^ 63
	end := min(off+warmLines*64, termLength)
	var sink int64
	for ; off < end; off += 64 {
		sink += shm.LoadInt64Acquire(term, off)
	}
	c.warmSink += sink
}
