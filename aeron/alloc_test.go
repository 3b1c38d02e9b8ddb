package aeron

import (
	"testing"
)

// The hot paths (offer, claim, poll, next message) must not allocate.
func TestHotPathsDoNotAllocate(t *testing.T) {
	l := newTestLog(testTermLength, 1408, 0)
	values := testCounters(1 << 62)
	p := newTestPublication(l, values)
	x := newTestExclusive(newTestLog(testTermLength, 1408, 0), testCounters(1<<62))
	img := newTestImage(l, values)
	msg := make([]byte, 32)
	big := make([]byte, 3000)
	var claim BufferClaim
	n := 0
	handler := func(b []byte, h *Header) { n += len(b) }
	ctl := func(b []byte, h *Header) ControlledAction { return ActionContinue }
	buf := make([]byte, 0, 4096)
	check := func(name string, f func()) {
		t.Helper()
		if a := testing.AllocsPerRun(200, f); a != 0 {
			t.Errorf("%s allocates %.1f times per call", name, a)
		}
	}
	drain := func() {
		if p.Offer(msg) == AdminAction {
			driverClean(l)
		}
	}
	check("Publication.Offer+Image.Poll", func() { drain(); img.Poll(handler, 10) })
	check("Publication.Offer2 fragmented+ControlledPoll", func() {
		if p.Offer2(big[:1000], big[1000:]) == AdminAction {
			driverClean(l)
		}
		img.ControlledPoll(ctl, 10)
	})
	check("Publication.TryClaim+Commit", func() {
		if p.TryClaim(32, &claim) > 0 {
			claim.Commit()
		} else {
			driverClean(l)
		}
		img.Poll(handler, 10)
	})
	check("Image.NextMessage", func() { drain(); img.NextMessage(buf[:0]) })
	check("ExclusivePublication.Offer", func() {
		if x.Offer(msg) == AdminAction {
			driverClean(x.log)
		}
	})
	parts := [][]byte{msg, msg, msg}
	check("ExclusivePublication.OfferVectored(3)", func() {
		if x.OfferVectored(parts) == AdminAction {
			driverClean(x.log)
		}
	})
}
