package wire

import (
	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
)

// The checks a receiver makes of the frames a data socket reads, before
// any field reaches a log or an index: anyone who can send a datagram to
// the socket writes these bytes, so nothing in them is trusted. They are
// the Aeron drivers' own (aeron_udp_protocol.h aeron_is_frame_valid,
// ReceiveChannelEndpoint/aeron_receive_channel_endpoint_is_valid_setup,
// PublicationImage.validatePacket).

// MaxUDPPayloadLength is the longest datagram, so the largest MTU, Aeron
// allows (MAX_UDP_PAYLOAD_LENGTH).
const MaxUDPPayloadLength = 65504

// ValidDataSocketFrame reports whether a datagram read from a receive
// endpoint's data socket holds a frame the receiver may dispatch on its
// type: of the current version, a frame length that is not negative, and
// long enough for its type. DATA and PAD datagrams hold whole aligned
// frames of at least a header; a SETUP or RTTM is at least its fixed
// length and its frame length fits the datagram. Other types a data
// socket may see (SM, NAK, ERR, RSP_SETUP, RES) are valid when at least
// their fixed length, and ignored; an unknown type is invalid.
func ValidDataSocketFrame(b []byte) bool {
	if len(b) < MinHeaderLength || b[VersionOffset] != CurrentVersion {
		return false
	}
	frameLength := shm.GetInt32(b, FrameLengthOffset)
	if frameLength < 0 {
		return false
	}
	typ := Header(b).Type()
	if typ == TypeData || typ == TypePad {
		return len(b) >= DataHeaderLength && len(b)%logbuffer.FrameAlignment == 0
	}
	var fixed int
	switch typ {
	case TypeSetup:
		fixed = SetupLength
	case TypeRTTM:
		fixed = RTTMLength
	case TypeSM:
		fixed = SMLength
	case TypeNak:
		fixed = NakLength
	case TypeErr:
		fixed = ErrHeaderLength
	case TypeRspSetup:
		fixed = RspSetupLength
	case TypeRes:
		fixed = MinHeaderLength + resIPv4Length
	default:
		return false
	}
	return len(b) >= fixed && int(frameLength) <= len(b)
}

// resIPv4Length is the shortest resolution entry (type, flags, port,
// age, an IPv4 address, a name length: 14 packed bytes), as
// aeron_is_frame_valid counts it.
const resIPv4Length = 14

// ValidSetup reports whether a SETUP's fields describe a stream a
// receiver can make a log for: a term length that is a power of two from
// 64 KiB to 1 GiB, a term offset inside the term and frame aligned, an
// MTU from a header to the largest datagram and frame aligned
// (aeron_receive_channel_endpoint_is_valid_setup), and an active term at
// or after the initial one (a term count below zero is a position below
// zero, which no log holds). s must be at least SetupLength long.
func ValidSetup(s Setup) bool {
	termLength, termOffset, mtu := s.TermLength(), s.TermOffset(), s.MTU()
	return termLength >= logbuffer.MinTermLength && termLength <= logbuffer.MaxTermLength &&
		termLength&(termLength-1) == 0 &&
		termOffset >= 0 && termOffset < termLength && termOffset%logbuffer.FrameAlignment == 0 &&
		mtu >= DataHeaderLength && mtu <= MaxUDPPayloadLength && mtu%logbuffer.FrameAlignment == 0 &&
		s.ActiveTermID()-s.InitialTermID() >= 0
}

// DataPacketLength checks a DATA or PAD datagram against the term it
// claims a place in (PublicationImage.validatePacket) and returns how far
// it moves the stream: 0 for a heartbeat, the aligned length of its
// frames otherwise (a closing PAD counts its whole padded length, though
// only its header is in the datagram), or −1 when the datagram is not a
// run of DATA/PAD frames, each at least a header long and at the term
// offset the previous one ends at, that fills the datagram exactly and
// ends inside the term. Java and C stop at a frame length <= 0 and so let
// a frame of 1 to 31 bytes through; this refuses it. The term
// offset must be inside the term and frame aligned. A datagram that
// passes fits the term from termOffset: termOffset+len(b) <= termLength.
// b must be at least DataHeaderLength long; termLength a power of two.
func DataPacketLength(b []byte, termOffset int32, termLength int) int {
	if termOffset < 0 || int(termOffset) >= termLength || termOffset%logbuffer.FrameAlignment != 0 {
		return -1
	}
	if IsHeartbeat(b) {
		return 0
	}
	length := len(b)
	offset := 0
	next := int64(termOffset)
	frameType := -1
	for {
		frameLength := shm.GetInt32(b, offset+FrameLengthOffset)
		if frameLength < DataHeaderLength {
			// Shorter than its own header (a heartbeat, length 0, was
			// taken above): a subscriber would never see it committed
			// and the image would stall behind it.
			return -1
		}
		frameType = int(shm.GetUint16(b, offset+TypeOffset))
		if frameType&^1 != 0 { // only DATA (1) and PAD (0)
			break
		}
		if int64(shm.GetInt32(b, offset+logbuffer.FrameTermOffsetOffset)) != next {
			break
		}
		aligned := (int64(frameLength) + logbuffer.FrameAlignment - 1) &^ (logbuffer.FrameAlignment - 1)
		next += aligned
		if next > int64(termLength) {
			break
		}
		offset += int(aligned)
		if offset > length-DataHeaderLength {
			break
		}
	}
	if offset != length && (offset < length || frameType != TypePad) {
		return -1
	}
	return offset
}
