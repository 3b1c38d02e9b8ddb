package driver

import (
	"strconv"
	"time"

	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/aeron/internal/wire"
	"github.com/goblin-kv/goblin/internal/shm"
)

// Channel timestamps (channel-rcv-ts-offset, channel-snd-ts-offset): the
// driver writes the wall-clock time in nanoseconds since the epoch, little
// endian, into a DATA frame at an offset from the start of its payload,
// or, with the value "reserved", into the header's reserved value (offset
// −8 from the payload). The receiver stamps the first frame of each
// datagram as it reads it, when that frame begins a message and is long
// enough; the sender stamps every message-beginning DATA frame of a
// datagram it is about to send (data and retransmits), in the
// publication's log as the Java driver does. media-rcv-ts-offset is the C
// driver's: the kernel's receive time (SO_TIMESTAMPNS, read with the
// datagram; aeron/internal/udp/timestamps.go) written into the first frame
// of a datagram, when it is a message-beginning DATA frame that holds it,
// before the channel receive timestamp (aeron_timestamps_set_timestamp).
// The Java driver refuses media-rcv-ts-offset; Aeron's system tests run it
// on the C driver only.

// timestampReserved is the value that names the header's reserved value.
const timestampReserved = "reserved"

// channelTimestamp is one parsed *-ts-offset parameter.
type channelTimestamp struct {
	enabled bool
	offset  int // from the payload start (−8: the reserved value)
}

// parseChannelTimestamp reads a *-ts-offset parameter of a channel.
func parseChannelTimestamp(u *channelURI, param string) (channelTimestamp, error) {
	v, ok := u.Get(param)
	if !ok {
		return channelTimestamp{}, nil
	}
	if v == timestampReserved {
		return channelTimestamp{enabled: true, offset: logbuffer.FrameReservedValueOffset - logbuffer.HeaderLength}, nil
	}
	n, err := strconv.Atoi(v)
	if reserved := logbuffer.FrameReservedValueOffset - logbuffer.HeaderLength; err != nil || n < reserved {
		// Java takes any int; one below the reserved value's offset would
		// overwrite the frame's header.
		return channelTimestamp{}, invalidChannel("%s must be an int of at least %d or %q, was %q: channel=%s",
			param, reserved, timestampReserved, v, u.raw)
	}
	return channelTimestamp{enabled: true, offset: n}, nil
}

// epochNanos is the channel timestamp clock.
func epochNanos() int64 { return time.Now().UnixNano() }

// applyReceive stamps the first frame of a datagram just read, if it
// begins a message and the timestamp ends before the datagram does
// (ReceiveChannelEndpoint.applyChannelReceiveTimestamp).
func (t channelTimestamp) applyReceive(p []byte, nowNs int64) {
	if len(p) <= logbuffer.HeaderLength || p[wire.FlagsOffset]&logbuffer.FlagBegin == 0 {
		return
	}
	at := logbuffer.HeaderLength + t.offset
	if at+8 < len(p) {
		shm.PutInt64(p, at, nowNs)
	}
}

// applySend stamps every DATA frame of a datagram about to be sent that
// begins a message and holds the timestamp, all with one reading of the
// clock (SendChannelEndpoint.applyChannelSendTimestamp).
func (t channelTimestamp) applySend(p []byte) {
	nowNs := int64(0)
	for off := 0; off+logbuffer.HeaderLength <= len(p); {
		frameLength := int(shm.GetInt32(p, off+wire.FrameLengthOffset))
		if frameLength <= 0 {
			return
		}
		at := logbuffer.HeaderLength + t.offset
		if shm.GetUint16(p, off+wire.TypeOffset) == wire.TypeData && p[off+wire.FlagsOffset]&logbuffer.FlagBegin != 0 &&
			at+8 <= frameLength && off+at+8 <= len(p) {
			if nowNs == 0 {
				nowNs = epochNanos()
			}
			shm.PutInt64(p, off+at, nowNs)
		}
		off += (frameLength + logbuffer.FrameAlignment - 1) &^ (logbuffer.FrameAlignment - 1)
	}
}

// applyMedia writes the kernel's receive time ns into the first frame of
// datagram p as the C driver does (aeron_timestamps_set_timestamp): only a
// DATA frame (not a heartbeat) that begins a message, at the reserved
// value or at an offset whose 8 bytes lie within both the datagram and
// the frame.
func (t channelTimestamp) applyMedia(p []byte, ns int64) {
	if len(p) < logbuffer.HeaderLength || shm.GetUint16(p, wire.TypeOffset) != wire.TypeData ||
		p[wire.FlagsOffset]&logbuffer.FlagBegin == 0 {
		return
	}
	frameLength := int(shm.GetInt32(p, wire.FrameLengthOffset))
	if frameLength == 0 {
		return
	}
	if t.offset == logbuffer.FrameReservedValueOffset-logbuffer.HeaderLength {
		shm.PutInt64(p, logbuffer.FrameReservedValueOffset, ns)
		return
	}
	body := len(p) - logbuffer.HeaderLength
	if t.offset >= 0 && t.offset <= body-8 && t.offset <= frameLength-logbuffer.HeaderLength-8 {
		shm.PutInt64(p, logbuffer.HeaderLength+t.offset, ns)
	}
}

// checkTimestampsDoNotOverlap refuses a channel whose timestamps would
// overwrite each other (aeron_udp_channel_verify_timestamp_offsets_do_not_overlap).
func checkTimestampsDoNotOverlap(ch *udpChannel) error {
	overlap := func(a, b channelTimestamp) bool {
		return a.enabled && b.enabled && abs(a.offset-b.offset) < 8
	}
	switch {
	case overlap(ch.mediaRcvTs, ch.rcvTs):
		return invalidChannel("%s and %s overlap: channel=%s", paramMediaRcvTsOff, paramChannelRcvTsOff, ch.uri.raw)
	case overlap(ch.mediaRcvTs, ch.sndTs):
		return invalidChannel("%s and %s overlap: channel=%s", paramMediaRcvTsOff, paramChannelSndTsOff, ch.uri.raw)
	case overlap(ch.rcvTs, ch.sndTs):
		return invalidChannel("%s and %s overlap: channel=%s", paramChannelRcvTsOff, paramChannelSndTsOff, ch.uri.raw)
	}
	return nil
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// javaOffset is the offset as the Java driver's UdpChannel holds it: −1
// (Aeron.NULL_VALUE) when off, −8 for "reserved".
func (t channelTimestamp) javaOffset() int {
	if !t.enabled {
		return -1
	}
	return t.offset
}

// checkTimestampMatch refuses a channel whose timestamp offset differs from
// the existing endpoint's (DriverConductor.validateReceiveTimestampOffset,
// validateChannelSendTimestampOffset; both say "subscription").
func checkTimestampMatch(param string, got, existing channelTimestamp, ch, existingCh *udpChannel) error {
	if got == existing {
		return nil
	}
	return invalidChannel("option conflicts with existing subscription: %s=%d existingChannel=%s channel=%s",
		param, got.javaOffset(), existingCh.uri.raw, ch.uri.raw)
}
