// Package flood sends what an attacker on the network can send a media
// driver: Aeron-shaped datagrams whose fields disagree with each other, with
// the datagram and with the term. Towards a subscription's endpoint (the
// receiver's data socket) it sends SETUP frames with odd term lengths (0,
// 1000, negative, 1 GiB, 2 GiB − 1), MTUs, term ids and offsets, valid
// SETUPs that make images, then DATA, PAD and heartbeat frames for those
// images whose frame length, term offset, term id and flags are out of
// range, and frames of every other type, truncated and random bytes.
// Towards a publication's control address (the sender's control socket) it
// sends status messages, NAKs, ERR, RTTM and RSP_SETUP frames likewise.
//
// The end-to-end test of goblin-server under such a flood and the
// aeron-flood command (aeron/cmd/aeron-flood) both run it; Next is the
// generator alone, for fuzz seeds.
package flood

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/netip"
	"time"

	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/aeron/internal/wire"
	"github.com/goblin-kv/goblin/internal/shm"
)

// Options say where the flood goes and how fast.
type Options struct {
	// Endpoint is the subscription's data endpoint (SETUP, DATA, PAD...).
	Endpoint netip.AddrPort
	// Control is the publication's control address (SM, NAK, ERR...);
	// invalid: none is sent there.
	Control netip.AddrPort
	// StreamID is the stream most frames name (default 1001, goblin's
	// request stream); one in eight names another.
	StreamID int32
	// Rate is datagrams per second (default 30,000).
	Rate int
	// Seed seeds the generator (0: a fixed default), so a run repeats.
	Seed uint64
	// Kinds restricts the flood to these kinds (none: every kind).
	Kinds []Kind
}

// Kind is the sort of datagram Next made.
type Kind uint8

// The kinds, each a target and a shape.
const (
	KindSetupOdd      Kind = iota // SETUP with odd term length, MTU, ids, offset
	KindSetupValid                // a well-formed SETUP for one of the flood's sessions
	KindData                      // DATA whose fields disagree with the datagram or term
	KindPad                       // PAD likewise
	KindHeartbeat                 // a lone header with odd term id and offset
	KindOtherToData               // SM, NAK, RTTM, ERR, RSP_SETUP... at the data socket
	KindRandom                    // random bytes
	KindSM                        // status message at the control address
	KindNak                       // NAK at the control address
	KindErr                       // ERR with odd message lengths at the control address
	KindOtherToCtl                // RTTM, RSP_SETUP, DATA, SETUP... at the control address
	KindSetupResponse             // a well-formed SETUP of a new session asking for a response channel
	NumKinds
)

var kindNames = [NumKinds]string{"setup-odd", "setup-valid", "data", "pad", "heartbeat", "other-to-data",
	"random", "sm", "nak", "err", "other-to-control", "setup-response"}

func (k Kind) String() string {
	if k < NumKinds {
		return kindNames[k]
	}
	return "unknown"
}

// ParseKind returns the kind named s (as String spells it).
func ParseKind(s string) (Kind, bool) {
	for k, name := range kindNames {
		if name == s {
			return Kind(k), true
		}
	}
	return 0, false
}

// ToControl reports whether a datagram of this kind goes to the control
// address.
func (k Kind) ToControl() bool { return k >= KindSM && k <= KindOtherToCtl }

// Stats count what a run sent.
type Stats struct {
	Sent       uint64
	SendErrors uint64
	ByKind     [NumKinds]uint64
}

// Generator makes the datagrams; its sessions are a small pool, so DATA
// frames name sessions its valid SETUPs made images for.
type Generator struct {
	r        *rand.Rand
	streamID int32
	control  bool
	kinds    []Kind
	sessions [8]session
}

type session struct {
	id, initialTermID, activeTermID int32
	termLength                      int32
}

// NewGenerator returns a generator; control says whether it makes
// datagrams for a control address too.
func NewGenerator(seed uint64, streamID int32, control bool) *Generator {
	if seed == 0 {
		seed = 0x9e3779b97f4a7c15
	}
	if streamID == 0 {
		streamID = 1001
	}
	g := &Generator{r: rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d)), streamID: streamID, control: control}
	for i := range g.sessions {
		init := g.r.Int32()
		g.sessions[i] = session{id: g.r.Int32(), initialTermID: init, activeTermID: init + g.r.Int32N(4),
			termLength: logbuffer.MinTermLength}
	}
	return g
}

// Odd values a field takes besides random ones.
var (
	oddTermLengths = []int32{0, 1000, -65536, math.MinInt32, 1 << 30, math.MaxInt32, 1 << 16, 1 << 24,
		1<<16 + 32, 32, -1, 1 << 29}
	oddMTUs  = []int32{0, 1, 31, 32, 33, 1408, 8192, 65504, 65505, 1 << 30, -1, math.MinInt32, math.MaxInt32}
	oddInt32 = []int32{0, 1, -1, 31, 32, 33, 1 << 15, 1 << 16, 1<<16 - 32, 1<<16 - 1, 1<<16 + 32, 1 << 24, 1 << 30,
		math.MaxInt32, math.MinInt32, math.MaxInt32 - 31}
)

func (g *Generator) pick(odd []int32) int32 {
	if g.r.IntN(4) == 0 {
		return g.r.Int32() - g.r.Int32()
	}
	return odd[g.r.IntN(len(odd))]
}

func (g *Generator) stream() int32 {
	if g.r.IntN(8) == 0 {
		return g.r.Int32()
	}
	return g.streamID
}

// Next writes one datagram into b (at least 2048 bytes) and returns its
// kind and length.
func (g *Generator) Next(b []byte) (Kind, int) {
	b = b[:2048]
	clear(b[:256])
	var k Kind
	if len(g.kinds) > 0 {
		k = g.kinds[g.r.IntN(len(g.kinds))]
	} else {
		k = Kind(g.r.IntN(int(NumKinds)))
		for !g.control && k.ToControl() {
			k = Kind(g.r.IntN(int(NumKinds)))
		}
	}
	s := &g.sessions[g.r.IntN(len(g.sessions))]
	var l int
	switch k {
	case KindSetupOdd:
		f := wire.SetupFields{Flags: g.flags(), TermOffset: g.pick(oddInt32), SessionID: g.r.Int32(),
			StreamID: g.stream(), InitialTermID: g.pick(oddInt32), TermLength: g.pick(oddTermLengths),
			MTU: g.pick(oddMTUs), TTL: g.r.Int32N(256)}
		f.ActiveTermID = f.InitialTermID + g.pick(oddInt32)
		if g.r.IntN(2) == 0 {
			f.SessionID = s.id // an odd SETUP for a session that has an image
		}
		wire.PutSetup(b, &f)
		l = g.length(wire.SetupLength)
	case KindSetupValid:
		wire.PutSetup(b, &wire.SetupFields{SessionID: s.id, StreamID: g.streamID, InitialTermID: s.initialTermID,
			ActiveTermID: s.activeTermID, TermLength: s.termLength, MTU: 1408, TTL: 0})
		l = wire.SetupLength
	case KindSetupResponse:
		init := g.r.Int32()
		wire.PutSetup(b, &wire.SetupFields{Flags: wire.SetupFlagSendResponseSetup, SessionID: g.r.Int32(),
			StreamID: g.streamID, InitialTermID: init, ActiveTermID: init, TermLength: logbuffer.MinTermLength, MTU: 1408})
		return k, wire.SetupLength
	case KindData, KindPad:
		l = g.dataFrame(b, s, k == KindPad)
	case KindHeartbeat:
		wire.PutHeartbeat(b, g.flags(), s.id, g.streamID, s.activeTermID+g.pick([]int32{0, 1, -1, 2, 1 << 20}),
			g.pick(oddInt32))
		l = g.length(wire.DataHeaderLength)
	case KindOtherToData, KindOtherToCtl:
		l = g.other(b, s)
	case KindRandom:
		l = g.r.IntN(len(b) - 8)
		for i := 0; i < l; i += 8 {
			shm.PutInt64(b, i, int64(g.r.Uint64()))
		}
		if g.r.IntN(2) == 0 {
			b[wire.VersionOffset] = wire.CurrentVersion
		}
	case KindSM:
		l = g.sm(b, s)
	case KindNak:
		wire.PutNak(b, g.session(s), g.stream(), s.activeTermID+g.pick(oddInt32), g.pick(oddInt32), g.pick(oddInt32))
		l = g.length(wire.NakLength)
	case KindErr:
		l = g.err(b, s)
	}
	if g.r.IntN(16) == 0 {
		shm.PutInt32(b, wire.FrameLengthOffset, g.pick(oddInt32))
	}
	return k, l
}

// session is a pool session most of the time, else a random one.
func (g *Generator) session(s *session) int32 {
	if g.r.IntN(4) == 0 {
		return g.r.Int32()
	}
	return s.id
}

func (g *Generator) flags() byte {
	if g.r.IntN(2) == 0 {
		return 0
	}
	return byte(g.r.Uint32())
}

// length is the datagram length for a frame of n bytes: n most of the
// time, else shorter (down to nothing) or longer.
func (g *Generator) length(n int) int {
	switch g.r.IntN(8) {
	case 0:
		return g.r.IntN(n)
	case 1:
		return n + 1 + g.r.IntN(64)
	}
	return n
}

// dataFrame writes one or more DATA (or PAD) frames for s whose lengths,
// offsets, term ids and flags are odd, and returns the datagram length.
func (g *Generator) dataFrame(b []byte, s *session, pad bool) int {
	l := logbuffer.HeaderLength + g.r.IntN(1500)
	if g.r.IntN(8) == 0 {
		l = g.r.IntN(logbuffer.HeaderLength)
	}
	for i := logbuffer.HeaderLength; i+8 <= l; i += 8 {
		shm.PutInt64(b, i, int64(g.r.Uint64()))
	}
	typ := uint16(wire.TypeData)
	if pad {
		typ = wire.TypePad
	}
	for off := 0; off+logbuffer.HeaderLength <= len(b); {
		frameLength := int32(l - off)
		if g.r.IntN(2) == 0 {
			frameLength = g.pick(append(oddInt32, int32(l), int32(l+1), int32(l-off+32)))
		}
		termOffset := int32(g.r.IntN(int(s.termLength)/logbuffer.FrameAlignment)) * logbuffer.FrameAlignment
		if g.r.IntN(2) == 0 {
			termOffset = g.pick(oddInt32)
		}
		termID := s.activeTermID
		switch g.r.IntN(4) {
		case 0:
			termID += g.pick([]int32{1, -1, 2, 3, -2})
		case 1:
			termID = g.pick(oddInt32)
		}
		h := b[off:]
		shm.PutInt32(h, logbuffer.FrameLengthOffset, frameLength)
		h[logbuffer.FrameVersionOffset] = wire.CurrentVersion
		h[logbuffer.FrameFlagsOffset] = byte(g.r.Uint32())
		shm.PutUint16(h, logbuffer.FrameTypeOffset, typ)
		shm.PutInt32(h, logbuffer.FrameTermOffsetOffset, termOffset)
		shm.PutInt32(h, logbuffer.FrameSessionIDOffset, g.session(s))
		shm.PutInt32(h, logbuffer.FrameStreamIDOffset, g.stream())
		shm.PutInt32(h, logbuffer.FrameTermIDOffset, termID)
		// A second frame behind the first, a third of the time.
		next := shm.Align(int(max(frameLength, 0)), logbuffer.FrameAlignment)
		if g.r.IntN(3) != 0 || next == 0 || off+next+logbuffer.HeaderLength > l {
			break
		}
		off += next
	}
	return l
}

// other writes a frame of another type (or an unknown type, or another
// version), often truncated, and returns the datagram length.
func (g *Generator) other(b []byte, s *session) int {
	switch g.r.IntN(8) {
	case 0:
		return g.sm(b, s)
	case 1:
		wire.PutNak(b, g.session(s), g.stream(), s.activeTermID+g.pick(oddInt32), g.pick(oddInt32), g.pick(oddInt32))
		return g.length(wire.NakLength)
	case 2:
		wire.PutRTTM(b, g.flags(), g.session(s), g.stream(), g.r.Int64(), g.r.Int64(), g.r.Int64())
		return g.length(wire.RTTMLength)
	case 3:
		return g.err(b, s)
	case 4:
		wire.PutRspSetup(b, g.session(s), g.stream(), g.r.Int32())
		return g.length(wire.RspSetupLength)
	case 5:
		return g.dataFrame(b, s, false)
	case 6:
		wire.PutSetup(b, &wire.SetupFields{SessionID: g.session(s), StreamID: g.stream(), TermLength: g.pick(oddTermLengths),
			MTU: g.pick(oddMTUs), InitialTermID: g.r.Int32(), ActiveTermID: g.r.Int32()})
		return g.length(wire.SetupLength)
	}
	// An unknown type, or a known one of another version.
	l := g.length(64)
	for i := 8; i+8 <= l; i += 8 {
		shm.PutInt64(b, i, int64(g.r.Uint64()))
	}
	shm.PutInt32(b, wire.FrameLengthOffset, int32(l))
	b[wire.VersionOffset] = byte(g.r.IntN(2))
	b[wire.FlagsOffset] = g.flags()
	shm.PutUint16(b, wire.TypeOffset, uint16(g.r.IntN(20)))
	return l
}

// sm writes a status message with odd position, window, flags and length.
func (g *Generator) sm(b []byte, s *session) int {
	f := wire.SMFields{Flags: g.flags(), SessionID: g.session(s), StreamID: g.stream(),
		TermID: s.activeTermID + g.pick([]int32{0, 1, -1, 1 << 20, math.MinInt32}), TermOffset: g.pick(oddInt32),
		Window: g.pick(oddInt32), ReceiverID: g.r.Int64(), GroupTag: g.r.Int64(), HasGroupTag: g.r.IntN(2) == 0}
	return g.length(wire.PutSM(b, &f))
}

// err writes an ERR frame whose message length disagrees with the frame.
func (g *Generator) err(b []byte, s *session) int {
	msg := "flood"[:g.r.IntN(6)]
	n := len(wire.AppendErr(b[:0], g.session(s), g.stream(), g.r.Int64(), g.r.Int64(), g.r.IntN(2) == 0,
		g.r.Int32(), msg))
	if g.r.IntN(2) == 0 {
		shm.PutInt32(b, wire.ErrMessageLengthOffset, g.pick(append(oddInt32, int32(len(msg)+1), 1023, 1024)))
	}
	return g.length(n)
}

// Run sends datagrams at o.Rate until ctx ends and returns what it sent.
func Run(ctx context.Context, o Options) (Stats, error) {
	var st Stats
	if !o.Endpoint.IsValid() {
		return st, errors.New("flood: no endpoint")
	}
	if o.Rate <= 0 {
		o.Rate = 30000
	}
	conn, err := net.ListenUDP("udp", nil)
	if err != nil {
		return st, err
	}
	defer conn.Close()
	g := NewGenerator(o.Seed, o.StreamID, o.Control.IsValid())
	for _, k := range o.Kinds {
		if k.ToControl() && !o.Control.IsValid() {
			return st, fmt.Errorf("flood: kind %s goes to the control address, and there is none", k)
		}
	}
	g.kinds = o.Kinds
	buf := make([]byte, 2048)
	start := time.Now()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return st, nil
		case <-tick.C:
		}
		due := uint64(time.Since(start).Seconds() * float64(o.Rate))
		for st.Sent < due {
			k, n := g.Next(buf)
			to := o.Endpoint
			if k.ToControl() {
				to = o.Control
			}
			if _, err := conn.WriteToUDPAddrPort(buf[:n], to); err != nil {
				st.SendErrors++ // ECONNREFUSED after an ICMP port unreachable, ENOBUFS...
			}
			st.Sent++
			st.ByKind[k]++
		}
	}
}
