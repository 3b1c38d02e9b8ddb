package driver

import (
	"fmt"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
)

// udpPair is two manual drivers joined by a UDP stream on loopback: an
// exclusive publication on pub, its image on sub. The test plays the
// publisher (appendFrame writes frames into the log as a client's
// exclusive publication does) and the subscriber (consume moves sub-pos).
type udpPair struct {
	pub, sub *manualDriver
	p        *networkPublication
	msg      []byte
	termID   int32
	offset   int
}

func newUDPPair(t testing.TB, termLength int) *udpPair {
	o := Options{TimerInterval: 10 * time.Millisecond}
	return newUDPPairOf(t, termLength, newManualDriver(t, o), newManualDriver(t, o))
}

// newUDPPairOf joins two manual drivers as newUDPPair does.
func newUDPPairOf(t testing.TB, termLength int, pub, sub *manualDriver) *udpPair {
	channel := fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d|term-length=%d", freePort(t), termLength)
	newRawClient(sub).addSubscription(channel, 7)
	newRawClient(pub).addPublication(channel, 7, true)
	u := &udpPair{pub: pub, sub: sub, p: pub.netPublications[0], msg: make([]byte, 32)}
	u.termID = u.p.initialTermID
	deadline := time.Now().Add(30 * time.Second)
	for len(sub.images) == 0 || !u.p.isConnected {
		if time.Now().After(deadline) {
			t.Fatal("no connection over loopback")
		}
		u.step(int64(time.Millisecond))
	}
	return u
}

// step advances both clocks by dt and runs a duty cycle of each driver.
func (u *udpPair) step(dt int64) {
	for _, m := range []*manualDriver{u.pub, u.sub} {
		m.nowNs += dt
		if dt >= int64(time.Millisecond) {
			m.epochMs += dt / int64(time.Millisecond)
		}
		m.DoWork(m.nowNs)
	}
}

// appendFrame appends one unfragmented frame as an exclusive publication
// does (tail, header, payload, length last with release), padding and
// rotating at a term's end.
func (u *udpPair) appendFrame() bool {
	p := u.p
	pos := logbuffer.ComputePosition(u.termID, u.offset, p.bitsToShift, p.initialTermID)
	if pos+64 > u.pub.subPosition(p.pubLmt) {
		return false
	}
	frame := logbuffer.HeaderLength + len(u.msg)
	aligned := shm.Align(frame, logbuffer.FrameAlignment)
	idx := logbuffer.IndexByPosition(pos, p.bitsToShift)
	term := p.log.terms[idx]
	if u.offset+aligned > p.termLength {
		if u.offset < p.termLength {
			resetHeader(p.log.meta, term, u.offset, u.termID, p.termLength-u.offset)
		}
		u.termID++
		u.offset = 0
		next := (idx + 1) % logbuffer.PartitionCount
		shm.StoreInt64Release(p.log.meta, logbuffer.TermTailCountersOffset+8*next, logbuffer.PackTail(u.termID, 0))
		shm.StoreInt32Release(p.log.meta, logbuffer.ActiveTermCountOffset, u.termID-p.initialTermID)
		return u.appendFrame()
	}
	shm.StoreInt64Release(p.log.meta, logbuffer.TermTailCountersOffset+8*idx, logbuffer.PackTail(u.termID, int32(u.offset+aligned)))
	h := p.log.meta[logbuffer.DefaultFrameHeaderOffset:]
	copy(term[u.offset+4:u.offset+logbuffer.HeaderLength], h[4:logbuffer.HeaderLength])
	shm.PutInt32(term, u.offset+logbuffer.FrameTermOffsetOffset, int32(u.offset))
	shm.PutInt32(term, u.offset+logbuffer.FrameTermIDOffset, u.termID)
	copy(term[u.offset+logbuffer.HeaderLength:], u.msg)
	shm.StoreInt32Release(term, u.offset, int32(frame))
	u.offset += aligned
	return true
}

// consume moves every subscriber of the image to its high-water mark.
func (u *udpPair) consume() {
	img := u.sub.images[0]
	hwm := u.sub.subPosition(img.rebuild)
	for _, s := range img.subs {
		shm.StoreInt64Release(u.sub.values, s.off, hwm)
	}
}

// TestUDPDutyCycleAllocatesNothing: with a UDP stream flowing — the
// sender's data, status messages, the receiver's rebuild, term rotations
// and timer ticks — neither driver's duty cycle allocates.
func TestUDPDutyCycleAllocatesNothing(t *testing.T) {
	u := newUDPPair(t, 64<<10)
	for range 3000 { // past a few rotations and every timer
		u.appendFrame()
		u.step(int64(10 * time.Microsecond))
		u.consume()
	}
	sent := u.pub.subPosition(u.p.sndPos)
	allocs := testing.AllocsPerRun(5000, func() {
		u.appendFrame()
		u.step(int64(20 * time.Microsecond))
		u.consume()
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per duty cycle of the pair", allocs)
	}
	if got := u.pub.subPosition(u.p.sndPos) - sent; got < 5000*64 {
		t.Fatalf("only %d bytes sent while measuring: the stream did not flow", got)
	}
	if u.sub.counters.Value(sysStatusMessagesSent) < 10 {
		t.Fatal("the receiver sent no status messages: the window never moved")
	}
}

// BenchmarkUDPDutyCycle times a duty cycle of each driver of a pair with
// one 32-byte message crossing per iteration, and with nothing to do.
func BenchmarkUDPDutyCycle(b *testing.B) {
	b.Run("message", func(b *testing.B) {
		u := newUDPPair(b, 16<<20)
		b.ReportAllocs()
		for b.Loop() {
			u.appendFrame()
			u.step(100)
			u.consume()
		}
	})
	b.Run("idle", func(b *testing.B) {
		u := newUDPPair(b, 64<<10)
		b.ReportAllocs()
		for b.Loop() {
			u.step(100)
		}
	})
}
