package sbe

import (
	"encoding/binary"
	"errors"

	"github.com/goblin-kv/goblin/command"
)

// SOFH, the FIX Simple Open Framing Header, frames SBE messages on byte
// streams: a 4-byte message length that includes the header, then a 2-byte
// encoding type, both unsigned big-endian ("network byte order").
//
// EncodingTypeSBE10LE is the value the SOFH standard registers for "FIX SBE
// Version 1.0 Little Endian". Source: FIX Trading Community, Simple Open
// Framing Header v1.0 (github.com/FIXTradingCommunity/
// fix-simple-open-framing-header, v1-0-DRAFT/sofh.md, table "Simple Open
// Framing Header – Encoding_Types": 0x5BE0 big-endian, 0xEB50
// little-endian). goblin's schema is little-endian.
const (
	SOFHLen             = 6
	EncodingTypeSBE10LE = 0xEB50
)

// DefaultMaxFrame is the largest frame ReadFrame accepts when given 0.
const DefaultMaxFrame = 512<<20 + 64<<10

// Framing errors; each wraps ErrFraming.
var (
	// ErrFraming is wrapped by every SOFH error: the stream is out of sync
	// and the connection must close.
	ErrFraming = errors.New("sbe: bad frame")
	// ErrEncodingType: the header's encoding type is not 0xEB50.
	ErrEncodingType = wrapFraming("encoding type is not SBE 1.0 little-endian (0xEB50)")
	// ErrFrameLength: the length is smaller than the header or larger
	// than the limit.
	ErrFrameLength = wrapFraming("message length out of range")
)

type framingError struct{ text string }

func (e *framingError) Error() string        { return "sbe: bad frame: " + e.text }
func (e *framingError) Is(target error) bool { return target == ErrFraming }

func wrapFraming(text string) error { return &framingError{text} }

// BeginFrame reserves a SOFH at the end of dst; append the message after it
// and call EndFrame with the returned start.
func BeginFrame(dst []byte) ([]byte, int) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, byte(EncodingTypeSBE10LE>>8), byte(EncodingTypeSBE10LE&0xff))
	return dst, start
}

// EndFrame writes the length of the frame that starts at start.
func EndFrame(dst []byte, start int) []byte {
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start))
	return dst
}

// AppendFramed appends r as a SOFH-framed message, the form stream
// transports carry (the same as c.AppendFramedRequest).
func AppendFramed(dst []byte, c *Codec, r *command.Request) []byte {
	return c.AppendFramedRequest(dst, r)
}

// putSOFH writes a SOFH for a frame of size bytes at the start of b.
func putSOFH(b []byte, size int) {
	binary.BigEndian.PutUint32(b, uint32(size))
	binary.BigEndian.PutUint16(b[4:], EncodingTypeSBE10LE)
}

// ReadFrame splits the frame at the front of buf: msg is the SBE message
// (header excluded) and n the bytes the frame used. n == 0 with a nil error
// means buf holds only part of a frame. maxFrame bounds the length field
// (0 means DefaultMaxFrame); a bad header returns an error wrapping
// ErrFraming.
func ReadFrame(buf []byte, maxFrame int) (msg []byte, n int, err error) {
	if len(buf) < SOFHLen {
		return nil, 0, nil
	}
	size, err := frameSize(buf, maxFrame)
	if err != nil || len(buf) < size {
		return nil, 0, err
	}
	return buf[SOFHLen:size:size], size, nil
}

// frameSize checks the SOFH at the front of buf (at least SOFHLen bytes)
// and returns the frame's length, header included.
func frameSize(buf []byte, maxFrame int) (int, error) {
	if maxFrame <= 0 {
		maxFrame = DefaultMaxFrame
	}
	size := binary.BigEndian.Uint32(buf)
	if binary.BigEndian.Uint16(buf[4:]) != EncodingTypeSBE10LE {
		return 0, ErrEncodingType
	}
	if size < SOFHLen || uint64(size) > uint64(maxFrame) {
		return 0, ErrFrameLength
	}
	return int(size), nil
}

// FrameReader splits the SOFH frames of one connection's byte stream, as
// ReadFrame does, but remembers the length of a frame whose header it has
// read: while the rest of a large frame trickles in, each call is one
// comparison, and the header is examined once per frame.
//
// After a call that returns n == 0 and no error, the next call must be
// given the same bytes from the same first byte, followed by any that
// arrived since. Reset forgets a partial frame. The zero value is ready to
// use; a FrameReader is not safe for concurrent use.
type FrameReader struct {
	size     int // length of the frame whose header was read; 0 = none
	examined uint64
}

// ReadFrame returns the frame at the front of buf, as the package-level
// ReadFrame does.
func (f *FrameReader) ReadFrame(buf []byte, maxFrame int) (msg []byte, n int, err error) {
	if f.size == 0 {
		if len(buf) < SOFHLen {
			return nil, 0, nil
		}
		f.examined += SOFHLen
		size, err := frameSize(buf, maxFrame)
		if err != nil {
			return nil, 0, err
		}
		f.size = size
	}
	size := f.size
	if len(buf) < size {
		return nil, 0, nil
	}
	f.size = 0
	return buf[SOFHLen:size:size], size, nil
}

// Whole returns the frame at the front of buf, and its length with the
// SOFH, in the usual case: no partial frame pending and a whole frame with a
// valid header (of at most maxFrame bytes, maxFrame > 0) in buf. It is
// small enough to be inlined into a serving loop. n == 0 means anything
// else: call ReadFrame, which answers every case.
func (f *FrameReader) Whole(buf []byte, maxFrame int) (msg []byte, n int) {
	if f.size != 0 || len(buf) < SOFHLen {
		return nil, 0
	}
	size := int(binary.BigEndian.Uint32(buf))
	if size < SOFHLen || size > maxFrame || size > len(buf) || binary.BigEndian.Uint16(buf[4:]) != EncodingTypeSBE10LE {
		return nil, 0
	}
	f.examined += SOFHLen
	return buf[SOFHLen:size:size], size
}

// Reset forgets a partial frame.
func (f *FrameReader) Reset() { f.size = 0 }

// Examined returns the header bytes the reader has examined since it was
// made (payloads are sliced, not examined); tests use it to prove the work
// per byte received is constant.
func (f *FrameReader) Examined() uint64 { return f.examined }
