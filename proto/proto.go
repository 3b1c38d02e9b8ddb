// Package proto names the wire protocols goblin speaks. The codecs live in
// its subpackages: proto/resp (the Redis serialization protocol) and
// proto/sbe (Simple Binary Encoding, generated from schemas/goblin.xml).
package proto

import (
	"fmt"
	"strings"
)

// Protocol is a wire protocol a transport carries.
type Protocol uint8

const (
	// RESP is the Redis serialization protocol (RESP2), so redis-cli,
	// redis-benchmark and every Redis client library can talk to goblin.
	RESP Protocol = iota
	// SBE is Simple Binary Encoding. On stream transports (Unix and TCP
	// sockets) every message is preceded by a Simple Open Framing Header;
	// message transports (ring, Aeron) carry one SBE message per message.
	SBE
)

// String returns the protocol's name as targets spell it: "resp" or "sbe".
func (p Protocol) String() string {
	switch p {
	case RESP:
		return "resp"
	case SBE:
		return "sbe"
	}
	return fmt.Sprintf("proto(%d)", uint8(p))
}

// Parse turns "resp" or "sbe" (any case) into a Protocol.
func Parse(s string) (Protocol, error) {
	switch {
	case strings.EqualFold(s, "resp"):
		return RESP, nil
	case strings.EqualFold(s, "sbe"):
		return SBE, nil
	}
	return 0, fmt.Errorf("proto: unknown protocol %q (want resp or sbe)", s)
}

// The SOFH encoding types of SBE 1.0, little-endian (goblin's) and
// big-endian, as bytes 4 and 5 of a frame header carry them.
const (
	sofhSBE10LE = 0xEB50
	sofhSBE10BE = 0x5BE0
)

// Sniff tells from the first bytes a client sent on a byte stream which
// protocol it speaks: SBE when they are a SOFH frame header (bytes 4–5 are
// the encoding type of SBE 1.0: 0xEB50, or 0x5BE0 for big-endian SBE, which
// the SBE framing then refuses with a clear error), RESP otherwise (a multibulk starts with '*',
// an inline command with text). ok is false while it cannot tell yet:
// fewer than 6 bytes that neither start with '*' nor hold a line end.
//
// A RESP client never sends 0xEB or 0x5B 0xE0 at byte 4 of its first
// command (no command name holds them), and a SOFH frame never starts with '*' (that
// length, over 700 MB, is above any frame limit), so the answer is
// certain for every client of either protocol.
func Sniff(first []byte) (p Protocol, ok bool) {
	if len(first) > 0 && first[0] == '*' {
		return RESP, true
	}
	if len(first) < 6 {
		for _, c := range first {
			if c == '\n' {
				return RESP, true
			}
		}
		return RESP, false
	}
	if enc := uint16(first[4])<<8 | uint16(first[5]); enc == sofhSBE10LE || enc == sofhSBE10BE {
		return SBE, true
	}
	return RESP, true
}
