package driver

import (
	"math"
	"math/rand/v2"

	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
)

// delayGenerator says how long a receiver waits before it NAKs a gap, and
// between NAKs of the same gap (FeedbackDelayGenerator).
type delayGenerator struct {
	staticNs, retryNs int64
	// multicast: the optimal randomised delay of a group of receivers
	// (OptimalMulticastDelayGenerator), a fresh draw for each NAK.
	optimal                            bool
	randMax, baseX, constantT, factorT float64
}

func staticDelay(delayNs, retryNs int64) delayGenerator {
	return delayGenerator{staticNs: delayNs, retryNs: retryNs}
}

// optimalDelay is the generator for multicast receivers: λ = ln(groupSize)
// + 1 over a maximum back-off of maxBackoffNs.
func optimalDelay(maxBackoffNs int64, groupSize int) delayGenerator {
	t := float64(maxBackoffNs)
	lambda := math.Log(float64(groupSize)) + 1
	return delayGenerator{optimal: true, randMax: lambda / t, baseX: lambda / (t * (math.Exp(lambda) - 1)),
		constantT: t / lambda, factorT: (math.Exp(lambda) - 1) * (t / lambda)}
}

func (g *delayGenerator) delay() int64 {
	if g.optimal {
		x := rand.Float64()*g.randMax + g.baseX
		return int64(g.constantT * math.Log(x*g.factorT))
	}
	return g.staticNs
}

func (g *delayGenerator) retry() int64 {
	if g.optimal {
		return g.delay()
	}
	return g.retryNs
}

// lossDetector finds the first gap in a term between the rebuild position
// and the high-water mark and times it (LossDetector): a new gap arms a
// timer of the generator's delay; when it fires the gap is reported, and
// re-armed with the retry delay while the gap stays.
type lossDetector struct {
	gen        delayGenerator
	deadlineNs int64
	armed      bool

	scannedTermID, scannedOffset, scannedLength int32
	activeTermID, activeOffset, activeLength    int32
}

func newLossDetector(gen delayGenerator) lossDetector {
	return lossDetector{gen: gen, scannedOffset: -1, activeOffset: -1}
}

// scan walks term from rebuildPosition towards hwm and returns the offset
// where the committed frames end (the new rebuild offset) and whether a
// new gap was found; when a gap's timer fires, onGap is called with it.
func (l *lossDetector) scan(term []byte, rebuildPosition, hwmPosition, nowNs int64, termLengthMask int64, bits int,
	initialTermID int32, onGap func(termID, termOffset, length int32)) (int, bool) {
	rebuildOffset := int(rebuildPosition & termLengthMask)
	lossFound := false
	l.armed = false
	if rebuildPosition < hwmPosition {
		rebuildTermCount := int32(rebuildPosition >> bits)
		hwmTermCount := int32(hwmPosition >> bits)
		rebuildTermID := initialTermID + rebuildTermCount
		limit := int(termLengthMask + 1)
		if rebuildTermCount == hwmTermCount {
			limit = int(hwmPosition & termLengthMask)
		}
		rebuildOffset = l.scanForGap(term, rebuildTermID, rebuildOffset, limit)
		if rebuildOffset < limit {
			if l.scannedOffset != l.activeOffset || l.scannedTermID != l.activeTermID || l.scannedLength != l.activeLength {
				l.activeTermID, l.activeOffset, l.activeLength = l.scannedTermID, l.scannedOffset, l.scannedLength
				l.deadlineNs = nowNs + l.gen.delay()
				lossFound = true
			}
			l.armed = true
			if l.deadlineNs-nowNs <= 0 {
				onGap(l.activeTermID, l.activeOffset, l.activeLength)
				l.deadlineNs = nowNs + l.gen.retry()
			}
		}
	}
	return rebuildOffset, lossFound
}

// scanForGap is TermGapScanner.scanForGap: skip committed frames from
// offset; a zero length before limit starts a gap that runs, in frame
// alignment steps, to the next non-zero length or limit.
func (l *lossDetector) scanForGap(term []byte, termID int32, offset, limit int) int {
	for {
		// Frame lengths: written last with release by the rebuilder (this
		// goroutine) or not at all; acquire for the client-side readers'
		// sake of symmetry.
		frameLength := shm.LoadInt32Acquire(term, offset)
		if frameLength <= 0 {
			break
		}
		offset += shm.Align(int(frameLength), logbuffer.FrameAlignment)
		if offset >= limit {
			break
		}
	}
	gapBegin := offset
	if offset < limit {
		offset += logbuffer.HeaderLength
		for offset < limit && shm.LoadInt32Acquire(term, offset) == 0 {
			offset += logbuffer.HeaderLength
		}
		l.scannedTermID, l.scannedOffset, l.scannedLength = termID, int32(gapBegin), int32(offset-gapBegin)
	}
	return gapBegin
}

// deadline is when the open gap's timer fires; false when the last scan
// found no gap.
func (l *lossDetector) deadline() (int64, bool) { return l.deadlineNs, l.armed }
