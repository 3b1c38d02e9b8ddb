package driver

import "github.com/goblin-kv/goblin/aeron/internal/logbuffer"

// retransmitState is a retransmit action's state (RetransmitAction.State).
type retransmitState uint8

const (
	retransmitInactive retransmitState = iota
	retransmitDelayed
	retransmitLingering
)

type retransmitAction struct {
	state      retransmitState
	expiryNs   int64
	termID     int32
	termOffset int32
	length     int32
}

// retransmitHandler turns NAKs into resends (RetransmitHandler): a NAK
// inside a range being resent, or resent within the linger time, is
// ignored, so a burst of NAKs for one gap costs one resend. Unicast
// channels have one action slot, group channels max-resend slots.
type retransmitHandler struct {
	actions        []retransmitAction
	active         int
	groupSemantics bool
	delayNs        int64 // aeron.retransmit.unicast.delay
	lingerNs       int64 // aeron.retransmit.unicast.linger
}

func newRetransmitHandler(groupSemantics bool, maxResend int, delayNs, lingerNs int64) *retransmitHandler {
	n := 1
	if groupSemantics {
		n = maxResend
	}
	return &retransmitHandler{actions: make([]retransmitAction, n), groupSemantics: groupSemantics,
		delayNs: delayNs, lingerNs: lingerNs}
}

// resender sends a range of a publication's log again.
type resender interface {
	resend(termID, termOffset, length int32)
}

// nakOutcome says what became of a NAK.
type nakOutcome uint8

const (
	nakTaken    nakOutcome = iota // resent, scheduled, or covered by an action in flight
	nakInvalid                    // outside the term: counted as an invalid packet
	nakOverflow                   // a group channel's actions are all busy: counted as a pool overflow
)

// onNak handles a NAK: resend its range (clipped by flow control to
// retransmitLength) now, or after the delay.
func (h *retransmitHandler) onNak(termID, termOffset, length, termLength, retransmitLength int32, nowNs int64,
	r resender) nakOutcome {
	if termOffset > termLength-logbuffer.HeaderLength || termOffset < 0 || length < 0 {
		return nakInvalid
	}
	if length == 0 {
		return nakTaken
	}
	a, overflow := h.scanForAvailable(termID, termOffset)
	if a == nil {
		if overflow {
			return nakOverflow
		}
		return nakTaken
	}
	a.termID, a.termOffset, a.length = termID, termOffset, retransmitLength
	if h.delayNs == 0 {
		r.resend(termID, termOffset, a.length)
		a.state, a.expiryNs = retransmitLingering, nowNs+h.lingerNs
	} else {
		a.state, a.expiryNs = retransmitDelayed, nowNs+h.delayNs
	}
	return nakTaken
}

// scanForAvailable finds the action slot for a NAK at termOffset: none
// when an action in flight covers it, or (overflow) when a group
// channel's slots are all busy.
func (h *retransmitHandler) scanForAvailable(termID, termOffset int32) (*retransmitAction, bool) {
	if h.active == 0 {
		h.active++
		return &h.actions[0], false
	}
	var available *retransmitAction
	for i := range h.actions {
		a := &h.actions[i]
		switch a.state {
		case retransmitInactive:
			if available == nil {
				available = a
			}
		case retransmitDelayed, retransmitLingering:
			if a.termID == termID && a.termOffset <= termOffset && termOffset < a.termOffset+a.length {
				return nil, false
			}
			if !h.groupSemantics {
				// Unicast: a NAK that does not overlap the one slot reuses it.
				available = a
			}
		}
	}
	if h.groupSemantics {
		if available != nil {
			h.active++
			return available, false
		}
		return nil, true
	}
	return available, false
}

// processTimeouts resends delayed actions that are due and frees
// lingering ones whose linger passed.
func (h *retransmitHandler) processTimeouts(nowNs int64, r resender) {
	if h.active == 0 {
		return
	}
	for i := range h.actions {
		a := &h.actions[i]
		switch {
		case a.state == retransmitDelayed && a.expiryNs-nowNs < 0:
			r.resend(a.termID, a.termOffset, a.length)
			a.state, a.expiryNs = retransmitLingering, nowNs+h.lingerNs
		case a.state == retransmitLingering && a.expiryNs-nowNs < 0:
			h.active--
			a.state = retransmitInactive
		}
	}
}
