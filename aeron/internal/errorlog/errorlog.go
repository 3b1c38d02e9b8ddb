// Package errorlog is the distinct error log at the end of an Aeron CnC
// file (Agrona's DistinctErrorLog and ErrorLogReader): one record per
// distinct error with its observation count and first and last observation
// times, as Aeron's ErrorStat prints them. goblin's driver writes it (Log);
// its client and tools read it (Read).
package errorlog

import (
	"github.com/goblin-kv/goblin/internal/shm"
)

// Record layout: a 24-byte header then the encoded error (ASCII), records
// aligned to 8 bytes.
const (
	LengthOffset           = 0  // int32: header + text; written last (release)
	ObservationCountOffset = 4  // int32: get-and-add by the writer
	LastObservationOffset  = 8  // int64 epoch ms: release by the writer
	FirstObservationOffset = 16 // int64 epoch ms
	EncodedErrorOffset     = 24
	RecordAlignment        = 8
)

// Record is one distinct error.
type Record struct {
	ObservationCount int32
	FirstObservation int64 // epoch ms
	LastObservation  int64 // epoch ms
	Text             string
}

// Read calls fn for every record last observed at or after since (epoch
// ms) and returns how many it passed. The writer stores a record's length
// with release after writing it; the length is read with acquire.
func Read(buf []byte, since int64, fn func(Record)) int {
	n := 0
	for off := 0; off+EncodedErrorOffset <= len(buf); {
		length := int(shm.LoadInt32Acquire(buf, off+LengthOffset))
		if length <= 0 {
			break
		}
		if off+length > len(buf) || length < EncodedErrorOffset {
			break
		}
		// Observation count and last timestamp are updated in place by the
		// writer (atomically) when an error recurs; read them atomically.
		last := shm.LoadInt64Acquire(buf, off+LastObservationOffset)
		if last >= since {
			n++
			fn(Record{
				ObservationCount: shm.LoadInt32Acquire(buf, off+ObservationCountOffset),
				FirstObservation: shm.GetInt64(buf, off+FirstObservationOffset),
				LastObservation:  last,
				Text:             string(buf[off+EncodedErrorOffset : off+length]),
			})
		}
		off += shm.Align(length, RecordAlignment)
	}
	return n
}

// HasErrors reports whether buf holds at least one record.
func HasErrors(buf []byte) bool {
	return len(buf) >= 4 && shm.LoadInt32Acquire(buf, LengthOffset) > 0
}

// Log writes a distinct error log: an error whose text was seen before
// only counts again and moves its last observation time. One goroutine at
// a time (the driver's conductor).
type Log struct {
	buf        []byte
	nextOffset int
	offsets    map[string]int // text → record offset
}

// NewLog writes into buf, which must be zeroed.
func NewLog(buf []byte) *Log { return &Log{buf: buf, offsets: make(map[string]int)} }

// Record counts one observation of text at nowMs (epoch ms). It reports
// false when the log is full and text is new.
func (l *Log) Record(text string, nowMs int64) bool {
	off, ok := l.offsets[text]
	if !ok {
		length := EncodedErrorOffset + len(text)
		if l.nextOffset+length > len(l.buf) {
			return false
		}
		off = l.nextOffset
		copy(l.buf[off+EncodedErrorOffset:], text)
		shm.PutInt64(l.buf, off+FirstObservationOffset, nowMs)
		l.nextOffset = shm.Align(off+length, RecordAlignment)
		l.offsets[text] = off
		// Length last (release): a reader that sees it sees the text.
		shm.StoreInt32Release(l.buf, off+LengthOffset, int32(length))
	}
	// Readers load these atomically while the writer updates them.
	shm.GetAndAddInt32(l.buf, off+ObservationCountOffset, 1)
	shm.StoreInt64Release(l.buf, off+LastObservationOffset, nowMs)
	return true
}
