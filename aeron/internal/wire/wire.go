// Package wire is the layout of the frames Aeron media drivers exchange
// over UDP (Java: io.aeron.protocol): DATA and PAD (whose 32-byte header is
// also the header of every frame in a term, package logbuffer), SETUP,
// status messages, NAKs, RTT measurements, ERR and RSP_SETUP frames. Each
// frame is a flyweight over its bytes, a named []byte type whose methods
// read the fields at named offsets; Append functions encode one,
// strconv.Append style, into a caller's buffer. Every field is
// little-endian. goblin's media driver (aeron/driver) and its tests use it,
// so no layout is written down twice.
package wire

import (
	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
)

// The common header every frame starts with (HeaderFlyweight).
const (
	FrameLengthOffset = 0 // int32: the frame's length, header included
	VersionOffset     = 4 // int8: CurrentVersion
	FlagsOffset       = 5 // uint8
	TypeOffset        = 6 // uint16

	// MinHeaderLength is the shortest valid frame: a receiver drops (and
	// counts as invalid) anything shorter or of another version.
	MinHeaderLength = 8
	CurrentVersion  = 0
)

// Frame types.
const (
	TypePad      = 0x00
	TypeData     = 0x01
	TypeNak      = 0x02
	TypeSM       = 0x03
	TypeErr      = 0x04
	TypeSetup    = 0x05
	TypeRTTM     = 0x06
	TypeRes      = 0x07
	TypeRspSetup = 0x0B
)

// Header is any frame's common header.
type Header []byte

// FrameLength is the frame's length field.
func (h Header) FrameLength() int32 { return shm.GetInt32(h, FrameLengthOffset) }

// Version is the protocol version.
func (h Header) Version() byte { return h[VersionOffset] }

// Flags are the frame's flags.
func (h Header) Flags() byte { return h[FlagsOffset] }

// Type is the frame type.
func (h Header) Type() uint16 { return shm.GetUint16(h, TypeOffset) }

// Valid reports whether a datagram of this length holds a frame a driver
// reads: at least MinHeaderLength bytes of the current version
// (UdpChannelTransport.isValidFrame).
func Valid(b []byte) bool { return len(b) >= MinHeaderLength && b[VersionOffset] == CurrentVersion }

func putHeader(b []byte, length int32, flags byte, typ uint16) {
	shm.PutInt32(b, FrameLengthOffset, length)
	b[VersionOffset] = CurrentVersion
	b[FlagsOffset] = flags
	shm.PutUint16(b, TypeOffset, typ)
}

// grow returns b extended by n zero bytes and the new part.
func grow(b []byte, n int) ([]byte, []byte) {
	l := len(b)
	if cap(b)-l < n {
		nb := make([]byte, l, 2*cap(b)+n)
		copy(nb, b)
		b = nb
	}
	b = b[:l+n]
	clear(b[l:])
	return b, b[l:]
}

// Data is a DATA or PAD frame's 32-byte header (DataHeaderFlyweight); the
// offsets are logbuffer's, since a term holds the same frames.
type Data []byte

// DataHeaderLength is the length of a DATA header; a heartbeat is a lone
// header of frame length 0.
const DataHeaderLength = logbuffer.HeaderLength

// TermOffset is where the frame sits in its term.
func (d Data) TermOffset() int32 { return shm.GetInt32(d, logbuffer.FrameTermOffsetOffset) }

// SessionID is the publication's session.
func (d Data) SessionID() int32 { return shm.GetInt32(d, logbuffer.FrameSessionIDOffset) }

// StreamID is the publication's stream.
func (d Data) StreamID() int32 { return shm.GetInt32(d, logbuffer.FrameStreamIDOffset) }

// TermID is the frame's term.
func (d Data) TermID() int32 { return shm.GetInt32(d, logbuffer.FrameTermIDOffset) }

// IsHeartbeat: a datagram of exactly one header whose frame length is 0
// (DataHeaderFlyweight.isHeartbeat).
func IsHeartbeat(datagram []byte) bool {
	return len(datagram) == DataHeaderLength && shm.GetInt32(datagram, FrameLengthOffset) == 0
}

// IsEndOfStream reports the EOS flag of a DATA header.
func IsEndOfStream(d []byte) bool { return d[FlagsOffset]&logbuffer.FlagEOS != 0 }

// IsRevoked reports the REVOKED flag of a DATA header.
func IsRevoked(d []byte) bool { return d[FlagsOffset]&logbuffer.FlagRevoked != 0 }

// PutHeartbeat writes a heartbeat (a DATA header of frame length 0) at the
// sender's position into b[:DataHeaderLength].
func PutHeartbeat(b []byte, flags byte, sessionID, streamID, termID, termOffset int32) {
	putHeader(b, 0, flags, TypeData)
	shm.PutInt32(b, logbuffer.FrameTermOffsetOffset, termOffset)
	shm.PutInt32(b, logbuffer.FrameSessionIDOffset, sessionID)
	shm.PutInt32(b, logbuffer.FrameStreamIDOffset, streamID)
	shm.PutInt32(b, logbuffer.FrameTermIDOffset, termID)
	shm.PutInt64(b, logbuffer.FrameReservedValueOffset, 0)
}

// Setup is a SETUP frame (SetupFlyweight): a publication announcing itself
// to receivers, every 100 ms until a status message comes.
type Setup []byte

// SETUP layout and flags.
const (
	SetupTermOffsetOffset    = 8
	SetupSessionIDOffset     = 12
	SetupStreamIDOffset      = 16
	SetupInitialTermIDOffset = 20
	SetupActiveTermIDOffset  = 24
	SetupTermLengthOffset    = 28
	SetupMTUOffset           = 32
	SetupTTLOffset           = 36
	SetupLength              = 40

	// SetupFlagSendResponseSetup: the publication is a request
	// publication with a response-correlation-id; its image answers with
	// RSP_SETUP once the server has a response publication.
	SetupFlagSendResponseSetup = 0x80
	// SetupFlagGroup: the channel has group semantics.
	SetupFlagGroup = 0x40
)

func (s Setup) TermOffset() int32    { return shm.GetInt32(s, SetupTermOffsetOffset) }
func (s Setup) SessionID() int32     { return shm.GetInt32(s, SetupSessionIDOffset) }
func (s Setup) StreamID() int32      { return shm.GetInt32(s, SetupStreamIDOffset) }
func (s Setup) InitialTermID() int32 { return shm.GetInt32(s, SetupInitialTermIDOffset) }
func (s Setup) ActiveTermID() int32  { return shm.GetInt32(s, SetupActiveTermIDOffset) }
func (s Setup) TermLength() int32    { return shm.GetInt32(s, SetupTermLengthOffset) }
func (s Setup) MTU() int32           { return shm.GetInt32(s, SetupMTUOffset) }
func (s Setup) TTL() int32           { return shm.GetInt32(s, SetupTTLOffset) }
func (s Setup) Flags() byte          { return s[FlagsOffset] }

// SetupFields are a SETUP frame's contents.
type SetupFields struct {
	Flags                                             byte
	TermOffset, SessionID, StreamID                   int32
	InitialTermID, ActiveTermID, TermLength, MTU, TTL int32
}

// PutSetup writes a SETUP frame into b[:SetupLength].
func PutSetup(b []byte, f *SetupFields) {
	putHeader(b, SetupLength, f.Flags, TypeSetup)
	shm.PutInt32(b, SetupTermOffsetOffset, f.TermOffset)
	shm.PutInt32(b, SetupSessionIDOffset, f.SessionID)
	shm.PutInt32(b, SetupStreamIDOffset, f.StreamID)
	shm.PutInt32(b, SetupInitialTermIDOffset, f.InitialTermID)
	shm.PutInt32(b, SetupActiveTermIDOffset, f.ActiveTermID)
	shm.PutInt32(b, SetupTermLengthOffset, f.TermLength)
	shm.PutInt32(b, SetupMTUOffset, f.MTU)
	shm.PutInt32(b, SetupTTLOffset, f.TTL)
}

// SM is a status message (StatusMessageFlyweight): a receiver's
// consumption position and window, 36 bytes, or 44 with a group tag.
type SM []byte

// Status message layout and flags.
const (
	SMSessionIDOffset         = 8
	SMStreamIDOffset          = 12
	SMConsumptionTermIDOffset = 16
	SMConsumptionTermOffset   = 20
	SMReceiverWindowOffset    = 24
	SMReceiverIDOffset        = 28
	SMGroupTagOffset          = 36
	SMLength                  = 36
	SMLengthWithGroupTag      = 44

	// SMFlagSendSetup: "send me a SETUP" (setup-eliciting; position 0,
	// window 0).
	SMFlagSendSetup = 0x80
	// SMFlagEndOfStream: the receiver is going away.
	SMFlagEndOfStream = 0x40
)

func (m SM) SessionID() int32         { return shm.GetInt32(m, SMSessionIDOffset) }
func (m SM) StreamID() int32          { return shm.GetInt32(m, SMStreamIDOffset) }
func (m SM) ConsumptionTermID() int32 { return shm.GetInt32(m, SMConsumptionTermIDOffset) }
func (m SM) ConsumptionOffset() int32 { return shm.GetInt32(m, SMConsumptionTermOffset) }
func (m SM) ReceiverWindow() int32    { return shm.GetInt32(m, SMReceiverWindowOffset) }
func (m SM) ReceiverID() int64        { return shm.GetInt64(m, SMReceiverIDOffset) }
func (m SM) Flags() byte              { return m[FlagsOffset] }

// HasGroupTag reports whether the message carries the 8-byte group tag
// (its application-specific feedback is exactly a long).
func (m SM) HasGroupTag() bool { return len(m) >= SMLengthWithGroupTag }

// GroupTag is the receiver's group tag (valid when HasGroupTag).
func (m SM) GroupTag() int64 { return shm.GetInt64(m, SMGroupTagOffset) }

// SMFields are a status message's contents.
type SMFields struct {
	Flags                      byte
	SessionID, StreamID        int32
	TermID, TermOffset, Window int32
	ReceiverID                 int64
	GroupTag                   int64
	HasGroupTag                bool
}

// PutSM writes a status message into b and returns its length (36, or 44
// with a group tag).
func PutSM(b []byte, f *SMFields) int {
	n := SMLength
	if f.HasGroupTag {
		n = SMLengthWithGroupTag
		shm.PutInt64(b, SMGroupTagOffset, f.GroupTag)
	}
	putHeader(b, int32(n), f.Flags, TypeSM)
	shm.PutInt32(b, SMSessionIDOffset, f.SessionID)
	shm.PutInt32(b, SMStreamIDOffset, f.StreamID)
	shm.PutInt32(b, SMConsumptionTermIDOffset, f.TermID)
	shm.PutInt32(b, SMConsumptionTermOffset, f.TermOffset)
	shm.PutInt32(b, SMReceiverWindowOffset, f.Window)
	shm.PutInt64(b, SMReceiverIDOffset, f.ReceiverID)
	return n
}

// Nak is a negative acknowledgement (NakFlyweight): a receiver asking for
// a gap to be sent again.
type Nak []byte

// NAK layout.
const (
	NakSessionIDOffset  = 8
	NakStreamIDOffset   = 12
	NakTermIDOffset     = 16
	NakTermOffsetOffset = 20
	NakLengthOffset     = 24
	NakLength           = 28
)

func (n Nak) SessionID() int32  { return shm.GetInt32(n, NakSessionIDOffset) }
func (n Nak) StreamID() int32   { return shm.GetInt32(n, NakStreamIDOffset) }
func (n Nak) TermID() int32     { return shm.GetInt32(n, NakTermIDOffset) }
func (n Nak) TermOffset() int32 { return shm.GetInt32(n, NakTermOffsetOffset) }
func (n Nak) Length() int32     { return shm.GetInt32(n, NakLengthOffset) }

// PutNak writes a NAK into b[:NakLength].
func PutNak(b []byte, sessionID, streamID, termID, termOffset, length int32) {
	putHeader(b, NakLength, 0, TypeNak)
	shm.PutInt32(b, NakSessionIDOffset, sessionID)
	shm.PutInt32(b, NakStreamIDOffset, streamID)
	shm.PutInt32(b, NakTermIDOffset, termID)
	shm.PutInt32(b, NakTermOffsetOffset, termOffset)
	shm.PutInt32(b, NakLengthOffset, length)
}

// RTTM is a round-trip-time measurement (RttMeasurementFlyweight).
type RTTM []byte

// RTTM layout and flags.
const (
	RTTMSessionIDOffset      = 8
	RTTMStreamIDOffset       = 12
	RTTMEchoTimestampOffset  = 16
	RTTMReceptionDeltaOffset = 24
	RTTMReceiverIDOffset     = 32
	RTTMLength               = 40

	// RTTMFlagReply asks the other side to echo the measurement.
	RTTMFlagReply = 0x80
)

func (r RTTM) SessionID() int32       { return shm.GetInt32(r, RTTMSessionIDOffset) }
func (r RTTM) StreamID() int32        { return shm.GetInt32(r, RTTMStreamIDOffset) }
func (r RTTM) EchoTimestampNs() int64 { return shm.GetInt64(r, RTTMEchoTimestampOffset) }
func (r RTTM) ReceptionDelta() int64  { return shm.GetInt64(r, RTTMReceptionDeltaOffset) }
func (r RTTM) ReceiverID() int64      { return shm.GetInt64(r, RTTMReceiverIDOffset) }
func (r RTTM) Flags() byte            { return r[FlagsOffset] }

// PutRTTM writes an RTT measurement into b[:RTTMLength].
func PutRTTM(b []byte, flags byte, sessionID, streamID int32, echoNs, deltaNs, receiverID int64) {
	putHeader(b, RTTMLength, flags, TypeRTTM)
	shm.PutInt32(b, RTTMSessionIDOffset, sessionID)
	shm.PutInt32(b, RTTMStreamIDOffset, streamID)
	shm.PutInt64(b, RTTMEchoTimestampOffset, echoNs)
	shm.PutInt64(b, RTTMReceptionDeltaOffset, deltaNs)
	shm.PutInt64(b, RTTMReceiverIDOffset, receiverID)
}

// Err is an error frame (ErrorFlyweight): a receiver telling a sender why
// it will not take its stream (an image rejected by its client).
type Err []byte

// ERR layout and flags.
const (
	ErrSessionIDOffset     = 8
	ErrStreamIDOffset      = 12
	ErrReceiverIDOffset    = 16
	ErrGroupTagOffset      = 24
	ErrCodeOffset          = 32
	ErrMessageLengthOffset = 36
	ErrMessageOffset       = 40
	ErrHeaderLength        = 40
	// ErrMaxMessageLength bounds the message (MAX_ERROR_MESSAGE_LENGTH).
	ErrMaxMessageLength = 1023
	// ErrFlagGroupTag: the group tag field is set.
	ErrFlagGroupTag = 0x08
)

func (e Err) SessionID() int32  { return shm.GetInt32(e, ErrSessionIDOffset) }
func (e Err) StreamID() int32   { return shm.GetInt32(e, ErrStreamIDOffset) }
func (e Err) ReceiverID() int64 { return shm.GetInt64(e, ErrReceiverIDOffset) }
func (e Err) HasGroupTag() bool { return e[FlagsOffset]&ErrFlagGroupTag != 0 }
func (e Err) GroupTag() int64   { return shm.GetInt64(e, ErrGroupTagOffset) }
func (e Err) Code() int32       { return shm.GetInt32(e, ErrCodeOffset) }

// Message is the error text, clipped to the frame.
func (e Err) Message() []byte {
	n := int(shm.GetInt32(e, ErrMessageLengthOffset))
	n = max(0, min(n, len(e)-ErrMessageOffset))
	return e[ErrMessageOffset : ErrMessageOffset+n]
}

// ValidErr reports whether b holds a whole ERR frame.
func ValidErr(b []byte) bool {
	return len(b) >= ErrHeaderLength && int(shm.GetInt32(b, ErrMessageLengthOffset)) <= len(b)-ErrMessageOffset
}

// AppendErr appends an ERR frame; msg is clipped to ErrMaxMessageLength.
func AppendErr(b []byte, sessionID, streamID int32, receiverID int64, groupTag int64, hasGroupTag bool,
	code int32, msg string) []byte {
	msg = msg[:min(len(msg), ErrMaxMessageLength)]
	b, f := grow(b, ErrHeaderLength+len(msg))
	var flags byte
	if hasGroupTag {
		flags = ErrFlagGroupTag
		shm.PutInt64(f, ErrGroupTagOffset, groupTag)
	}
	putHeader(f, int32(len(f)), flags, TypeErr)
	shm.PutInt32(f, ErrSessionIDOffset, sessionID)
	shm.PutInt32(f, ErrStreamIDOffset, streamID)
	shm.PutInt64(f, ErrReceiverIDOffset, receiverID)
	shm.PutInt32(f, ErrCodeOffset, code)
	shm.PutInt32(f, ErrMessageLengthOffset, int32(len(msg)))
	copy(f[ErrMessageOffset:], msg)
	return b
}

// RspSetup is a response-setup frame (ResponseSetupFlyweight): the
// server's image telling the client's request publication which session
// its response publication has.
type RspSetup []byte

// RSP_SETUP layout.
const (
	RspSetupSessionIDOffset         = 8
	RspSetupStreamIDOffset          = 12
	RspSetupResponseSessionIDOffset = 16
	RspSetupLength                  = 20
)

func (r RspSetup) SessionID() int32         { return shm.GetInt32(r, RspSetupSessionIDOffset) }
func (r RspSetup) StreamID() int32          { return shm.GetInt32(r, RspSetupStreamIDOffset) }
func (r RspSetup) ResponseSessionID() int32 { return shm.GetInt32(r, RspSetupResponseSessionIDOffset) }

// PutRspSetup writes an RSP_SETUP frame into b[:RspSetupLength].
func PutRspSetup(b []byte, sessionID, streamID, responseSessionID int32) {
	putHeader(b, RspSetupLength, 0, TypeRspSetup)
	shm.PutInt32(b, RspSetupSessionIDOffset, sessionID)
	shm.PutInt32(b, RspSetupStreamIDOffset, streamID)
	shm.PutInt32(b, RspSetupResponseSessionIDOffset, responseSessionID)
}
