package aeron

import "github.com/goblin-kv/goblin/internal/shm"

// Distinct error log record layout (the last section of cnc.dat).
const (
	elLength           = 0
	elObservations     = 4
	elLastObservation  = 8
	elFirstObservation = 16
	elEncodedError     = 24
	elAlignment        = 8
)

// ErrorRecord is one distinct error the driver logged.
type ErrorRecord struct {
	ObservationCount int32
	FirstObservation int64 // epoch ms
	LastObservation  int64 // epoch ms
	Text             string
}

// readErrorLog calls fn for every record last observed at or after since
// (epoch ms) and returns how many it passed. The driver stores a record's
// length with release after writing it; the length is read with acquire.
func readErrorLog(buf []byte, since int64, fn func(ErrorRecord)) int {
	n := 0
	for off := 0; off+elEncodedError <= len(buf); {
		length := int(shm.LoadInt32Acquire(buf, off+elLength))
		if length <= 0 {
			break
		}
		if off+length > len(buf) || length < elEncodedError {
			break
		}
		// Observation count and last timestamp are updated in place by the
		// driver (atomically) when an error recurs; read them atomically.
		last := shm.LoadInt64Acquire(buf, off+elLastObservation)
		if last >= since {
			n++
			fn(ErrorRecord{
				ObservationCount: shm.LoadInt32Acquire(buf, off+elObservations),
				FirstObservation: shm.GetInt64(buf, off+elFirstObservation),
				LastObservation:  last,
				Text:             string(buf[off+elEncodedError : off+length]),
			})
		}
		off += align(length, elAlignment)
	}
	return n
}
