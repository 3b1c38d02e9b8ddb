package driver

import (
	"fmt"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron/internal/command"
	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
)

// deadClaim is a concurrent IPC publication whose publisher's client is
// about to die, with one subscriber of another, live client, driven by a
// manual driver.
type deadClaim struct {
	m        *manualDriver
	alive    *rawClient
	pub, sub int64
	hbAlive  int32
	hbDead   int32 // the publisher's client's heartbeat counter
	subPos   position
	p        *ipcPublication
	term     []byte
}

// Where the dead publisher left the log: one committed 64-byte frame, then
// a 96-byte claim it never committed; the tail is past the claim.
const (
	committedLen = 64
	claimAt      = committedLen
	claimLen     = 96
)

// newDeadClaim sets the log up; headerWritten says whether the publisher
// wrote the claim's header (its length negated) before it died, or only
// moved the tail.
func newDeadClaim(t *testing.T, headerWritten bool) *deadClaim {
	t.Helper()
	m := newManualDriver(t, Options{TimerInterval: 20 * time.Millisecond, ClientLivenessTimeout: 200 * time.Millisecond,
		PublicationUnblockTimeout: 400 * time.Millisecond})
	dead, alive := newRawClient(m), newRawClient(m)
	x := &deadClaim{m: m, alive: alive, hbAlive: -1, hbDead: -1}
	x.sub = alive.addSubscription(ipc64k, 1)
	x.pub = dead.addPublication(ipc64k, 1, false)
	subPosID := int32(-1)
	for _, e := range dead.take() {
		if u := command.CounterUpdate(e.msg); e.typeID == command.OnCounterReady && u.CorrelationID() == dead.id {
			x.hbDead = u.Value()
		}
	}
	for _, e := range alive.take() {
		switch e.typeID {
		case command.OnCounterReady:
			if u := command.CounterUpdate(e.msg); u.CorrelationID() == alive.id {
				x.hbAlive = u.Value()
			}
		case command.OnAvailableImage:
			if r := command.ImageBuffersReady(e.msg); r.CorrelationID() == x.pub && r.SubscriptionRegistrationID() == x.sub {
				subPosID = r.SubscriberPositionID()
			}
		}
	}
	if x.hbAlive < 0 || x.hbDead < 0 || subPosID < 0 || len(m.ipcPublications) != 1 {
		t.Fatalf("setup: heartbeat counters %d and %d, sub-pos counter %d, %d IPC publications",
			x.hbAlive, x.hbDead, subPosID, len(m.ipcPublications))
	}
	x.p = m.ipcPublications[0]
	x.subPos = m.positionOf(subPosID)
	x.term = x.p.log.terms[0]
	shm.PutUint16(x.term, logbuffer.FrameTypeOffset, logbuffer.FrameTypeData)
	shm.StoreInt32Release(x.term, logbuffer.FrameLengthOffset, committedLen)
	if headerWritten {
		shm.StoreInt32Release(x.term, claimAt+logbuffer.FrameLengthOffset, -claimLen)
	}
	shm.StoreInt64Release(x.p.log.meta, logbuffer.TermTailCountersOffset,
		logbuffer.PackTail(x.p.initialTermID, claimAt+claimLen))
	return x
}

// run advances the clocks by dt while only the live client stamps its
// heartbeat, as a live 1.51 client does.
func (x *deadClaim) run(dt time.Duration) {
	for ; dt > 0; dt -= 10 * time.Millisecond {
		x.m.setPosition(x.m.positionOf(x.hbAlive), x.m.epochMs)
		x.m.advance(10 * time.Millisecond)
	}
}

// padded fails the test unless the claim has become padding.
func (x *deadClaim) padded(t *testing.T, when string) {
	t.Helper()
	n := x.m.counters.Value(sysUnblockedPublications)
	if n != 1 || shm.LoadInt32Acquire(x.term, claimAt) != claimLen ||
		shm.GetUint16(x.term, claimAt+logbuffer.FrameTypeOffset) != logbuffer.FrameTypePad {
		t.Fatalf("%s, the dead claim at %d is not padding: unblocked publications %d, frame length %d (want %d), "+
			"publication state %d, consumer position %d, subscriber at %d", when, claimAt, n,
			shm.LoadInt32Acquire(x.term, claimAt), claimLen, x.p.state, x.p.consumerPosition, x.m.subPosition(x.subPos))
	}
}

// drains reads the padding as the subscriber would and checks that the
// stream drains: the image goes, and the publication with its counters.
func (x *deadClaim) drains(t *testing.T) {
	t.Helper()
	x.m.setPosition(x.subPos, claimAt+claimLen)
	x.run(100 * time.Millisecond)
	gone := false
	for _, e := range x.alive.take() {
		if e.typeID == command.OnUnavailableImage {
			u := command.ImageMessage(e.msg)
			gone = gone || u.CorrelationID() == x.pub && u.SubscriptionRegistrationID() == x.sub
		}
	}
	if !gone || len(x.m.ipcPublications) != 0 {
		t.Fatalf("after the subscriber read the padding: image unavailable %v, %d IPC publications left (state %d)",
			gone, len(x.m.ipcPublications), x.p.state)
	}
}

// TestDrainingUnblocksWhereSubscribersStopped: the driver times the dead
// publisher's client out while the subscriber is still behind, reading
// what came before the claim (a subscriber starved of CPU). Once the
// subscriber reaches the claim, the draining publication must pad it
// there. A driver that unblocks at the consumer position it last saw
// while the publication was active keeps trying the committed frame
// behind the claim and never frees the publication.
func TestDrainingUnblocksWhereSubscribersStopped(t *testing.T) {
	x := newDeadClaim(t, true)
	x.run(300 * time.Millisecond) // the subscriber has read nothing yet
	if x.p.state != pubDraining {
		t.Fatalf("publication state %d after the publisher's client timed out, want draining (%d)", x.p.state, pubDraining)
	}
	x.m.setPosition(x.subPos, claimAt) // it catches up to the claim
	x.run(100 * time.Millisecond)
	x.padded(t, "after the subscriber reached the claim of a draining publication")
	x.drains(t)
}

// TestDrainingPadsDeadClaimWithoutHeader: the publisher died after it
// moved the tail and before it wrote the claim's header, so the claim is
// zeros up to the tail, with nothing after it. While the publisher's
// client lives that may be a publisher about to write its header, and the
// claim is left alone even after the unblock timeout; once no publisher
// is left (its client timed out, the publication drains) it is padded up
// to the tail and the subscriber sees the stream end.
func TestDrainingPadsDeadClaimWithoutHeader(t *testing.T) {
	x := newDeadClaim(t, false)
	x.m.setPosition(x.subPos, claimAt) // the subscriber is at the claim at once
	// The publisher's client stays alive past the unblock timeout.
	for range 60 {
		x.m.setPosition(x.m.positionOf(x.hbDead), x.m.epochMs)
		x.run(10 * time.Millisecond)
	}
	if n := x.m.counters.Value(sysUnblockedPublications); n != 0 || shm.LoadInt32Acquire(x.term, claimAt) != 0 {
		t.Fatalf("a live publisher's claim without a header was padded: unblocked publications %d, frame length %d",
			n, shm.LoadInt32Acquire(x.term, claimAt))
	}
	x.run(300 * time.Millisecond) // now the publisher's client dies
	x.padded(t, "once the publication drained")
	x.drains(t)
}

// TestDrainingNetworkPublicationPadsDeadClaimWithoutHeader: the same dead
// claim (zeros up to the tail) in a UDP publication whose last publisher
// is removed: the sender stops at the claim while a receiver is
// connected, so the draining publication must pad it up to the tail or
// it never ends.
func TestDrainingNetworkPublicationPadsDeadClaimWithoutHeader(t *testing.T) {
	o := Options{TimerInterval: 10 * time.Millisecond}
	pub, sub := newManualDriver(t, o), newManualDriver(t, o)
	channel := fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d|term-length=64k", freePort(t))
	newRawClient(sub).addSubscription(channel, 7)
	publisher := newRawClient(pub)
	reg := publisher.addPublication(channel, 7, false)
	u := &udpPair{pub: pub, sub: sub, p: pub.netPublications[0], msg: make([]byte, 32)}
	u.termID = u.p.initialTermID
	deadline := time.Now().Add(30 * time.Second)
	for len(sub.images) == 0 || !u.p.isConnected {
		if time.Now().After(deadline) {
			t.Fatal("no connection over loopback")
		}
		u.step(int64(time.Millisecond))
	}
	if !u.appendFrame() {
		t.Fatal("no room for the first frame")
	}
	claimAt := u.offset
	p := u.p
	term := p.log.terms[0]
	shm.StoreInt64Release(p.log.meta, logbuffer.TermTailCountersOffset, logbuffer.PackTail(u.termID, int32(claimAt+claimLen)))
	for range 50 { // the frame goes out; the sender stops at the claim
		u.step(int64(time.Millisecond))
	}
	if got := p.senderPosition(); got != int64(claimAt) {
		t.Fatalf("sender at %d, want the claim's position %d", got, claimAt)
	}
	publisher.send(command.RemovePublication, command.AppendRemovePublication(nil, publisher.id, publisher.nextID(), reg, false))
	for range 100 {
		u.step(int64(time.Millisecond))
	}
	if n := pub.counters.Value(sysUnblockedPublications); n != 1 || shm.LoadInt32Acquire(term, claimAt) != claimLen ||
		shm.GetUint16(term, claimAt+logbuffer.FrameTypeOffset) != logbuffer.FrameTypePad {
		t.Fatalf("the dead claim at %d of a draining UDP publication is not padding: unblocked publications %d, "+
			"frame length %d (want %d), state %d, sender at %d, receivers %v", claimAt, n,
			shm.LoadInt32Acquire(term, claimAt), claimLen, p.state, p.senderPosition(), p.hasReceivers)
	}
	if got, want := p.senderPosition(), int64(claimAt+claimLen); got != want || p.state == pubDraining {
		t.Fatalf("after the padding the sender is at %d (want %d) and the publication in state %d, still draining", got, want, p.state)
	}
}
