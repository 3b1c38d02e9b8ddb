// Package bus is the wire format of Redis 7.0's cluster bus: the binary
// messages Redis Cluster nodes exchange on their bus port (client port +
// 10000 unless cluster-port says otherwise). It encodes and decodes them
// byte for byte as redis-server 7.0.15 does (src/cluster.h, the
// clusterSend* and clusterProcessPacket functions of src/cluster.c), so a
// goblin node and a redis-server node take each other for peers.
//
// The package holds codecs only: no sockets, no node table, no policy.
// Package cluster/member runs the protocol on top of it.
//
// # Layout
//
// Every message starts with a 2256-byte header (Header, at the offsets
// the off* constants name) followed by a body that depends on its type:
//
//	PING, PONG, MEET        Count gossip entries (104 bytes each), then
//	                        ping extensions (7.0.15: HOSTNAME only)
//	FAIL                    the failing node's 40-byte id
//	PUBLISH, PUBLISHSHARD   u32 channel length, u32 message length, both
//	FAILOVER_AUTH_REQUEST,  nothing
//	FAILOVER_AUTH_ACK,
//	MFSTART
//	UPDATE                  config epoch, node id, 2048-byte slot bitmap
//	MODULE                  module id, length, type, payload (decoded
//	                        for its length only: goblin loads no modules)
//
// Integers are big-endian except MODULE's module id, which Redis sends in
// host order. Node ids are 40 lower-case hex digits without a NUL; IP
// fields are 46 bytes, NUL-terminated.
//
// # Allocation
//
// Decoding fills caller-owned values (Header, Gossip, Ext) from the
// message bytes and allocates nothing; encoders append to a caller's
// buffer in the strconv.Append* shape, so a node that keeps one send
// buffer builds every PING without allocating. Header and Gossip hold no
// pointers.
package bus

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Sizes and limits of the wire format.
const (
	HeaderSize  = 2256 // the fixed header every message starts with
	MaxSize     = 4352 // sizeof(clusterMsg): the largest fixed-size message (UPDATE)
	NameLen     = 40   // a node id: 40 lower-case hex digits
	IPLen       = 46   // NET_IP_STR_LEN: an IPv6 text address and its NUL
	Slots       = 16384
	SlotBytes   = Slots / 8
	GossipSize  = 104
	ExtHeader   = 8 // a ping extension's header: u32 length, u16 type, u16 unused
	ProtoVer    = 1 // CLUSTER_PROTO_VER
	PortIncr    = 10000
	failSize    = HeaderSize + NameLen
	publishHead = HeaderSize + 8
	updateSize  = HeaderSize + 8 + NameLen + SlotBytes
	moduleHead  = HeaderSize + 8 + 4 + 1
)

// Header field offsets, fixed by cluster.h's static_asserts.
const (
	offSig          = 0
	offTotLen       = 4
	offVer          = 8
	offPort         = 10
	offType         = 12
	offCount        = 14
	offCurrentEpoch = 16
	offConfigEpoch  = 24
	offOffset       = 32
	offSender       = 40
	offSlots        = 80
	offSlaveOf      = offSlots + SlotBytes // 2128
	offIP           = offSlaveOf + NameLen // 2168
	offExtensions   = offIP + IPLen        // 2214
	offNotUsed      = offExtensions + 2    // 2216, 30 bytes
	offPPort        = offNotUsed + 30      // 2246
	offCPort        = offPPort + 2         // 2248
	offFlags        = offCPort + 2         // 2250
	offState        = offFlags + 2         // 2252
	offMFlags       = offState + 1         // 2253, 3 bytes
)

// Gossip entry offsets (clusterMsgDataGossip).
const (
	gName     = 0
	gPingSent = 40
	gPongRecv = 44
	gIP       = 48
	gPort     = 94
	gCPort    = 96
	gFlags    = 98
	gPPort    = 100
)

// Type is a message type (CLUSTERMSG_TYPE_*).
type Type uint16

// The message types of Redis 7.0.
const (
	Ping                Type = 0
	Pong                Type = 1
	Meet                Type = 2
	Fail                Type = 3
	Publish             Type = 4
	FailoverAuthRequest Type = 5
	FailoverAuthAck     Type = 6
	Update              Type = 7
	MFStart             Type = 8
	Module              Type = 9
	PublishShard        Type = 10
	// NumTypes is how many types 7.0 knows (CLUSTERMSG_TYPE_COUNT); the
	// statistics of CLUSTER INFO are kept per type below it.
	NumTypes = 11
)

var typeNames = [NumTypes]string{"ping", "pong", "meet", "fail", "publish", "auth-req", "auth-ack", "update", "mfstart", "module", "publishshard"}

// String is the type's name as CLUSTER INFO's statistics spell it
// (cluster_stats_messages_<name>_sent).
func (t Type) String() string {
	if t < NumTypes {
		return typeNames[t]
	}
	return fmt.Sprintf("type(%d)", uint16(t))
}

// Node flags (CLUSTER_NODE_*), in the header, in gossip entries and in
// nodes.conf.
const (
	FlagMaster     uint16 = 1
	FlagSlave      uint16 = 2
	FlagPFail      uint16 = 4
	FlagFail       uint16 = 8
	FlagMyself     uint16 = 16
	FlagHandshake  uint16 = 32
	FlagNoAddr     uint16 = 64
	FlagMeet       uint16 = 128
	FlagMigrateTo  uint16 = 256
	FlagNoFailover uint16 = 512
)

// mflags[0] bits (CLUSTERMSG_FLAG0_*).
const (
	MFlagPaused   byte = 1 << 0 // the sender is a master paused for a manual failover
	MFlagForceAck byte = 1 << 1 // give the FAILOVER_AUTH_ACK even though the master is up
	MFlagExtData  byte = 1 << 2 // the message carries ping extensions
)

// Cluster states in the header.
const (
	StateOK   byte = 0
	StateFail byte = 1
)

// Ping extension types. 7.0.15 defines HOSTNAME only; the others are
// 7.2's, named so that a goblin node can tell what it skips.
const (
	ExtHostname      uint16 = 0
	ExtHumanNodename uint16 = 1
	ExtForgottenNode uint16 = 2
	ExtShardID       uint16 = 3
)

// Errors of framing and validation.
var (
	// ErrFraming means the stream is not a cluster bus: a bad signature or
	// a length below the header's. Redis closes the link.
	ErrFraming = errors.New("bus: not a cluster bus message")
	// ErrLength means a message whose length does not match its type and
	// counts. Redis drops it and keeps the link.
	ErrLength = errors.New("bus: message length does not match its type")
	// ErrVersion means a protocol version other than 1; dropped silently.
	ErrVersion = errors.New("bus: unknown protocol version")
)

// Name is a node id as the wire carries it.
type Name [NameLen]byte

// Zero reports whether n is 40 zero bytes (no master, in slaveof).
func (n *Name) Zero() bool { return *n == Name{} }

// Slotmap is a slot bitmap: slot s is bit s&7 of byte s/8.
type Slotmap [SlotBytes]byte

// Has reports whether slot s is set.
func (m *Slotmap) Has(s int) bool { return m[s>>3]&(1<<(s&7)) != 0 }

// Set sets slot s.
func (m *Slotmap) Set(s int) { m[s>>3] |= 1 << (s & 7) }

// Clear clears slot s.
func (m *Slotmap) Clear(s int) { m[s>>3] &^= 1 << (s & 7) }

// Count returns how many slots are set.
func (m *Slotmap) Count() int {
	n := 0
	for i := 0; i < SlotBytes; i += 8 {
		n += popcount(binary.LittleEndian.Uint64(m[i:]))
	}
	return n
}

func popcount(x uint64) int {
	n := 0
	for x != 0 {
		x &= x - 1
		n++
	}
	return n
}

// IP is an address field: text, NUL-terminated within 46 bytes.
type IP [IPLen]byte

// String returns the text up to the first NUL.
func (ip *IP) String() string { return string(ip.Bytes()) }

// Bytes returns the text up to the first NUL (a slice of ip).
func (ip *IP) Bytes() []byte {
	for i, c := range ip {
		if c == 0 {
			return ip[:i]
		}
	}
	return ip[:IPLen-1] // Redis always NUL-terminates the last byte
}

// SetString stores s, cut to 45 bytes, NUL-padded.
func (ip *IP) SetString(s string) {
	*ip = IP{}
	copy(ip[:IPLen-1], s)
}

// Header is a message's fixed header, decoded. It holds no pointers.
type Header struct {
	TotLen       uint32
	Ver          uint16
	Port         uint16 // announced client port
	Type         Type
	Count        uint16 // gossip entries (PING, PONG, MEET)
	CurrentEpoch uint64
	ConfigEpoch  uint64 // a master's own; a replica's master's
	Offset       uint64 // replication offset
	Sender       Name
	Slots        Slotmap // a replica sends its master's
	SlaveOf      Name    // zero for a master
	IP           IP      // announced IP; empty: the receiver uses the peer address
	Extensions   uint16
	PPort        uint16 // plaintext port when Port is TLS
	CPort        uint16 // bus port
	Flags        uint16 // the sender's own flags, FlagMyself included
	State        byte
	MFlags       [3]byte
}

// Decode reads the header at the start of b (at least HeaderSize bytes)
// into h. It checks nothing but the size: Check validates a whole message.
func (h *Header) Decode(b []byte) error {
	if len(b) < HeaderSize {
		return fmt.Errorf("%w: %d bytes, a header has %d", ErrFraming, len(b), HeaderSize)
	}
	be := binary.BigEndian
	h.TotLen = be.Uint32(b[offTotLen:])
	h.Ver = be.Uint16(b[offVer:])
	h.Port = be.Uint16(b[offPort:])
	h.Type = Type(be.Uint16(b[offType:]))
	h.Count = be.Uint16(b[offCount:])
	h.CurrentEpoch = be.Uint64(b[offCurrentEpoch:])
	h.ConfigEpoch = be.Uint64(b[offConfigEpoch:])
	h.Offset = be.Uint64(b[offOffset:])
	copy(h.Sender[:], b[offSender:])
	copy(h.Slots[:], b[offSlots:])
	copy(h.SlaveOf[:], b[offSlaveOf:])
	copy(h.IP[:], b[offIP:])
	h.Extensions = be.Uint16(b[offExtensions:])
	h.PPort = be.Uint16(b[offPPort:])
	h.CPort = be.Uint16(b[offCPort:])
	h.Flags = be.Uint16(b[offFlags:])
	h.State = b[offState]
	copy(h.MFlags[:], b[offMFlags:offMFlags+3])
	return nil
}

// Append appends the header's 2256 bytes to dst: signature, then every
// field at its offset, totlen as h has it (Finish sets it once the body
// is appended) and the 30 unused bytes zero.
func (h *Header) Append(dst []byte) []byte {
	n := len(dst)
	dst = append(dst, make([]byte, HeaderSize)...) // no allocation when dst has room
	b := dst[n:]
	clear(b)
	be := binary.BigEndian
	copy(b[offSig:], "RCmb")
	be.PutUint32(b[offTotLen:], h.TotLen)
	be.PutUint16(b[offVer:], h.Ver)
	be.PutUint16(b[offPort:], h.Port)
	be.PutUint16(b[offType:], uint16(h.Type))
	be.PutUint16(b[offCount:], h.Count)
	be.PutUint64(b[offCurrentEpoch:], h.CurrentEpoch)
	be.PutUint64(b[offConfigEpoch:], h.ConfigEpoch)
	be.PutUint64(b[offOffset:], h.Offset)
	copy(b[offSender:], h.Sender[:])
	copy(b[offSlots:], h.Slots[:])
	copy(b[offSlaveOf:], h.SlaveOf[:])
	copy(b[offIP:], h.IP[:])
	be.PutUint16(b[offExtensions:], h.Extensions)
	be.PutUint16(b[offPPort:], h.PPort)
	be.PutUint16(b[offCPort:], h.CPort)
	be.PutUint16(b[offFlags:], h.Flags)
	b[offState] = h.State
	copy(b[offMFlags:], h.MFlags[:])
	return dst
}

// Finish sets the totlen, count and extensions fields of the message msg
// (one header and its body, as appended) and returns msg.
func Finish(msg []byte, count, extensions int) []byte {
	be := binary.BigEndian
	be.PutUint32(msg[offTotLen:], uint32(len(msg)))
	be.PutUint16(msg[offCount:], uint16(count))
	be.PutUint16(msg[offExtensions:], uint16(extensions))
	if extensions > 0 {
		msg[offMFlags] |= MFlagExtData
	}
	return msg
}

// PeekType returns the type of the message in b (at least HeaderSize
// bytes).
func PeekType(b []byte) Type { return Type(binary.BigEndian.Uint16(b[offType:])) }

// Gossip is one entry of a PING, PONG or MEET's gossip section: what the
// sender knows of another node. It holds no pointers.
type Gossip struct {
	Name         Name
	PingSent     uint32 // seconds
	PongReceived uint32 // seconds
	IP           IP
	Port         uint16
	CPort        uint16
	Flags        uint16
	PPort        uint16
}

// Decode reads the entry at the start of b (at least GossipSize bytes).
func (g *Gossip) Decode(b []byte) {
	be := binary.BigEndian
	copy(g.Name[:], b[gName:])
	g.PingSent = be.Uint32(b[gPingSent:])
	g.PongReceived = be.Uint32(b[gPongRecv:])
	copy(g.IP[:], b[gIP:])
	g.Port = be.Uint16(b[gPort:])
	g.CPort = be.Uint16(b[gCPort:])
	g.Flags = be.Uint16(b[gFlags:])
	g.PPort = be.Uint16(b[gPPort:])
}

// Append appends the entry's 104 bytes to dst.
func (g *Gossip) Append(dst []byte) []byte {
	n := len(dst)
	dst = append(dst, make([]byte, GossipSize)...)
	b := dst[n:]
	clear(b)
	be := binary.BigEndian
	copy(b[gName:], g.Name[:])
	be.PutUint32(b[gPingSent:], g.PingSent)
	be.PutUint32(b[gPongRecv:], g.PongReceived)
	copy(b[gIP:], g.IP[:])
	be.PutUint16(b[gPort:], g.Port)
	be.PutUint16(b[gCPort:], g.CPort)
	be.PutUint16(b[gFlags:], g.Flags)
	be.PutUint16(b[gPPort:], g.PPort)
	return dst
}

// GossipAt decodes the i-th gossip entry of a checked PING, PONG or MEET.
func GossipAt(msg []byte, i int, g *Gossip) {
	g.Decode(msg[HeaderSize+i*GossipSize:])
}

// AppendHostnameExt appends 7.0's HOSTNAME ping extension: the name and a
// NUL, zero-padded to a multiple of 8, after the 8-byte extension header.
func AppendHostnameExt(dst []byte, hostname string) []byte {
	size := ExtHeader + (len(hostname)+1+7)&^7
	n := len(dst)
	dst = append(dst, make([]byte, size)...)
	b := dst[n:]
	clear(b)
	binary.BigEndian.PutUint32(b[0:], uint32(size))
	binary.BigEndian.PutUint16(b[4:], ExtHostname)
	copy(b[ExtHeader:], hostname)
	return dst
}

// Ext is one ping extension of a checked message.
type Ext struct {
	Type uint16
	Data []byte // the payload, padding included (a slice of the message)
}

// Exts walks the ping extensions of a checked PING, PONG or MEET.
type Exts struct {
	rest []byte
	left int
}

// Extensions returns a walker over msg's extensions (none unless the
// EXT_DATA flag is set, as Redis reads them).
func Extensions(msg []byte) Exts {
	if len(msg) < HeaderSize || msg[offMFlags]&MFlagExtData == 0 {
		return Exts{}
	}
	be := binary.BigEndian
	count := int(be.Uint16(msg[offCount:]))
	start := HeaderSize + count*GossipSize
	if start > len(msg) {
		return Exts{}
	}
	return Exts{rest: msg[start:], left: int(be.Uint16(msg[offExtensions:]))}
}

// Next returns the next extension, false at the end.
func (x *Exts) Next(e *Ext) bool {
	if x.left == 0 || len(x.rest) < ExtHeader {
		return false
	}
	size := int(binary.BigEndian.Uint32(x.rest))
	if size < ExtHeader || size > len(x.rest) {
		return false
	}
	e.Type = binary.BigEndian.Uint16(x.rest[4:])
	e.Data = x.rest[ExtHeader:size]
	x.rest = x.rest[size:]
	x.left--
	return true
}

// Hostname returns a HOSTNAME extension's name: the payload up to its NUL.
func (e *Ext) Hostname() []byte {
	for i, c := range e.Data {
		if c == 0 {
			return e.Data[:i]
		}
	}
	return e.Data
}

// AppendFail appends a FAIL body: the failing node's id.
func AppendFail(dst []byte, failing *Name) []byte { return append(dst, failing[:]...) }

// FailName returns a checked FAIL message's node id.
func FailName(msg []byte) (n Name) {
	copy(n[:], msg[HeaderSize:])
	return n
}

// AppendPublish appends a PUBLISH or PUBLISHSHARD body.
func AppendPublish(dst, channel, message []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(channel)))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(message)))
	dst = append(dst, channel...)
	return append(dst, message...)
}

// PublishData returns a checked PUBLISH or PUBLISHSHARD message's channel
// and message (slices of msg).
func PublishData(msg []byte) (channel, message []byte) {
	be := binary.BigEndian
	cl := int(be.Uint32(msg[HeaderSize:]))
	ml := int(be.Uint32(msg[HeaderSize+4:]))
	b := msg[publishHead:]
	return b[:cl], b[cl : cl+ml]
}

// AppendUpdate appends an UPDATE body: a node's config epoch, id and
// slots.
func AppendUpdate(dst []byte, configEpoch uint64, node *Name, slots *Slotmap) []byte {
	dst = binary.BigEndian.AppendUint64(dst, configEpoch)
	dst = append(dst, node[:]...)
	return append(dst, slots[:]...)
}

// UpdateData decodes a checked UPDATE message's body.
func UpdateData(msg []byte, node *Name, slots *Slotmap) (configEpoch uint64) {
	b := msg[HeaderSize:]
	configEpoch = binary.BigEndian.Uint64(b)
	copy(node[:], b[8:])
	copy(slots[:], b[8+NameLen:])
	return configEpoch
}

// Check validates a whole message (as a Reader returns it) the way 7.0's
// clusterProcessPacket does before acting on it: ErrVersion for a version
// other than 1, ErrLength when totlen is not what the type and its counts
// need. A message of an unknown type passes: Redis ignores those.
func Check(msg []byte) error {
	if len(msg) < HeaderSize || string(msg[:4]) != "RCmb" {
		return ErrFraming
	}
	be := binary.BigEndian
	totlen := int(be.Uint32(msg[offTotLen:]))
	if totlen != len(msg) {
		return fmt.Errorf("%w: totlen %d, %d bytes", ErrLength, totlen, len(msg))
	}
	if v := be.Uint16(msg[offVer:]); v != ProtoVer {
		return fmt.Errorf("%w %d", ErrVersion, v)
	}
	want := 0
	switch t := PeekType(msg); t {
	case Ping, Pong, Meet:
		count := int(be.Uint16(msg[offCount:]))
		want = HeaderSize + count*GossipSize
		if msg[offMFlags]&MFlagExtData != 0 && want <= totlen {
			// Redis walks the extensions and adds their lengths; it holds
			// each in a 16-bit local, so a length of 64 KiB or more wraps.
			rest := msg[want:]
			for range int(be.Uint16(msg[offExtensions:])) {
				if len(rest) < ExtHeader {
					return fmt.Errorf("%w: %s: extension header past the end", ErrLength, t)
				}
				size := int(uint16(be.Uint32(rest)))
				if size%8 != 0 || size < ExtHeader || size > len(rest) {
					return fmt.Errorf("%w: %s: extension length %d", ErrLength, t, size)
				}
				want += size
				rest = rest[size:]
			}
		}
	case Fail:
		want = failSize
	case Publish, PublishShard:
		if totlen < publishHead {
			return fmt.Errorf("%w: %s: %d bytes", ErrLength, t, totlen)
		}
		want = publishHead + int(be.Uint32(msg[HeaderSize:])) + int(be.Uint32(msg[HeaderSize+4:]))
	case FailoverAuthRequest, FailoverAuthAck, MFStart:
		want = HeaderSize
	case Update:
		want = updateSize
	case Module:
		if totlen < moduleHead {
			return fmt.Errorf("%w: %s: %d bytes", ErrLength, t, totlen)
		}
		want = moduleHead + int(be.Uint32(msg[HeaderSize+8:]))
	default:
		return nil
	}
	if want != totlen {
		return fmt.Errorf("%w: %s: totlen %d, want %d", ErrLength, PeekType(msg), totlen, want)
	}
	return nil
}
