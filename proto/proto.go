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
