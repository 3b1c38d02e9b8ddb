package aeron

import (
	"github.com/goblin-kv/goblin/aeron/internal/counters"
	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
)

// Helpers that build Aeron structures on plain Go memory, laid out the way
// the media driver lays them out, so the client's algorithms can be tested
// without a driver.

const (
	testSessionID = 0x1234
	testStreamID  = 77
)

// newTestLog builds a log buffer as the driver initialises one (§9.5 of
// the protocol notes): partition 0 at initialTermID, the others holding the
// "expected term id - 3" placeholders, active term count 0.
func newTestLog(termLength, mtu int, initialTermID int32) *logBuffer {
	data := make([]byte, 3*termLength+logbuffer.MetadataLength)
	meta := data[3*termLength:]
	shm.PutInt64(meta, logbuffer.TermTailCountersOffset, logbuffer.PackTail(initialTermID, 0))
	for i := 1; i < logbuffer.PartitionCount; i++ {
		shm.PutInt64(meta, logbuffer.TermTailCountersOffset+8*i, logbuffer.PackTail(initialTermID+int32(i)-logbuffer.PartitionCount, 0))
	}
	shm.PutInt32(meta, logbuffer.InitialTermIDOffset, initialTermID)
	shm.PutInt32(meta, logbuffer.MTULengthOffset, int32(mtu))
	shm.PutInt32(meta, logbuffer.TermLengthOffset, int32(termLength))
	shm.PutInt32(meta, logbuffer.PageSizeOffset, 4096)
	shm.PutInt32(meta, logbuffer.DefaultFrameHeaderLengthOffset, logbuffer.HeaderLength)
	shm.PutInt64(meta, logbuffer.EndOfStreamPositionOffset, 1<<63-1)
	shm.PutInt32(meta, logbuffer.IsConnectedOffset, 1)
	h := meta[logbuffer.DefaultFrameHeaderOffset:]
	h[logbuffer.FrameVersionOffset] = 0
	h[logbuffer.FrameFlagsOffset] = logbuffer.FlagsUnfragmented
	shm.PutUint16(h, logbuffer.FrameTypeOffset, logbuffer.FrameTypeData)
	shm.PutInt32(h, logbuffer.FrameSessionIDOffset, testSessionID)
	shm.PutInt32(h, logbuffer.FrameStreamIDOffset, testStreamID)
	shm.PutInt32(h, logbuffer.FrameTermIDOffset, initialTermID)
	l, err := newLogBuffer(data)
	if err != nil {
		panic(err)
	}
	return l
}

// testCounters is a values buffer with counter 0 the publisher limit and
// counter 1 the subscriber position.
func testCounters(limit int64) []byte {
	v := make([]byte, 4*counters.ValueLength)
	shm.PutInt64(v, 0, limit)
	return v
}

func newTestPublication(l *logBuffer, values []byte) *Publication {
	p := &Publication{}
	p.init(nil, values, l, 0)
	p.sessionID, p.streamID = testSessionID, testStreamID
	return p
}

func newTestExclusive(l *logBuffer, values []byte) *ExclusivePublication {
	p := &ExclusivePublication{}
	p.init(nil, values, l, 0)
	p.initTail()
	return p
}

func newTestImage(l *logBuffer, values []byte) *Image {
	return newImage(nil, l, values, 1, 1, testSessionID, "test")
}

// driverClean plays the driver's part of zeroing the partition the
// publication will rotate into next, once readers are past it.
func driverClean(l *logBuffer) {
	next := (int(l.activeTermCount()) + 1) % logbuffer.PartitionCount
	clear(l.terms[next])
}
