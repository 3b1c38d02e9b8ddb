package driver

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/goblin-kv/goblin/aeron/internal/counters"
	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/aeron/internal/wire"
)

// flowControl decides how far a network publication may send ahead of its
// receivers (FlowControl): unicast and max take the fastest receiver's
// window, min and tagged the slowest of the receivers they track.
type flowControl interface {
	onStatusMessage(sm wire.SM, senderLimit int64, initialTermID int32, bits int, nowNs int64) int64
	onTriggerSendSetup(sm wire.SM, nowNs int64)
	onSetup(senderLimit, senderPosition int64, nowNs int64) int64
	onIdle(nowNs, senderLimit, senderPosition int64, eos bool) int64
	onError(e wire.Err, nowNs int64)
	hasRequiredReceivers() bool
	maxRetransmissionLength(termOffset, resendLength, termLength int) int
	close(c *conductor)
}

// Flow control defaults (Configuration).
const (
	defaultUnicastRRWM         = 16
	defaultMulticastRRWM       = 4
	defaultFCReceiverTimeout   = 5 * time.Second
	defaultInitialWindowLength = 128 << 10
)

// receiverWindowLength is Configuration.receiverWindowLength: the window a
// receiver advertises, at most half a term.
func receiverWindowLength(termLength, initialWindow int) int {
	return min(initialWindow, termLength>>1)
}

// retransmissionLength caps one NAK's resend at rrwm receiver windows and
// the end of the term (FlowControl.calculateRetransmissionLength).
func retransmissionLength(resendLength, termLength, termOffset, rrwm int) int {
	toEnd := termLength - termOffset
	estimated := receiverWindowLength(termLength, defaultInitialWindowLength) * rrwm
	if toEnd < estimated {
		return min(toEnd, resendLength)
	}
	return min(estimated, resendLength)
}

// fcParam reads one argument of fc=<strategy>,<arg>,... ("" when absent).
func fcArg(fc, prefix string) (string, bool) {
	for _, a := range strings.Split(fc, ",") {
		if v, ok := strings.CutPrefix(a, prefix); ok {
			return v, true
		}
	}
	return "", false
}

// retransmitWindowMultiple reads fc=...,rrwm:<n>, else def.
func retransmitWindowMultiple(ch *udpChannel, def int) (int, error) {
	fc, _ := ch.uri.Get(paramFlowControl)
	if v, ok := fcArg(fc, "rrwm:"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return 0, genericError(illegalArgument, "Invalid retransmit receiver window multiple: %s", v)
		}
		return n, nil
	}
	return def, nil
}

// newFlowControl picks the strategy as the Java driver's default
// suppliers do: unicast channels take no fc= and use UnicastFlowControl;
// multicast and multi-destination channels use fc=max (the default), min
// or tagged.
func (c *conductor) newFlowControl(ch *udpChannel, registrationID, clientID int64, sessionID, streamID int32) (flowControl, error) {
	fc, hasFC := ch.uri.Get(paramFlowControl)
	if !ch.multicast && !ch.isMultiDestination() {
		if hasFC {
			return nil, genericError(illegalArgument, "unsupported unicast flow control strategy: fc=%s", fc)
		}
		rrwm, err := retransmitWindowMultiple(ch, defaultUnicastRRWM)
		if err != nil {
			return nil, err
		}
		if s := c.opts.UnicastFlowControl; s != "" && s != FlowControlMax {
			return c.newMinFlowControl(s == FlowControlTagged, "", rrwm, ch, registrationID, clientID, sessionID, streamID)
		}
		return &maxFlowControl{rrwm: rrwm}, nil
	}
	rrwm, err := retransmitWindowMultiple(ch, defaultMulticastRRWM)
	if err != nil {
		return nil, err
	}
	strategy, _, _ := strings.Cut(fc, ",")
	if !hasFC {
		// The driver's multicast supplier (AERON_MULTICAST_FLOWCONTROL_SUPPLIER).
		strategy = string(c.opts.MulticastFlowControl)
	}
	switch {
	case strategy == "" || strategy == "max":
		return &maxFlowControl{rrwm: rrwm}, nil
	case strategy == "min" || strategy == "tagged":
		return c.newMinFlowControl(strategy == "tagged", fc, rrwm, ch, registrationID, clientID, sessionID, streamID)
	}
	return nil, genericError(illegalArgument, "unsupported multicast flow control strategy: fc=%s", fc)
}

// newMinFlowControl makes a min or tagged strategy, its group tag, group
// size and receiver timeout from fc= (fc, when the channel has one), else
// from the driver's (AERON_FLOW_CONTROL_*).
func (c *conductor) newMinFlowControl(tagged bool, fc string, rrwm int, ch *udpChannel, registrationID, clientID int64,
	sessionID, streamID int32) (flowControl, error) {
	m := &minFlowControl{tagged: tagged, rrwm: rrwm, receiverTimeoutNs: int64(c.opts.FlowControlReceiverTimeout),
		groupMinSize: c.opts.FlowControlGroupMinSize, lastSetupSenderLimit: -1, counterID: -1, c: c}
	if m.receiverTimeoutNs == 0 {
		m.receiverTimeoutNs = int64(defaultFCReceiverTimeout)
	}
	if t := c.opts.FlowControlGroupTag; t != nil && tagged {
		m.groupTag = *t
	}
	if err := m.parse(fc); err != nil {
		return nil, err
	}
	m.hasRequired = 0 >= m.groupMinSize
	id, err := c.allocateStreamCounter("fc-receivers", counters.TypeFlowControlReceivers, clientID, registrationID,
		sessionID, streamID, ch.uri.raw, -1)
	if err != nil {
		return nil, err
	}
	m.counterID = id
	return m, nil
}

// maxFlowControl is UnicastFlowControl and MaxMulticastFlowControl: the
// limit follows the most advanced receiver's position plus window.
type maxFlowControl struct{ rrwm int }

func (f *maxFlowControl) onStatusMessage(sm wire.SM, senderLimit int64, initialTermID int32, bits int, _ int64) int64 {
	pos := logbuffer.ComputePosition(sm.ConsumptionTermID(), int(sm.ConsumptionOffset()), bits, initialTermID)
	return max(senderLimit, pos+int64(sm.ReceiverWindow()))
}
func (f *maxFlowControl) onTriggerSendSetup(wire.SM, int64)                  {}
func (f *maxFlowControl) onSetup(senderLimit, _ int64, _ int64) int64        { return senderLimit }
func (f *maxFlowControl) onIdle(_ int64, senderLimit, _ int64, _ bool) int64 { return senderLimit }
func (f *maxFlowControl) onError(wire.Err, int64)                            {}
func (f *maxFlowControl) hasRequiredReceivers() bool                         { return true }
func (f *maxFlowControl) close(*conductor)                                   {}
func (f *maxFlowControl) maxRetransmissionLength(termOffset, resendLength, termLength int) int {
	return retransmissionLength(resendLength, termLength, termOffset, f.rrwm)
}

// fcReceiver is one receiver min/tagged flow control tracks.
type fcReceiver struct {
	receiverID             int64
	lastPosition           int64
	lastPositionPlusWindow int64
	timeOfLastSMNs         int64
	eos                    bool
}

// minFlowControl is MinMulticastFlowControl (the slowest tracked receiver
// sets the limit) and, with tagged, TaggedMulticastFlowControl (only
// receivers whose status messages carry the group tag are tracked).
type minFlowControl struct {
	tagged               bool
	groupTag             int64
	groupMinSize         int
	receiverTimeoutNs    int64
	rrwm                 int
	receivers            []fcReceiver
	hasRequired          bool
	lastSetupSenderLimit int64
	timeOfLastSetupNs    int64
	taggedTriggeredSetup bool
	counterID            int32
	c                    *conductor
}

// parse reads fc=min|tagged[,t:<timeout>][,g:<tag>[/<min size>]].
func (f *minFlowControl) parse(fc string) error {
	for _, a := range strings.Split(fc, ",") {
		switch {
		case strings.HasPrefix(a, "t:"):
			n, err := parseDuration("fc receiver timeout", a[2:])
			if err != nil {
				return err
			}
			f.receiverTimeoutNs = n
		case strings.HasPrefix(a, "g:"):
			tag, size, hasSize := strings.Cut(a[2:], "/")
			if tag != "" && f.tagged {
				n, err := strconv.ParseInt(tag, 10, 64)
				if err != nil {
					return genericError(numberFormat, "error parsing long: %s", tag)
				}
				f.groupTag = n
			}
			if hasSize {
				n, err := strconv.Atoi(size)
				if err != nil {
					return genericError(numberFormat, "error parsing int: %s", size)
				}
				f.groupMinSize = n
			}
		}
	}
	return nil
}

func (f *minFlowControl) matches(sm wire.SM) bool {
	if !f.tagged {
		return true
	}
	return sm.HasGroupTag() && sm.GroupTag() == f.groupTag
}

func (f *minFlowControl) lastSetupLimit(nowNs int64) int64 {
	if f.lastSetupSenderLimit != -1 {
		if f.timeOfLastSetupNs+f.receiverTimeoutNs-nowNs < 0 {
			f.lastSetupSenderLimit = -1
		} else {
			return f.lastSetupSenderLimit
		}
	}
	return math.MaxInt64
}

func (f *minFlowControl) onStatusMessage(sm wire.SM, senderLimit int64, initialTermID int32, bits int, nowNs int64) int64 {
	matches := f.matches(sm)
	pos := logbuffer.ComputePosition(sm.ConsumptionTermID(), int(sm.ConsumptionOffset()), bits, initialTermID)
	window := int64(sm.ReceiverWindow())
	id := sm.ReceiverID()
	plus := pos + window
	eos := sm.Flags()&wire.SMFlagEndOfStream != 0
	existing := false
	minPos := f.lastSetupLimit(nowNs)
	for i := range f.receivers {
		r := &f.receivers[i]
		if matches && r.receiverID == id {
			r.eos = eos
			r.lastPosition = max(pos, r.lastPosition)
			r.lastPositionPlusWindow = plus
			r.timeOfLastSMNs = nowNs
			existing = true
		}
		minPos = min(minPos, r.lastPositionPlusWindow)
	}
	if !existing && !eos && matches && (len(f.receivers) == 0 || plus >= minPos-window) {
		f.receivers = append(f.receivers, fcReceiver{receiverID: id, lastPosition: pos, lastPositionPlusWindow: plus,
			timeOfLastSMNs: nowNs})
		f.hasRequired = len(f.receivers) >= f.groupMinSize
		minPos = min(minPos, plus)
		f.setCount()
		f.lastSetupSenderLimit = -1
	}
	switch {
	case len(f.receivers) < f.groupMinSize:
		return senderLimit
	case len(f.receivers) == 0:
		return max(senderLimit, plus)
	}
	return max(senderLimit, minPos)
}

func (f *minFlowControl) setCount() {
	if f.c != nil && f.counterID >= 0 {
		f.c.counters.SetValue(f.counterID, int64(len(f.receivers)))
	}
}

func (f *minFlowControl) onTriggerSendSetup(sm wire.SM, _ int64) {
	if !f.taggedTriggeredSetup {
		f.taggedTriggeredSetup = f.matches(sm)
	}
}

func (f *minFlowControl) onSetup(senderLimit, _ int64, nowNs int64) int64 {
	if f.taggedTriggeredSetup && len(f.receivers) > 0 {
		f.timeOfLastSetupNs = nowNs
		f.lastSetupSenderLimit = senderLimit
	}
	f.taggedTriggeredSetup = false
	return senderLimit
}

func (f *minFlowControl) onIdle(nowNs, senderLimit, _ int64, _ bool) int64 {
	minLimit := f.lastSetupLimit(nowNs)
	removed := false
	for i := len(f.receivers) - 1; i >= 0; i-- {
		r := &f.receivers[i]
		if r.timeOfLastSMNs+f.receiverTimeoutNs-nowNs < 0 || r.eos {
			last := len(f.receivers) - 1
			f.receivers[i] = f.receivers[last]
			f.receivers = f.receivers[:last]
			removed = true
			continue
		}
		minLimit = min(minLimit, r.lastPositionPlusWindow)
	}
	if removed {
		f.hasRequired = len(f.receivers) >= f.groupMinSize
		f.setCount()
	}
	if len(f.receivers) < f.groupMinSize || len(f.receivers) == 0 {
		return senderLimit
	}
	return minLimit
}

func (f *minFlowControl) onError(e wire.Err, _ int64) {
	if f.tagged && !(e.HasGroupTag() && e.GroupTag() == f.groupTag) {
		return
	}
	for i := range f.receivers {
		if f.receivers[i].receiverID == e.ReceiverID() {
			f.receivers[i].eos = true
			return
		}
	}
}

func (f *minFlowControl) hasRequiredReceivers() bool { return f.hasRequired }

func (f *minFlowControl) maxRetransmissionLength(termOffset, resendLength, termLength int) int {
	return retransmissionLength(resendLength, termLength, termOffset, f.rrwm)
}

func (f *minFlowControl) close(c *conductor) {
	if f.counterID >= 0 {
		c.freeCounter(f.counterID)
		f.counterID = -1
	}
}

// receiverLiveness remembers when each receiver (by receiver id) last sent
// a status message (ReceiverLivenessTracker); a publication has receivers
// while any is younger than the connection timeout.
type receiverLiveness struct {
	ids   []int64
	times []int64
}

func (r *receiverLiveness) hasReceivers() bool { return len(r.ids) > 0 }

func (r *receiverLiveness) onStatusMessage(id, nowNs int64) {
	for i, x := range r.ids {
		if x == id {
			r.times[i] = nowNs
			return
		}
	}
	r.ids = append(r.ids, id)
	r.times = append(r.times, nowNs)
}

// onRemoteClose forgets a receiver and reports whether it was known.
func (r *receiverLiveness) onRemoteClose(id int64) bool {
	for i, x := range r.ids {
		if x == id {
			r.remove(i)
			return true
		}
	}
	return false
}

func (r *receiverLiveness) remove(i int) {
	last := len(r.ids) - 1
	r.ids[i], r.times[i] = r.ids[last], r.times[last]
	r.ids, r.times = r.ids[:last], r.times[:last]
}

func (r *receiverLiveness) onIdle(nowNs, timeoutNs int64) {
	for i := len(r.ids) - 1; i >= 0; i-- {
		if r.times[i] <= nowNs-timeoutNs {
			r.remove(i)
		}
	}
}
