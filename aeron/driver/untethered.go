package driver

// untetheredState is an untethered subscriber's state
// (UntetheredSubscription.State).
type untetheredState uint8

const (
	untetheredActive untetheredState = iota
	untetheredLinger
	untetheredResting
)

// untetheredSubscriber is a tether=false subscriber of a publication or
// image: it does not hold the publisher back, and is dropped for a while
// when it falls a window behind.
type untetheredSubscriber struct {
	link     *subscriptionLink
	pos      position
	state    untetheredState
	updateNs int64 // time of the last position advance or state change
}

// checkUntethered moves the untethered subscribers of r (whose tethered
// positions are *subs) through their states, every tick:
//
//   - active: a subscriber at or behind windowLimit for windowNs loses the
//     image (ON_UNAVAILABLE_IMAGE) and lingers;
//   - linger: after lingerNs its position stops holding r back; it rests
//     if its subscription rejoins, else its sub-pos is freed;
//   - resting: after restingNs it rejoins at r's rejoin position with a
//     new ON_AVAILABLE_IMAGE (the same sub-pos counter).
func (c *conductor) checkUntethered(r subscribable, list *[]untetheredSubscriber, subs *[]position, windowLimit int64,
	windowNs, lingerNs, restingNs, nowNs int64) {
	u := *list
	for i := len(u) - 1; i >= 0; i-- {
		x := &u[i]
		switch x.state {
		case untetheredActive:
			if c.subPosition(x.pos) > windowLimit {
				x.updateNs = nowNs
			} else if x.updateNs+windowNs-nowNs <= 0 {
				c.notifyUnavailableImage(r.notifyID(), x.link)
				x.state, x.updateNs = untetheredLinger, nowNs
			}
		case untetheredLinger:
			if x.updateNs+lingerNs-nowNs <= 0 {
				*subs = removePosition(*subs, x.pos.id)
				if x.link.rejoin {
					x.state, x.updateNs = untetheredResting, nowNs
				} else {
					if lp := x.link.linked(r); lp != nil && !lp.freed {
						lp.freed = true
						c.freeCounter(x.pos.id)
					}
					u = append(u[:i], u[i+1:]...)
				}
			}
		case untetheredResting:
			if x.updateNs+restingNs-nowNs <= 0 {
				join := r.rejoinPosition(c)
				*subs = append(*subs, x.pos)
				c.setPosition(x.pos, join)
				r.announce(c, x.link, x.pos, join)
				x.state, x.updateNs = untetheredActive, nowNs
			}
		}
	}
	*list = u
}

// removeUntethered forgets link's untethered subscriber of a resource.
func removeUntethered(list []untetheredSubscriber, link *subscriptionLink) []untetheredSubscriber {
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].link == link {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}
