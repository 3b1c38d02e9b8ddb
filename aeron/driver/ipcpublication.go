package driver

import (
	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
)

// pubState is an IPC publication's lifecycle (IpcPublication.State).
type pubState uint8

const (
	pubActive   pubState = iota // publishers attached
	pubDraining                 // last publisher gone; subscribers catching up
	pubLinger                   // subscribers told the image is gone
	pubDone                     // counters closed; the log is freed next
)

// position is a subscriber's sub-pos counter: its id and where its value
// lives in the counters values section.
type position struct {
	id  int32
	off int
}

// logPublication is what IPC and network publications share: one
// publication log, its pub-pos and pub-lmt counters, its parameters and
// the conductor's bookkeeping around them.
type logPublication struct {
	registrationID        int64
	channel               string
	entityTag             int64
	sessionID, streamID   int32
	initialTermID         int32
	startingTermID        int32
	startingTermOffset    int32
	exclusive             bool
	responseCorrelationID int64
	termLength            int
	bitsToShift           int
	mtu                   int
	termWindow            int64

	cleanPosition        int64
	lastConsumerPosition int64
	consumerChangedNs    int64 // when the consumer position last moved
	refCount             int
	endOfLife            bool
	state                pubState

	log        *rawLog
	pubPos     position // pub-pos (type 12)
	pubLmt     position // pub-lmt (type 1)
	subs       []position
	untethered []untetheredSubscriber

	unblockTimeoutNs        int64
	untetheredWindowLimitNs int64
	untetheredLingerNs      int64
	untetheredRestingNs     int64
}

// ipcPublication is one IPC log and its counters: the driver's half of
// every publisher and subscriber of a session (IpcPublication). Only the
// conductor touches it.
type ipcPublication struct {
	logPublication
	tripGain         int64
	tripLimit        int64
	consumerPosition int64
	inCoolDown       bool
	coolDownExpireNs int64
	imageLivenessNs  int64
}

// producerPosition is the publishers' tail position: the active
// partition's raw tail (publishers write it; acquire).
func (p *logPublication) producerPosition() int64 {
	meta := p.log.meta
	raw := logbuffer.RawTail(meta, int(logbuffer.ActiveTermCount(meta))%logbuffer.PartitionCount)
	return logbuffer.ComputePosition(logbuffer.TermID(raw), logbuffer.TermOffset(raw, p.termLength), p.bitsToShift, p.initialTermID)
}

// updatePublisherPositionAndLimit moves pub-pos to the tail and pub-lmt
// to the slowest tethered subscriber plus the term window, cleaning the
// consumed log first (IpcPublication.updatePublisherPositionAndLimit).
// Runs every duty cycle; allocates nothing.
//
// It returns 1 (work) for a limit move when the window is small (below
// minCalmWindow) or the publisher had used half of it or more
// (limitMoveIsUrgent); the Java driver counts every move. The count only steers the owner's back-off: a move the
// publisher was far from needing leaves a driver that has nothing else to
// do free to park, instead of spinning and yielding again after every
// eighth of a window a subscriber consumes (on a 2-core machine that is
// hundreds of context switches a second taken from the publisher and
// subscriber while 32-byte messages stream). The limit and the cleaning
// are the same either way.
func (p *ipcPublication) updatePublisherPositionAndLimit(c *conductor) int {
	if p.state != pubActive {
		return 0
	}
	producer := p.producerPosition()
	c.setPosition(p.pubPos, producer)
	if len(p.subs) > 0 {
		minSub, maxSub := int64(1<<63-1), p.consumerPosition
		for _, s := range p.subs {
			v := c.subPosition(s)
			minSub = min(minSub, v)
			maxSub = max(maxSub, v)
		}
		if maxSub > p.consumerPosition {
			p.consumerPosition = maxSub
		}
		newLimit := minSub + p.termWindow
		if newLimit >= p.tripLimit {
			oldLimit := shm.LoadInt64Acquire(c.values, p.pubLmt.off)
			p.cleanBufferTo(minSub)
			c.setPosition(p.pubLmt, newLimit)
			p.tripLimit = newLimit + p.tripGain
			if limitMoveIsUrgent(oldLimit-producer, p.termWindow) {
				return 1
			}
		}
		return 0
	}
	// No subscriber: the publisher may not run ahead of the last consumer.
	if shm.LoadInt64Acquire(c.values, p.pubLmt.off) > p.consumerPosition {
		p.tripLimit = p.consumerPosition
		c.setPosition(p.pubLmt, p.consumerPosition)
		p.cleanBufferTo(p.consumerPosition)
		return 1
	}
	return 0
}

// minCalmWindow is the smallest window whose limit moves may leave the
// back-off alone: after a move that did not count (headroom over half
// the window) a publisher must write 2 GB/s (16 MiB in a quiet park,
// quietMaxPark; memory bandwidth, with large messages) to reach its limit
// before the driver wakes. Below it every move counts as work, as in the Java
// driver, so a burst after a slow stream never waits for a long park.
const minCalmWindow = 32 << 20

// limitMoveIsUrgent says whether a limit move counts as work: always for
// a window below minCalmWindow, and otherwise when the publisher had used
// half its window or more (headroom, its old limit less its position, is
// at most half the window), so it may reach its limit soon. A publisher
// with a large window and more than half of it left runs on for longer
// than the driver's longest park; while it streams, the back-off's parks
// grow by doubling, so a steady publisher crosses half its window (and
// makes the next move urgent) before a park outlasts what is left.
func limitMoveIsUrgent(headroom, window int64) bool {
	return window < minCalmWindow || headroom <= window>>1
}

// cleanBufferTo zeroes the log from the clean position towards position,
// at most to the end of the current term per call, so a publisher that
// wraps into it finds zeroed frames. The first word is zeroed last, with
// release (IpcPublication.cleanBufferTo). The rest is zeroed with
// non-temporal stores: a publication cleans every byte it carries (1.3 GB/s
// of 32-byte messages at 20 M/s), which with ordinary stores means reading
// each line before writing it and pushing the publisher's and subscribers'
// lines out of the caches, for a stretch nobody reads until the log wraps.
// Ordering: ClearNonTemporal ends with a store fence, so the zeroes are
// visible before the release store of the first word and before the
// pub-lmt store that lets a publisher into them; the subscribers are past
// this stretch (position <= the slowest subscriber).
func (p *logPublication) cleanBufferTo(position int64) {
	clean := p.cleanPosition
	if position <= clean {
		return
	}
	term := p.log.terms[logbuffer.IndexByPosition(clean, p.bitsToShift)]
	offset := int(clean) & (p.termLength - 1)
	length := min(int(position-clean), p.termLength-offset)
	shm.ClearNonTemporal(term[offset+8 : offset+length])
	shm.StoreInt64Release(term, offset, 0)
	p.cleanPosition = clean + int64(length)
}

// joinPosition is where a new subscriber starts: the slowest of the
// consumer position and every current subscriber.
func (p *ipcPublication) joinPosition(c *conductor) int64 {
	pos := p.consumerPosition
	for _, s := range p.subs {
		pos = min(pos, c.subPosition(s))
	}
	return pos
}

func (p *ipcPublication) isDrained(c *conductor, producer int64) bool {
	for _, s := range p.subs {
		if c.subPosition(s) < producer {
			return false
		}
	}
	return true
}

// isAcceptingSubscriptions: not in a reject cool-down, and active or
// still draining.
func (p *ipcPublication) isAcceptingSubscriptions(c *conductor) bool {
	return !p.inCoolDown && (p.state == pubActive || (p.state == pubDraining && !p.isDrained(c, p.producerPosition())))
}

// setConnected stores the log's is-connected flag (release) when it
// changes. Readers: publishers (Offer's NOT_CONNECTED vs BACK_PRESSURED).
func (p *logPublication) setConnected(connected bool) {
	v := int32(0)
	if connected {
		v = 1
	}
	if shm.LoadInt32Acquire(p.log.meta, logbuffer.IsConnectedOffset) != v {
		shm.StoreInt32Release(p.log.meta, logbuffer.IsConnectedOffset, v)
	}
}

func (p *ipcPublication) addSubscriber(c *conductor, link *subscriptionLink, pos position, nowNs int64) {
	p.subs = append(p.subs, pos)
	if !link.tether {
		p.untethered = append(p.untethered, untetheredSubscriber{link: link, pos: pos, updateNs: nowNs})
	}
	p.setConnected(true)
}

// removeSubscriber drops a subscriber and frees its sub-pos counter
// (unless an untethered linger already did).
func (p *ipcPublication) removeSubscriber(c *conductor, link *subscriptionLink, lp *linkedPosition) {
	pos := lp.pos
	p.subs = removePosition(p.subs, pos.id)
	if !lp.freed {
		lp.freed = true
		c.freeCounter(pos.id)
	}
	if !link.tether {
		p.untethered = removeUntethered(p.untethered, link)
	}
	if len(p.subs) == 0 {
		p.setConnected(false)
	}
}

func removePosition(s []position, id int32) []position {
	for i, p := range s {
		if p.id == id {
			return append(s[:i], s[i+1:]...)
		}
	}
	return s
}

func (p *logPublication) incRef() { p.refCount++ }

// decRef drops a publisher; the last one fixes the limit and the end of
// stream at the tail and starts draining (unless revoked).
func (p *ipcPublication) decRef(c *conductor) {
	if _, last := p.dropPublisher(c); !last {
		return
	}
	if p.log.meta[logbuffer.IsPublicationRevokedOffset] == 0 {
		p.state = pubDraining
	}
}

// dropPublisher drops one publisher of p, IPC or network; when it was the
// last (last = true) it fixes the limit and the end of stream at the
// producer position and returns that position.
func (p *logPublication) dropPublisher(c *conductor) (producer int64, last bool) {
	p.refCount--
	if p.refCount != 0 {
		return 0, false
	}
	producer = p.producerPosition()
	c.setPosition(p.pubLmt, producer)
	// End of stream: written by the driver (release); subscribers compare
	// their position with it (Image.isEndOfStream).
	shm.StoreInt64Release(p.log.meta, logbuffer.EndOfStreamPositionOffset, producer)
	return producer, true
}

// freeSubscriberCounters frees the position counters of the subscribers
// in *subs (and of the resting untethered ones) and forgets them: what
// closing an IPC publication, a network publication and an image share.
func (c *conductor) freeSubscriberCounters(subs *[]position, untethered []untetheredSubscriber) {
	for _, s := range *subs {
		c.freeCounter(s.id)
	}
	for _, u := range untethered {
		if u.state == untetheredResting {
			c.freeCounter(u.pos.id)
		}
	}
	*subs = (*subs)[:0]
}

// revoke marks the log revoked; the next tick ends the stream at once.
func (p *logPublication) revoke() { p.log.meta[logbuffer.IsPublicationRevokedOffset] = 1 }

// isRevoked reports the log's revoked flag (set by the conductor only).
func (p *logPublication) isRevoked() bool {
	return p.log.meta[logbuffer.IsPublicationRevokedOffset] != 0
}

// onTimeEvent is the publication's part of the conductor's tick
// (IpcPublication.onTimeEvent).
func (p *ipcPublication) onTimeEvent(c *conductor, nowNs int64) {
	switch p.state {
	case pubActive:
		if p.log.meta[logbuffer.IsPublicationRevokedOffset] != 0 {
			revoked := p.producerPosition()
			c.setPosition(p.pubLmt, revoked)
			shm.StoreInt64Release(p.log.meta, logbuffer.EndOfStreamPositionOffset, revoked)
			p.setConnected(false)
			p.transitionToLinger(c)
			p.state = pubLinger
			c.counters.AddValue(sysPublicationsRevoked, 1)
			return
		}
		p.checkUntetheredSubscriptions(c, nowNs)
		p.setConnected(len(p.subs) != 0)
		producer := p.producerPosition()
		c.setPosition(p.pubPos, producer)
		if !p.exclusive {
			p.checkForBlockedPublisher(c, producer, p.consumerPosition, nowNs)
		}
		if p.inCoolDown && p.coolDownExpireNs < nowNs {
			p.inCoolDown = false
			c.linkIPCSubscriptions(p)
			p.coolDownExpireNs = 0
		}
	case pubDraining:
		producer := p.producerPosition()
		c.setPosition(p.pubPos, producer)
		if p.isDrained(c, producer) {
			p.transitionToLinger(c)
			p.state = pubLinger
		} else if unblockLog(p.log, p.advanceConsumerPosition(c), true) {
			c.counters.AddValue(sysUnblockedPublications, 1)
		}
	case pubLinger:
		if p.refCount == 0 {
			for _, l := range c.subscriptionLinks {
				l.unlink(p)
			}
			p.endOfLife = true
			p.state = pubDone
		}
	}
}

// advanceConsumerPosition moves the consumer position up to the furthest
// subscriber and returns it. updatePublisherPositionAndLimit does so on
// every duty cycle, but only while the publication is active; a draining
// publication must read it afresh before it unblocks, because its
// subscribers read on after the last publisher went. A dead publisher's
// claim is where they stop, which may be past the position last seen
// while active (the driver timed the publisher's client out before a
// subscriber starved of CPU had caught up): unblocking there would find a
// committed frame, change nothing, and the publication would never drain.
func (p *ipcPublication) advanceConsumerPosition(c *conductor) int64 {
	for _, s := range p.subs {
		p.consumerPosition = max(p.consumerPosition, c.subPosition(s))
	}
	return p.consumerPosition
}

// checkUntetheredSubscriptions moves untethered subscribers that fell a
// window behind the consumer position through the untethered states
// (IpcPublication.checkUntetheredSubscriptions).
func (p *ipcPublication) checkUntetheredSubscriptions(c *conductor, nowNs int64) {
	windowLimit := p.consumerPosition - p.termWindow + p.termWindow>>2
	c.checkUntethered(p, &p.untethered, &p.subs, windowLimit, p.untetheredWindowLimitNs, p.untetheredLingerNs,
		p.untetheredRestingNs, nowNs)
}

// An IPC publication as a subscribable: its image is its own log.
func (p *ipcPublication) rejoinPosition(c *conductor) int64 { return p.joinPosition(c) }
func (p *ipcPublication) notifyID() int64                   { return p.registrationID }
func (p *ipcPublication) announce(c *conductor, l *subscriptionLink, pos position, _ int64) {
	c.sendAvailableImage(p, l.registrationID, pos.id)
}

// checkForBlockedPublisher unblocks a concurrent publisher that claimed
// space and never committed it (it died mid-offer): when the consumers
// have not moved for the unblock timeout while the log may be blocked, the
// claim becomes padding (IpcPublication.checkForBlockedPublisher).
func (p *logPublication) checkForBlockedPublisher(c *conductor, producer, consumer, nowNs int64) {
	if consumer == p.lastConsumerPosition && p.isPossiblyBlocked(producer, consumer) {
		if p.consumerChangedNs+p.unblockTimeoutNs-nowNs < 0 {
			if unblockLog(p.log, consumer, false) {
				c.counters.AddValue(sysUnblockedPublications, 1)
			}
		}
		return
	}
	p.consumerChangedNs = nowNs
	p.lastConsumerPosition = consumer
}

func (p *logPublication) isPossiblyBlocked(producer, consumer int64) bool {
	if logbuffer.ActiveTermCount(p.log.meta) != int32(consumer>>p.bitsToShift) {
		return true
	}
	return producer > consumer
}

// transitionToLinger ends a publication's session and tells every linked
// subscription the image is gone.
func (p *ipcPublication) transitionToLinger(c *conductor) {
	c.removeSessionKey(sessionKey{p.sessionID, p.streamID, ipcSessionKey})
	for _, l := range c.subscriptionLinks {
		if l.linked(p) != nil {
			c.notifyUnavailableImage(p.registrationID, l)
		}
	}
}
