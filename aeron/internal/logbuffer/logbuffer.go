// Package logbuffer is the layout of an Aeron log buffer, the file one
// publication's frames live in, and of the data frames inside it: the
// metadata fields the media driver writes and the clients read, the raw
// tail encoding and the position arithmetic (Java: LogBufferDescriptor,
// FrameDescriptor, DataHeaderFlyweight). Both goblin's client (package
// aeron) and its media driver (aeron/driver) use it, so the layout is
// defined once.
//
// # File layout
//
// Three term partitions of TermLength bytes each, then a MetadataLength
// (4096) byte metadata section at the end of the file; the file is
// ComputeLogLength(termLength, pageSize) long.
package logbuffer

import (
	"fmt"
	"math/bits"

	"github.com/goblin-kv/goblin/internal/shm"
)

// Partitions and sizes.
const (
	PartitionCount = 3
	MetadataLength = 4096

	MinTermLength = 64 * 1024
	MaxTermLength = 1 << 30
	MinPageSize   = 4 * 1024
	MaxPageSize   = 1 << 30
	// MaxMessageLengthLimit caps ComputeMaxMessageLength.
	MaxMessageLengthLimit = 16 * 1024 * 1024
	// DefaultFrameHeaderMaxLength is the room for the default header.
	DefaultFrameHeaderMaxLength = 128
)

// Metadata field offsets, from the start of the metadata section. The
// driver writes every field when it creates the log (EndOfStreamPosition
// last, with release); the fields marked "shared" change afterwards.
const (
	TermTailCountersOffset         = 0   // int64 × 3, shared: publishers' raw tails
	ActiveTermCountOffset          = 24  // int32, shared: publishers rotate it
	EndOfStreamPositionOffset      = 128 // int64, shared: the driver
	IsConnectedOffset              = 136 // int32, shared: the driver
	ActiveTransportCountOffset     = 140 // int32, shared: the driver
	CorrelationIDOffset            = 256 // int64
	InitialTermIDOffset            = 264 // int32
	DefaultFrameHeaderLengthOffset = 268 // int32
	MTULengthOffset                = 272 // int32
	TermLengthOffset               = 276 // int32
	PageSizeOffset                 = 280 // int32
	PublicationWindowLengthOffset  = 284 // int32
	ReceiverWindowLengthOffset     = 288 // int32
	SocketSndbufLengthOffset       = 292 // int32
	OSDefaultSocketSndbufOffset    = 296 // int32
	OSMaxSocketSndbufOffset        = 300 // int32
	SocketRcvbufLengthOffset       = 304 // int32
	OSDefaultSocketRcvbufOffset    = 308 // int32
	OSMaxSocketRcvbufOffset        = 312 // int32
	MaxResendOffset                = 316 // int32
	DefaultFrameHeaderOffset       = 320 // DefaultFrameHeaderMaxLength bytes
	EntityTagOffset                = 448 // int64
	ResponseCorrelationIDOffset    = 456 // int64
	LingerTimeoutOffset            = 464 // int64 ns
	UntetheredWindowLimitOffset    = 472 // int64 ns
	UntetheredRestingTimeoutOffset = 480 // int64 ns
	GroupOffset                    = 488 // byte
	IsResponseOffset               = 489 // byte
	RejoinOffset                   = 490 // byte
	ReliableOffset                 = 491 // byte
	SparseOffset                   = 492 // byte
	SignalEOSOffset                = 493 // byte
	SpiesSimulateConnectionOffset  = 494 // byte
	TetherOffset                   = 495 // byte
	IsPublicationRevokedOffset     = 496 // byte, shared: the driver
	TypeOffset                     = 497 // byte: TypeConcurrent, TypeExclusive, TypeImage
	UntetheredLingerTimeoutOffset  = 500 // int64 ns, only 4-aligned: never atomic
)

// Log types stored at TypeOffset (since Aeron 1.50).
const (
	TypeConcurrent byte = 0
	TypeExclusive  byte = 1
	TypeImage      byte = 2
)

// Data frame header: 32 bytes before every frame's payload in a term.
const (
	HeaderLength   = 32
	FrameAlignment = 32

	FrameLengthOffset        = 0  // int32: header + payload, unaligned; ≤ 0 means not committed
	FrameVersionOffset       = 4  // int8: always 0
	FrameFlagsOffset         = 5  // uint8
	FrameTypeOffset          = 6  // uint16
	FrameTermOffsetOffset    = 8  // int32
	FrameSessionIDOffset     = 12 // int32
	FrameStreamIDOffset      = 16 // int32
	FrameTermIDOffset        = 20 // int32
	FrameReservedValueOffset = 24 // int64

	FrameTypePad  = 0
	FrameTypeData = 1

	FlagBegin         = 0x80
	FlagEnd           = 0x40
	FlagEOS           = 0x20
	FlagRevoked       = 0x10
	FlagsUnfragmented = FlagBegin | FlagEnd
)

// CheckTermLength reports whether n is a valid term length: a power of two
// from MinTermLength to MaxTermLength.
func CheckTermLength(n int) error {
	if n < MinTermLength || n > MaxTermLength || n&(n-1) != 0 {
		return fmt.Errorf("term length %d is not a power of two from %d to %d", n, MinTermLength, MaxTermLength)
	}
	return nil
}

// CheckPageSize reports whether n is a valid file page size.
func CheckPageSize(n int) error {
	if n < MinPageSize || n > MaxPageSize || n&(n-1) != 0 {
		return fmt.Errorf("page size %d is not a power of two from %d to %d", n, MinPageSize, MaxPageSize)
	}
	return nil
}

// ComputeLogLength is the length of a log file with the given term length
// and page size: three terms and the metadata, rounded up to a page.
func ComputeLogLength(termLength, pageSize int) int {
	return shm.Align(PartitionCount*termLength+MetadataLength, pageSize)
}

// PositionBitsToShift is log2(termLength).
func PositionBitsToShift(termLength int) int { return bits.TrailingZeros(uint(termLength)) }

// PackTail makes a raw tail: the term id in the high 32 bits, the offset
// in the low 32.
func PackTail(termID int32, termOffset int32) int64 {
	return int64(termID)<<32 | int64(uint32(termOffset))
}

// TermID is the term id of a raw tail.
func TermID(rawTail int64) int32 { return int32(rawTail >> 32) }

// TermOffset is the offset of a raw tail, clamped to the term length (a
// racing get-and-add can push the low word past it).
func TermOffset(rawTail int64, termLength int) int {
	off := rawTail & 0xFFFFFFFF
	if off > int64(termLength) {
		return termLength
	}
	return int(off)
}

// ComputePosition is the stream position of termOffset in termID.
func ComputePosition(termID int32, termOffset int, bitsToShift int, initialTermID int32) int64 {
	termCount := int64(termID - initialTermID) // int32 wrap-around, then widen
	return termCount<<bitsToShift + int64(termOffset)
}

// ComputeTermIDFromPosition is the term id holding position.
func ComputeTermIDFromPosition(position int64, bitsToShift int, initialTermID int32) int32 {
	return int32(position>>bitsToShift) + initialTermID
}

// IndexByPosition is the partition holding position.
func IndexByPosition(position int64, bitsToShift int) int {
	return int((position >> bitsToShift) % PartitionCount)
}

// IndexByTermCount is the partition of the term termCount terms after the
// initial one.
func IndexByTermCount(termCount int64) int { return int(termCount % PartitionCount) }

// MaxPossiblePosition is the largest position a stream of this term length
// can reach.
func MaxPossiblePosition(termLength int) int64 { return int64(termLength) << 31 }

// ComputeMaxMessageLength is the largest message a publication with this
// term length accepts: min(termLength/8, 16 MiB).
func ComputeMaxMessageLength(termLength int) int {
	return min(termLength/8, MaxMessageLengthLimit)
}

// RawTail loads partition index's raw tail. Writers: publishers
// (get-and-add, CAS or release store) and the driver when it unblocks;
// this acquire load pairs with them.
func RawTail(meta []byte, index int) int64 {
	return shm.LoadInt64Acquire(meta, TermTailCountersOffset+8*index)
}

// ActiveTermCount loads the active term count. Writer: the publisher that
// rotates (CAS or release store) or the driver; acquire here.
func ActiveTermCount(meta []byte) int32 { return shm.LoadInt32Acquire(meta, ActiveTermCountOffset) }

// RotateLog moves a concurrent log to the next term: the next partition's
// tail is CASed from the stale "term id − 3" placeholder to the new term,
// then the active term count is CASed forward. Any publisher (or the
// driver unblocking one) may win either CAS; losers see the new state on
// their next attempt. It reports whether this caller moved the count.
func RotateLog(meta []byte, termCount, termID int32) bool {
	nextTermID := termID + 1
	nextTermCount := termCount + 1
	nextIndex := int(nextTermCount) % PartitionCount
	expected := nextTermID - PartitionCount
	newRaw := PackTail(nextTermID, 0)
	off := TermTailCountersOffset + 8*nextIndex
	for {
		raw := shm.LoadInt64Acquire(meta, off)
		if TermID(raw) != expected {
			break
		}
		if shm.CompareAndSwapInt64(meta, off, raw, newRaw) {
			break
		}
	}
	return shm.CompareAndSwapInt32(meta, ActiveTermCountOffset, termCount, nextTermCount)
}
