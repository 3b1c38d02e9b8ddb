package driver

import (
	"strconv"
	"strings"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/internal/command"
	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/aeron/internal/uri"
)

// channelURI is a channel as the driver reads it (ChannelUri.parse): more
// lenient than the client's aeron.ParseChannel, since the driver must
// accept what any client sends — a repeated key keeps its last value,
// values may be empty — and refuse only what the Java driver refuses.
type channelURI struct {
	raw string
	uri.URI
}

const ipcChannel = uri.Prefix + uri.MediaIPC

// parseURI reads a channel with the parser the client shares and words a
// refusal as the Java driver does.
func parseURI(s string) (*channelURI, error) {
	u, err := uri.Parse(s)
	if err != nil {
		e := err.(*uri.Error)
		switch e.Kind {
		case uri.TooLong:
			return nil, invalidChannel("URI length (%d) exceeds max supported length (%d): %s", len(s), command.MaxChannelLength, s[:command.MaxChannelLength])
		case uri.NoPrefix:
			return nil, invalidChannel("Aeron URIs must start with 'aeron:', found: %s", s)
		case uri.ReservedInMedia:
			return nil, invalidChannel("encountered a reserved character within media definition in %s", s)
		case uri.UnknownMedia:
			return nil, invalidChannel("unknown media: %s", e.Media)
		case uri.NoValue:
			return nil, invalidChannel("invalid end of key in %s", s)
		default: // uri.EmptyKey
			return nil, invalidChannel("empty key not allowed in %s", s)
		}
	}
	return &channelURI{raw: s, URI: u}, nil
}

func (u *channelURI) has(key string) bool { _, ok := u.Get(key); return ok }

// Channel parameters the driver reads besides those aeron names.
const (
	paramStreamID                = "stream-id"
	paramTether                  = "tether"
	paramRejoin                  = "rejoin"
	paramGroup                   = "group"
	paramSpiesSimulateConnection = "ssc"
	paramMaxResend               = "max-resend"
	paramUntetheredWindowLimit   = "untethered-window-limit-timeout"
	paramUntetheredLinger        = "untethered-linger-timeout"
	paramUntetheredResting       = "untethered-resting-timeout"
	prototypeCorrelationID       = "prototype"
	prototypeCorrelationValue    = -2
	invalidTag                   = -1
)

// parseSize reads a size with an optional k, m or g suffix
// (SystemUtil.parseSize) and names the setting it was given for in a
// refusal.
func parseSize(name, v string) (int64, error) {
	n, err := uri.ParseSize(v)
	if err != nil {
		if v == "" {
			return 0, genericError(numberFormat, "%s: empty value", name)
		}
		return 0, genericError(numberFormat, "%s: %s should be a non-negative number ending with k, m, or g", name, v)
	}
	return n, nil
}

// parseDuration reads a duration with an optional ns, us, ms or s suffix;
// a bare number is nanoseconds (SystemUtil.parseDuration).
func parseDuration(name, v string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"ns", 1}, {"us", int64(time.Microsecond)}, {"ms", int64(time.Millisecond)}, {"s", int64(time.Second)}}
	lower := strings.ToLower(v)
	mult, digits := int64(1), v
	for _, u := range units {
		if strings.HasSuffix(lower, u.suffix) {
			mult, digits = u.mult, v[:len(v)-len(u.suffix)]
			break
		}
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 0 {
		return 0, genericError(numberFormat, "%s: %s is not a valid duration (a number with an optional ns, us, ms or s suffix)", name, v)
	}
	return n * mult, nil
}

// publicationParams are an ADD_PUBLICATION's parameters (PublicationParams).
type publicationParams struct {
	lingerNs                int64
	entityTag               int64
	untetheredWindowLimitNs int64
	untetheredLingerNs      int64
	untetheredRestingNs     int64
	responseCorrelationID   int64
	termLength              int
	mtu                     int
	window                  int
	initialTermID           int32
	termID                  int32
	termOffset              int32
	sessionID               int32
	maxResend               int
	hasPosition             bool
	sessionIDTagged         bool
	signalEOS               bool
	sparse                  bool
	ssc                     bool
	isResponse              bool
}

func parseInt32(u *channelURI, name, v string) (int32, error) {
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, invalidChannel("invalid %s, must be a number", name)
	}
	return int32(n), nil
}

// publicationParams reads a publication's channel in the Java driver's
// order (PublicationParams.getPublicationParams): the session id is
// allocated while parsing, even when the add then shares an existing
// publication. channelKey is the session scope: ipcSessionKey for IPC,
// the canonical form for UDP.
func (c *conductor) publicationParams(u *channelURI, streamID int32, channelKey string) (*publicationParams, error) {
	o := &c.opts
	isIPC := channelKey == ipcSessionKey
	p := &publicationParams{termLength: o.IPCTermLength, mtu: o.IPCMTU, entityTag: invalidTag}
	if !isIPC {
		p.termLength, p.mtu = o.TermLength, o.MTU
	}
	if v, ok := u.Get(paramStreamID); ok {
		n, err := parseInt32(u, paramStreamID, v)
		if err != nil {
			return nil, err
		}
		if n != streamID {
			return nil, invalidChannel("%s=%d does not match provided streamId=%d", paramStreamID, n, streamID)
		}
	}
	if v, ok := u.Get(aeron.ParamTags); ok {
		if _, entity, found := strings.Cut(v, ","); found {
			tag, err := strconv.ParseInt(entity, 10, 64)
			if err != nil {
				return nil, invalidChannel("invalid entity tag, must be a number")
			}
			if tag == invalidTag {
				return nil, invalidChannel("%d tag is reserved: channel=%s", invalidTag, u.raw)
			}
			if existing := c.findNetworkPublicationByTag(tag); existing != nil {
				return nil, invalidChannel("%d entityTag already in use: existingChannel=%s channel=%s", tag, existing.channel, u.raw)
			}
			if existing := c.findIPCPublicationByTag(tag); existing != nil {
				return nil, invalidChannel("%d entityTag already in use: existingChannel=%s channel=%s", tag, existing.channel, u.raw)
			}
			p.entityTag = tag
		}
	}
	if v, ok := u.Get(aeron.ParamSessionID); ok {
		if tagStr, tagged := strings.CutPrefix(v, "tag:"); tagged {
			p.sessionIDTagged = true
			tag, err := strconv.ParseInt(tagStr, 10, 64)
			if err != nil {
				return nil, invalidChannel("%s=%s has an invalid tag: channel=%s", aeron.ParamSessionID, v, u.raw)
			}
			var tagged *logPublication
			if isIPC {
				if x := c.findIPCPublicationByTag(tag); x != nil {
					tagged = &x.logPublication
				}
			} else if x := c.findNetworkPublicationByTag(tag); x != nil {
				tagged = &x.logPublication
			}
			if tagged == nil {
				kind := "a network publication"
				if isIPC {
					kind = "an IPC publication"
				}
				return nil, invalidChannel("%s=%s must reference %s: channel=%s", aeron.ParamSessionID, v, kind, u.raw)
			}
			p.sessionID, p.mtu, p.termLength = tagged.sessionID, tagged.mtu, tagged.termLength
		} else {
			n, err := parseInt32(u, aeron.ParamSessionID, v)
			if err != nil {
				return nil, err
			}
			p.sessionID = n
		}
	} else {
		p.sessionID = c.nextAvailableSessionID(streamID, channelKey)
	}
	if v, ok := u.Get(aeron.ParamTermLength); ok {
		n, err := parseSize(aeron.ParamTermLength, v)
		if err != nil {
			return nil, err
		}
		if err := checkTermLength(n); err != nil {
			return nil, err
		}
		if p.sessionIDTagged && int(n) != p.termLength {
			return nil, invalidChannel("%s=%d does not match session-id tag value: channel=%s", aeron.ParamTermLength, n, u.raw)
		}
		p.termLength = int(n)
	}
	if v, ok := u.Get(aeron.ParamMTU); ok {
		n, err := parseSize(aeron.ParamMTU, v)
		if err != nil {
			return nil, err
		}
		if err := checkMTU(int(n)); err != nil {
			return nil, genericError(configuration, "ERROR - %v", err)
		}
		if p.sessionIDTagged && int(n) != p.mtu {
			return nil, invalidChannel("%s=%d does not match session-id tag value: channel=%s", aeron.ParamMTU, n, u.raw)
		}
		p.mtu = int(n)
	}
	if maxMessage := logbuffer.ComputeMaxMessageLength(p.termLength); p.mtu > maxMessage {
		return nil, invalidChannel("MTU greater than max message length for term length: mtu=%d maxMessageLength=%d termLength=%d channel=%s",
			p.mtu, maxMessage, p.termLength, u.raw)
	}
	if v, ok := u.Get(aeron.ParamPublicationWindow); ok {
		n, err := parseSize(aeron.ParamPublicationWindow, v)
		if err != nil {
			return nil, err
		}
		if n < int64(p.mtu) {
			return nil, invalidChannel("%s=%d cannot be less than the %s=%d", aeron.ParamPublicationWindow, n, aeron.ParamMTU, p.mtu)
		}
		if n > int64(p.termLength>>1) {
			return nil, invalidChannel("%s=%d must not exceed half the %s=%d", aeron.ParamPublicationWindow, n, aeron.ParamTermLength, p.termLength)
		}
		p.window = int(n)
	} else if isIPC {
		p.window = producerWindowLength(p.termLength, o.IPCPublicationTermWindow)
	} else {
		p.window = producerWindowLength(p.termLength, o.PublicationTermWindow)
	}
	var err error
	if p.lingerNs, err = durationParam(u, aeron.ParamLinger, o.PublicationLingerTimeout); err != nil {
		return nil, err
	}
	v, ok := u.Get(aeron.ParamEOS)
	p.signalEOS = !ok || v == "true"
	p.sparse = boolParam(u, aeron.ParamSparse, !o.DenseLogs)
	p.ssc = boolParam(u, paramSpiesSimulateConnection, o.SpiesSimulateConnection)
	if err := untetheredParams(u, o, &p.untetheredWindowLimitNs, &p.untetheredLingerNs, &p.untetheredRestingNs); err != nil {
		return nil, err
	}
	p.maxResend = o.MaxResend
	if v, ok := u.Get(paramMaxResend); ok {
		n, err := parseInt32(u, paramMaxResend, v)
		if err != nil {
			return nil, err
		}
		if n <= 0 || n > maxResendLimit {
			return nil, invalidChannel("invalid %s=%d, must be > 0 and <= %d", paramMaxResend, n, maxResendLimit)
		}
		p.maxResend = int(n)
	}
	if err := p.readPosition(u); err != nil {
		return nil, err
	}
	mode, _ := u.Get(aeron.ParamControlMode)
	p.isResponse = mode == aeron.ControlModeResponse
	p.responseCorrelationID = -1
	if v, ok := u.Get(aeron.ParamResponseCorrelationID); ok {
		if v == prototypeCorrelationID {
			p.responseCorrelationID = prototypeCorrelationValue
		} else if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < -1 {
			return nil, invalidChannel("invalid %s, must be a number greater than or equal to -1, or '%s'",
				aeron.ParamResponseCorrelationID, prototypeCorrelationID)
		} else {
			p.responseCorrelationID = n
		}
	}
	return p, nil
}

// readPosition reads init-term-id, term-id and term-offset: all or none.
func (p *publicationParams) readPosition(u *channelURI) error {
	initStr, hasInit := u.Get(aeron.ParamInitialTermID)
	termStr, hasTerm := u.Get(aeron.ParamTermID)
	offStr, hasOff := u.Get(aeron.ParamTermOffset)
	count := 0
	for _, b := range []bool{hasInit, hasTerm, hasOff} {
		if b {
			count++
		}
	}
	if count == 0 {
		p.initialTermID = d32Random()
		p.termID, p.termOffset = p.initialTermID, 0
		return nil
	}
	if count < 3 {
		return invalidChannel("params must be used as a complete set: %s %s %s channel=%s",
			aeron.ParamInitialTermID, aeron.ParamTermID, aeron.ParamTermOffset, u.raw)
	}
	var err error
	if p.initialTermID, err = parseInt32(u, aeron.ParamInitialTermID, initStr); err != nil {
		return err
	}
	if p.termID, err = parseInt32(u, aeron.ParamTermID, termStr); err != nil {
		return err
	}
	if p.termOffset, err = parseInt32(u, aeron.ParamTermOffset, offStr); err != nil {
		return err
	}
	if int(p.termOffset) > p.termLength {
		return invalidChannel("%s=%d > %s=%d: channel=%s", aeron.ParamTermOffset, p.termOffset, aeron.ParamTermLength, p.termLength, u.raw)
	}
	if p.termOffset < 0 {
		return invalidChannel("%s=%d out of range: channel=%s", aeron.ParamTermOffset, p.termOffset, u.raw)
	}
	if p.termOffset&(logbuffer.FrameAlignment-1) != 0 {
		return invalidChannel("%s=%d must be a multiple of FRAME_ALIGNMENT: channel=%s", aeron.ParamTermOffset, p.termOffset, u.raw)
	}
	if p.termID-p.initialTermID < 0 {
		return invalidChannel("difference greater than 2^31 - 1: %s=%d when %s=%d channel=%s",
			aeron.ParamInitialTermID, p.initialTermID, aeron.ParamTermID, p.termID, u.raw)
	}
	p.hasPosition = true
	return nil
}

func checkTermLength(n int64) error {
	switch {
	case n < logbuffer.MinTermLength:
		return genericError(illegalState, "Term length less than min length of %d: length=%d", logbuffer.MinTermLength, n)
	case n > logbuffer.MaxTermLength:
		return genericError(illegalState, "Term length more than max length of %d: length=%d", logbuffer.MaxTermLength, n)
	case n&(n-1) != 0:
		return genericError(illegalState, "Term length not a power of 2: length=%d", n)
	}
	return nil
}

func boolParam(u *channelURI, name string, def bool) bool {
	if v, ok := u.Get(name); ok {
		return v == "true"
	}
	return def
}

func durationParam(u *channelURI, name string, def time.Duration) (int64, error) {
	if v, ok := u.Get(name); ok {
		return parseDuration(name, v)
	}
	return int64(def), nil
}

func untetheredParams(u *channelURI, o *Options, window, linger, resting *int64) error {
	var err error
	if *window, err = durationParam(u, paramUntetheredWindowLimit, o.UntetheredWindowLimitTimeout); err != nil {
		return err
	}
	if v, ok := u.Get(paramUntetheredLinger); ok {
		if *linger, err = parseDuration(paramUntetheredLinger, v); err != nil {
			return err
		}
	} else if o.UntetheredLingerTimeout > 0 {
		*linger = int64(o.UntetheredLingerTimeout)
	} else {
		*linger = *window
	}
	*resting, err = durationParam(u, paramUntetheredResting, o.UntetheredRestingTimeout)
	return err
}

// subscriptionParams are an ADD_SUBSCRIPTION's parameters
// (SubscriptionParams).
type subscriptionParams struct {
	sessionID                                      int32
	hasSessionID, isResponse, tether, rejoin       bool
	sparse, reliable                               bool
	group                                          inferable
	rcvWnd                                         int // rcv-wnd, 0: the driver's initial window
	untetheredWindowNs, untetheredLingerNs, restNs int64
}

func (c *conductor) subscriptionParams(u *channelURI) (*subscriptionParams, error) {
	o := &c.opts
	p := &subscriptionParams{}
	if v, ok := u.Get(aeron.ParamSessionID); ok {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return nil, genericError(numberFormat, "For input string: \"%s\"", v)
		}
		p.sessionID, p.hasSessionID = int32(n), true
	}
	mode, _ := u.Get(aeron.ParamControlMode)
	p.isResponse = mode == aeron.ControlModeResponse
	initStr, hasInit := u.Get(aeron.ParamInitialTermID)
	termStr, hasTerm := u.Get(aeron.ParamTermID)
	offStr, hasOff := u.Get(aeron.ParamTermOffset)
	if hasInit || hasTerm || hasOff {
		if !hasInit || !hasTerm || !hasOff {
			return nil, genericError(illegalArgument, "params must be used as a complete set: %s %s %s channel=%s",
				aeron.ParamInitialTermID, aeron.ParamTermID, aeron.ParamTermOffset, u.raw)
		}
		var nums [3]int64
		for i, s := range []string{initStr, termStr, offStr} {
			n, err := strconv.ParseInt(s, 10, 32)
			if err != nil {
				return nil, genericError(numberFormat, "For input string: \"%s\"", s)
			}
			nums[i] = n
		}
		if nums[2] < 0 || nums[2] > logbuffer.MaxTermLength {
			return nil, genericError(illegalArgument, "%s=%d out of range: channel=%s", aeron.ParamTermOffset, nums[2], u.raw)
		}
		if nums[2]&(logbuffer.FrameAlignment-1) != 0 {
			return nil, genericError(illegalArgument, "%s=%d must be a multiple of FRAME_ALIGNMENT: channel=%s", aeron.ParamTermOffset, nums[2], u.raw)
		}
		if int32(nums[1])-int32(nums[0]) < 0 {
			return nil, genericError(illegalState, "difference greater than 2^31 - 1: %s=%d when %s=%d channel=%s",
				aeron.ParamInitialTermID, nums[0], aeron.ParamTermID, nums[1], u.raw)
		}
	}
	p.rejoin = boolParam(u, paramRejoin, !o.NoRejoin)
	p.tether = boolParam(u, paramTether, !o.Untethered)
	p.sparse = boolParam(u, aeron.ParamSparse, !o.DenseLogs)
	p.reliable = boolParam(u, aeron.ParamReliable, !o.Unreliable)
	if v, ok := u.Get(paramGroup); ok {
		switch v {
		case "true":
			p.group = inferTrue
		case "false":
			p.group = inferFalse
		case "infer":
		default:
			return nil, genericError(illegalArgument, "invalid %s value: %s", paramGroup, v)
		}
	}
	var err error
	if p.rcvWnd, err = bufferLengthParam(u, aeron.ParamReceiverWindow); err != nil {
		return nil, err
	}
	if err := untetheredParams(u, o, &p.untetheredWindowNs, &p.untetheredLingerNs, &p.restNs); err != nil {
		return nil, err
	}
	return p, nil
}
