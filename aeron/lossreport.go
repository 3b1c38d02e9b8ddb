package aeron

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/goblin-kv/goblin/internal/shm"
)

// LossReportFile is the media driver's loss report in its Aeron directory:
// one entry per stream on which its receiver saw gaps (data that had to be
// retransmitted or was never recovered), as Aeron's LossStat reads it.
const LossReportFile = "loss-report.dat"

// Loss report entry layout. Entries start at multiples of 64 bytes; the
// driver writes every field, then stores the observation count (1) with
// release, and later updates the count and bytes lost atomically and the
// last observation plainly.
const (
	lrObservations  = 0  // int64
	lrBytesLost     = 8  // int64
	lrFirst         = 16 // int64, epoch ms
	lrLast          = 24 // int64, epoch ms
	lrSessionID     = 32 // int32
	lrStreamID      = 36 // int32
	lrChannel       = 40 // int32 length then US-ASCII; the source likewise, 4-byte aligned after it
	lrStringAlign   = 4  // the source's length word starts at lrChannel + align(4 + channel length, 4)
	lrEntryAlign    = 64
	lrMinEntryBytes = lrChannel + 8
)

// LossEntry is the loss the driver observed on one stream.
type LossEntry struct {
	Observations     int64 // loss events
	BytesLost        int64 // total bytes in the gaps
	FirstObservation time.Time
	LastObservation  time.Time
	SessionID        int32
	StreamID         int32
	Channel          string
	Source           string // the sender's address
}

// ReadLossReport calls fn for every entry of dir's loss report and returns
// how many there were. It maps the file for the call only; a driver that
// never saw loss has an empty report.
func ReadLossReport(dir string, fn func(LossEntry)) (int, error) {
	path := filepath.Join(dir, LossReportFile)
	buf, err := shm.Map(path)
	if err != nil {
		return 0, err
	}
	defer shm.Unmap(buf)
	n, err := readLossReport(buf, fn)
	if err != nil {
		return n, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}

// readLossReport walks the entries in buf. An entry's observation count
// is stored last with release when the entry is created, so an acquire
// load that sees it positive sees the whole entry; a zero count ends the
// report.
func readLossReport(buf []byte, fn func(LossEntry)) (int, error) {
	n := 0
	for off := 0; off+lrMinEntryBytes <= len(buf); {
		count := shm.LoadInt64Acquire(buf, off+lrObservations)
		if count <= 0 {
			break
		}
		channel, next, ok := asciiAt(buf, off+lrChannel)
		if !ok {
			return n, fmt.Errorf("loss report entry at %d: channel runs past the end", off)
		}
		// The driver writes the source's length word on a 4-byte boundary
		// (Aeron's LossReport.createEntry), not right after the channel.
		source, end, ok := asciiAt(buf, off+lrChannel+shm.Align(next-(off+lrChannel), lrStringAlign))
		if !ok {
			return n, fmt.Errorf("loss report entry at %d: source runs past the end", off)
		}
		fn(LossEntry{
			Observations:     count,
			BytesLost:        shm.LoadInt64Acquire(buf, off+lrBytesLost),
			FirstObservation: time.UnixMilli(shm.GetInt64(buf, off+lrFirst)),
			// Written plainly by the driver's receiver; a torn read is
			// impossible for an aligned 8-byte load on 64-bit hosts.
			LastObservation: time.UnixMilli(shm.LoadInt64Acquire(buf, off+lrLast)),
			SessionID:       shm.GetInt32(buf, off+lrSessionID),
			StreamID:        shm.GetInt32(buf, off+lrStreamID),
			Channel:         channel,
			Source:          source,
		})
		n++
		off += shm.Align(end-off, lrEntryAlign)
	}
	return n, nil
}

// asciiAt reads the length-prefixed (int32) string at off and returns it
// and the offset just after it.
func asciiAt(buf []byte, off int) (string, int, bool) {
	if off+4 > len(buf) {
		return "", 0, false
	}
	l := int(shm.GetInt32(buf, off))
	if l < 0 || l > len(buf)-off-4 {
		return "", 0, false
	}
	return string(buf[off+4 : off+4+l]), off + 4 + l, true
}

// WriteLossReport writes the entries of dir's loss report as Aeron's
// LossStat prints them and returns how many there were.
func WriteLossReport(w io.Writer, dir string) (int, error) {
	var werr error
	_, werr = fmt.Fprintln(w, "#OBSERVATION_COUNT,TOTAL_BYTES_LOST,FIRST_OBSERVATION,LAST_OBSERVATION,SESSION_ID,STREAM_ID,CHANNEL,SOURCE")
	n, err := ReadLossReport(dir, func(e LossEntry) {
		if werr != nil {
			return
		}
		_, werr = fmt.Fprintf(w, "%d,%d,%s,%s,%d,%d,%s,%s\n", e.Observations, e.BytesLost,
			e.FirstObservation.UTC().Format(time.RFC3339Nano), e.LastObservation.UTC().Format(time.RFC3339Nano),
			e.SessionID, e.StreamID, e.Channel, e.Source)
	})
	if err != nil {
		return n, err
	}
	if werr == nil {
		_, werr = fmt.Fprintf(w, "%d loss entries.\n", n)
	}
	return n, werr
}
