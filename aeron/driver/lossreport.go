package driver

import (
	"github.com/goblin-kv/goblin/internal/shm"
)

// Loss report entry layout (reports/LossReport): entries start at
// multiples of 64 bytes; the observation count is stored last, with
// release, when an entry is made.
const (
	lossObservationsOffset = 0  // int64
	lossBytesOffset        = 8  // int64
	lossFirstOffset        = 16 // int64 epoch ms
	lossLastOffset         = 24 // int64 epoch ms
	lossSessionIDOffset    = 32 // int32
	lossStreamIDOffset     = 36 // int32
	lossChannelOffset      = 40 // int32 length + ASCII; the source's length word follows, 4-byte aligned
	lossEntryAlignment     = 64
)

// reportLoss records an image's new gaps in loss-report.dat: its first
// loss makes its entry (channel and source), later ones add to the count
// and the bytes lost. A full report disables reporting for the image, as
// the Java driver does.
func (x *driverContext) reportLoss(img *publicationImage) {
	count, bytes := img.reportObservations, img.reportBytes
	img.reportObservations, img.reportBytes = 0, 0
	if !img.reportEnabled {
		return
	}
	buf := x.lossReport
	now := x.epochMs
	if img.reportEntry < 0 {
		ch, src := img.channel, img.sourceIdentity
		need := lossChannelOffset + shm.Align(4+len(ch), 4) + 4 + len(src)
		off := x.lossReportNext
		if need > len(buf)-off {
			img.reportEnabled = false
			return
		}
		shm.PutInt64(buf, off+lossBytesOffset, bytes)
		shm.PutInt64(buf, off+lossFirstOffset, now)
		shm.PutInt64(buf, off+lossLastOffset, now)
		shm.PutInt32(buf, off+lossSessionIDOffset, img.sessionID)
		shm.PutInt32(buf, off+lossStreamIDOffset, img.streamID)
		shm.PutInt32(buf, off+lossChannelOffset, int32(len(ch)))
		copy(buf[off+lossChannelOffset+4:], ch)
		srcOff := off + lossChannelOffset + shm.Align(4+len(ch), 4)
		shm.PutInt32(buf, srcOff, int32(len(src)))
		copy(buf[srcOff+4:], src)
		// Readers (LossStat) take an entry whose count they acquire as
		// positive as complete.
		shm.StoreInt64Release(buf, off+lossObservationsOffset, count)
		img.reportEntry = off
		x.lossReportNext += shm.Align(need, lossEntryAlignment)
		return
	}
	off := img.reportEntry
	shm.StoreInt64Release(buf, off+lossLastOffset, now)
	shm.GetAndAddInt64(buf, off+lossBytesOffset, bytes)
	shm.GetAndAddInt64(buf, off+lossObservationsOffset, count)
}
