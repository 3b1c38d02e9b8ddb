// Package command is the Aeron driver protocol: the commands clients write
// into the to-driver ring buffer and the responses the media driver
// broadcasts back (Java: io.aeron.command). Each message is a flyweight
// over its bytes: a named []byte type whose methods read the fields at
// named offsets, with a Validate method for the driver and an Append
// function that encodes it, strconv.Append style. goblin's client and its
// media driver both use it, so no layout is written down twice.
//
// Every command starts with the Correlated header (client id, correlation
// id). Strings are an int32 length then that many ASCII bytes; a second
// variable-length field starts at the next multiple of 4.
package command

import (
	"errors"
	"fmt"

	"github.com/goblin-kv/goblin/internal/shm"
)

// Command type ids (client → driver), io.aeron.command.ControlProtocolEvents.
const (
	AddPublication            int32 = 0x01
	RemovePublication         int32 = 0x02
	AddExclusivePublication   int32 = 0x03
	AddSubscription           int32 = 0x04
	RemoveSubscription        int32 = 0x05
	ClientKeepalive           int32 = 0x06
	AddDestination            int32 = 0x07
	RemoveDestination         int32 = 0x08
	AddCounter                int32 = 0x09
	RemoveCounter             int32 = 0x0A
	ClientClose               int32 = 0x0B
	AddRcvDestination         int32 = 0x0C
	RemoveRcvDestination      int32 = 0x0D
	TerminateDriver           int32 = 0x0E
	AddStaticCounter          int32 = 0x0F
	RejectImage               int32 = 0x10
	RemoveDestinationByID     int32 = 0x11
	GetNextAvailableSessionID int32 = 0x12
)

// Response type ids (driver → clients).
const (
	OnError                     int32 = 0x0F01
	OnAvailableImage            int32 = 0x0F02
	OnPublicationReady          int32 = 0x0F03
	OnOperationSuccess          int32 = 0x0F04
	OnUnavailableImage          int32 = 0x0F05
	OnExclusivePublicationReady int32 = 0x0F06
	OnSubscriptionReady         int32 = 0x0F07
	OnCounterReady              int32 = 0x0F08
	OnUnavailableCounter        int32 = 0x0F09
	OnClientTimeout             int32 = 0x0F0A
	OnStaticCounter             int32 = 0x0F0B
	OnPublicationError          int32 = 0x0F0C
	OnNextAvailableSessionID    int32 = 0x0F0D
)

// ControlProtocolVersion is the control protocol's semantic version, 1.0.0
// (published by the driver as system counter 43).
const ControlProtocolVersion = 0x00010000

// MaxChannelLength is the longest channel URI (io.aeron.ChannelUri).
const MaxChannelLength = 4095

// ErrMalformed reports a command too short for its fields; the driver
// answers it with error code MALFORMED_COMMAND.
var ErrMalformed = errors.New("malformed command")

// MalformedError is a command too short for its fields, worded as the
// Java driver words it; errors.Is(err, ErrMalformed) holds.
type MalformedError struct {
	TypeID int32
	What   string // "", " for channel", " for key"...
	Length int
}

func (e *MalformedError) Error() string {
	return fmt.Sprintf("command=%d too short%s: length=%d", e.TypeID, e.What, e.Length)
}

// Is makes errors.Is(err, ErrMalformed) match.
func (e *MalformedError) Is(target error) bool { return target == ErrMalformed }

func tooShort(typeID int32, what string, length int) error {
	return &MalformedError{TypeID: typeID, What: what, Length: length}
}

// ascii reads the int32-length-prefixed string at off. ok is false when
// the length is negative or runs past the end.
func ascii(b []byte, off int) (s []byte, next int, ok bool) {
	if off+4 > len(b) {
		return nil, off, false
	}
	n := int(shm.GetInt32(b, off))
	if n < 0 || n > len(b)-off-4 {
		return nil, off, false
	}
	return b[off+4 : off+4+n : off+4+n], off + 4 + n, true
}

// AppendInt32 appends v little-endian.
func AppendInt32(b []byte, v int32) []byte {
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
}

// AppendInt64 appends v little-endian.
func AppendInt64(b []byte, v int64) []byte {
	return AppendInt32(AppendInt32(b, int32(v)), int32(v>>32))
}

// AppendString appends s with its int32 length.
func AppendString(b []byte, s string) []byte {
	return append(AppendInt32(b, int32(len(s))), s...)
}

// AppendBytes appends p with its int32 length.
func AppendBytes(b []byte, p []byte) []byte {
	return append(AppendInt32(b, int32(len(p))), p...)
}

func pad4(b []byte, start int) []byte {
	for (len(b)-start)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// String reads the int32-length-prefixed string at off, or "" when it
// does not fit (for clients reading responses).
func String(b []byte, off int) string {
	s, _, ok := ascii(b, off)
	if !ok {
		return ""
	}
	return string(s)
}
