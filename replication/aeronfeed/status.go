package aeronfeed

import "encoding/binary"

// A replica's status message, on the status channel, little-endian:
//
//	0   magic   "GBS1"
//	4   port    uint16: the replica's listening port (0: none)
//	6   -       2 bytes zero
//	8   offset  int64: the stream offset it has applied
//	16  name    the rest (at most MaxName bytes): the replica's name
const (
	statusPortOff   = 4
	statusOffsetOff = 8
	statusNameOff   = 16
	// MaxName is the longest replica name a status carries.
	MaxName = 64
)

var statusMagic = [4]byte{'G', 'B', 'S', '1'}

// Status is one replica's report of its position.
type Status struct {
	Port   int
	Offset int64
	Name   []byte // aliases the message
}

// AppendStatus appends a status message.
func AppendStatus(dst []byte, port int, offset int64, name string) []byte {
	dst = append(dst, statusMagic[:]...)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(port))
	dst = append(dst, 0, 0)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(offset))
	if len(name) > MaxName {
		name = name[:MaxName]
	}
	return append(dst, name...)
}

// ParseStatus decodes a status message (no copy).
func ParseStatus(msg []byte, s *Status) error {
	if len(msg) < statusNameOff || len(msg) > statusNameOff+MaxName || [4]byte(msg[:4]) != statusMagic {
		return ErrFrame
	}
	s.Port = int(binary.LittleEndian.Uint16(msg[statusPortOff:]))
	s.Offset = int64(binary.LittleEndian.Uint64(msg[statusOffsetOff:]))
	s.Name = msg[statusNameOff:]
	if s.Offset < 0 {
		return ErrFrame
	}
	return nil
}
