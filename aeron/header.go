package aeron

import (
	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
)

// Header describes the data frame a fragment handler is looking at. It is
// only valid during the handler call; copy what you need.
type Header struct {
	term          []byte
	offset        int
	initialTermID int32
	bitsToShift   int
}

// FrameLength is the frame's length including its 32-byte header.
func (h *Header) FrameLength() int {
	return int(shm.GetInt32(h.term, h.offset+logbuffer.FrameLengthOffset))
}

// Flags are the frame flags: 0x80 begin, 0x40 end (0xC0 = whole message).
func (h *Header) Flags() uint8 { return h.term[h.offset+logbuffer.FrameFlagsOffset] }

// Unfragmented reports whether the fragment is a whole message (both the
// begin and the end flags), which a FragmentAssembler passes on as it is.
func (h *Header) Unfragmented() bool {
	return h.Flags()&logbuffer.FlagsUnfragmented == logbuffer.FlagsUnfragmented
}

// Type is the frame type (1 = data).
func (h *Header) Type() uint16 { return shm.GetUint16(h.term, h.offset+logbuffer.FrameTypeOffset) }

// TermOffset is the frame's offset in its term.
func (h *Header) TermOffset() int32 {
	return shm.GetInt32(h.term, h.offset+logbuffer.FrameTermOffsetOffset)
}

// SessionID identifies the publication (stream instance) the frame came from.
func (h *Header) SessionID() int32 {
	return shm.GetInt32(h.term, h.offset+logbuffer.FrameSessionIDOffset)
}

// StreamID is the frame's stream id.
func (h *Header) StreamID() int32 {
	return shm.GetInt32(h.term, h.offset+logbuffer.FrameStreamIDOffset)
}

// TermID is the frame's term id.
func (h *Header) TermID() int32 { return shm.GetInt32(h.term, h.offset+logbuffer.FrameTermIDOffset) }

// ReservedValue is the frame's 64-bit reserved value (0 unless the
// publisher set it through a BufferClaim).
func (h *Header) ReservedValue() int64 {
	return shm.GetInt64(h.term, h.offset+logbuffer.FrameReservedValueOffset)
}

// InitialTermID is the stream's initial term id.
func (h *Header) InitialTermID() int32 { return h.initialTermID }

// Position is the stream position just after this frame (aligned), the
// value the subscriber position takes once the frame is consumed.
func (h *Header) Position() int64 {
	next := int(h.TermOffset()) + shm.Align(h.FrameLength(), logbuffer.FrameAlignment)
	return logbuffer.ComputePosition(h.TermID(), next, h.bitsToShift, h.initialTermID)
}
