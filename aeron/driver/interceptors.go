package driver

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"

	"github.com/goblin-kv/goblin/internal/shm"
)

// The C media driver's incoming UDP channel interceptors for tests
// (aeron_udp_channel_transport_loss.c, _fixed_loss.c, _multi_gap_loss.c):
// AERON_UDP_CHANNEL_INCOMING_INTERCEPTORS names them (loss, fixed-loss,
// multi-gap-loss, comma-separated), and
// AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_{LOSS,FIXED_LOSS,MULTI_GAP_LOSS}_ARGS
// give their arguments as channel parameters (key=value|key=value). Each
// sees every datagram the sender's control sockets and the receiver's
// data sockets read, before anything else does, and may drop it, so
// tests can make loss and watch the driver recover (NAKs, retransmits).

// incomingInterceptor decides whether a datagram read is dropped.
type incomingInterceptor interface {
	drop(p []byte) bool
}

// dropIncoming: whether an interceptor drops datagram p.
func (x *driverContext) dropIncoming(p []byte) bool {
	for _, i := range x.incoming {
		if i.drop(p) {
			return true
		}
	}
	return false
}

// newIncomingInterceptors builds the interceptors names lists, with their
// arguments from o.
func newIncomingInterceptors(o *Options) ([]incomingInterceptor, error) {
	if o.IncomingInterceptors == "" {
		return nil, nil
	}
	var out []incomingInterceptor
	for _, name := range strings.Split(o.IncomingInterceptors, ",") {
		var (
			i   incomingInterceptor
			err error
		)
		switch name {
		case "loss":
			i, err = newLossInterceptor(o.LossArgs)
		case "fixed-loss":
			i, err = newFixedLossInterceptor(o.FixedLossArgs)
		case "multi-gap-loss":
			i, err = newMultiGapLossInterceptor(o.MultiGapLossArgs)
		default:
			return nil, fmt.Errorf("AERON_UDP_CHANNEL_INCOMING_INTERCEPTORS: unknown interceptor %q (loss, fixed-loss, multi-gap-loss)", name)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, i)
	}
	return out, nil
}

// parseInterceptorArgs splits args as aeron_uri_parse_params does
// (key=value pairs separated by |; an empty key or value is an error) and
// hands each pair to set; unknown keys are set's to ignore.
func parseInterceptorArgs(variable, args string, set func(key, value string) error) error {
	if args == "" {
		return nil
	}
	for _, kv := range strings.Split(args, "|") {
		k, v, ok := strings.Cut(kv, "=")
		switch {
		case !ok:
			return fmt.Errorf("%s=%s: invalid end of key in %q", variable, args, kv)
		case k == "":
			return fmt.Errorf("%s=%s: empty key not allowed", variable, args)
		case v == "":
			return fmt.Errorf("%s=%s: empty value not allowed", variable, args)
		}
		if err := set(k, v); err != nil {
			return fmt.Errorf("%s=%s: %w", variable, args, err)
		}
	}
	return nil
}

// cInt parses the leading integer of v in base as strtol/strtoul do
// (leading blanks, a sign, 0x for base 16; what follows the digits is
// ignored), failing when there are no digits.
func cInt(v string, base int) (int64, error) {
	s := strings.TrimLeft(v, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	if base == 16 && len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s = s[2:]
	}
	n := 0
	for n < len(s) && digitValue(s[n]) < base {
		n++
	}
	if n == 0 {
		return 0, fmt.Errorf("no number in %q", v)
	}
	u, err := strconv.ParseUint(s[:n], base, 64)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", v, err)
	}
	if neg {
		return -int64(u), nil
	}
	return int64(u), nil
}

func digitValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		return int(c-'A') + 10
	}
	return 99
}

// cFloat parses the leading decimal number of v as strtod does.
func cFloat(v string) (float64, error) {
	s := strings.TrimLeft(v, " \t\n\v\f\r")
	best := -1
	for n := 1; n <= len(s); n++ {
		if _, err := strconv.ParseFloat(s[:n], 64); err == nil {
			best = n
		}
	}
	if best < 0 {
		return 0, fmt.Errorf("no number in %q", v)
	}
	f, _ := strconv.ParseFloat(s[:best], 64)
	return f, nil
}

// Data frame header fields the interceptors read.
const (
	icTypeOffset       = 6
	icTermOffsetOffset = 8
	icSessionIDOffset  = 12
	icStreamIDOffset   = 16
	icTermIDOffset     = 20
	icDataHeaderLength = 32
	icTypeData         = 1
)

// lossInterceptor drops datagrams whose frame type is in recv-msg-mask
// (bit 1<<type, hex) with probability rate, drawing from erand48 seeded
// with seed as the C driver does, so a seed drops the same datagrams.
type lossInterceptor struct {
	rate float64
	mask uint64
	x    uint64 // erand48 state, 48 bits
}

func newLossInterceptor(args string) (*lossInterceptor, error) {
	var seed uint64
	l := &lossInterceptor{}
	err := parseInterceptorArgs("AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_LOSS_ARGS", args, func(k, v string) error {
		var err error
		var n int64
		switch k {
		case "rate":
			l.rate, err = cFloat(v)
		case "seed":
			n, err = cInt(v, 10)
			seed = uint64(n)
		case "recv-msg-mask":
			n, err = cInt(v, 16)
			l.mask = uint64(n)
		}
		return err
	})
	// xsubi[2] = seed & 0xFFFF (the high 16 bits of the state),
	// xsubi[1] = seed>>16, xsubi[0] = seed>>32 (the low 16 bits).
	l.x = (seed&0xFFFF)<<32 | (seed>>16&0xFFFF)<<16 | seed>>32&0xFFFF
	return l, err
}

// erand48 is glibc's: x = (0x5DEECE66D x + 0xB) mod 2^48, returned as x/2^48.
func (l *lossInterceptor) erand48() float64 {
	l.x = (0x5DEECE66D*l.x + 0xB) & (1<<48 - 1)
	return float64(l.x) / (1 << 48)
}

func (l *lossInterceptor) drop(p []byte) bool {
	if len(p) < icTypeOffset+2 {
		return false
	}
	bit := uint64(uint32(1) << (uint32(shm.GetUint16(p, icTypeOffset)) & 31))
	return 0.0 < l.rate && bit&l.mask != 0 && l.erand48() <= l.rate
}

// streamSessionKey is aeron_map_compound_key(stream id, session id).
func streamSessionKey(p []byte) int64 {
	return int64(shm.GetInt32(p, icStreamIDOffset))<<32 | int64(uint32(shm.GetInt32(p, icSessionIDOffset)))
}

// fixedLossInterceptor drops, once, the DATA datagrams of term term-id of
// each stream and session from the first one seen until the one that
// reaches term-offset + length; the retransmits get through.
type fixedLossInterceptor struct {
	termID, termOffset int32
	length             uint64
	tracking           map[int64]int64
}

func newFixedLossInterceptor(args string) (*fixedLossInterceptor, error) {
	f := &fixedLossInterceptor{tracking: map[int64]int64{}}
	err := parseInterceptorArgs("AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_FIXED_LOSS_ARGS", args, func(k, v string) error {
		var err error
		var n int64
		switch k {
		case "term-id":
			n, err = cInt(v, 10)
			f.termID = int32(n)
		case "term-offset":
			n, err = cInt(v, 10)
			f.termOffset = int32(n)
		case "length":
			n, err = cInt(v, 10)
			f.length = uint64(n)
		}
		return err
	})
	return f, err
}

func (f *fixedLossInterceptor) drop(p []byte) bool {
	if len(p) < icDataHeaderLength || shm.GetUint16(p, icTypeOffset) != icTypeData || shm.GetInt32(p, icTermIDOffset) != f.termID {
		return false
	}
	key := streamSessionKey(p)
	off := int64(shm.GetInt32(p, icTermOffsetOffset))
	tracking, ok := f.tracking[key]
	if !ok {
		tracking = off
		f.tracking[key] = tracking
	}
	if tracking < int64(f.termOffset)+int64(f.length) && off <= tracking && tracking < off+int64(len(p)) {
		f.tracking[key] = off + int64(len(p))
		return true
	}
	return false
}

// multiGapLossInterceptor drops, once, the DATA datagrams of term term-id
// that cover a gap of gap-length bytes at every gap-radix bytes (rounded
// up to a power of two), total-gaps gaps in all.
type multiGapLossInterceptor struct {
	termID       int32
	gapRadix     int32
	gapLength    uint64
	totalGaps    int32
	radixBits    int
	radixMask    uint32
	lastGapLimit int32
	tracking     map[int64]int64
}

func newMultiGapLossInterceptor(args string) (*multiGapLossInterceptor, error) {
	m := &multiGapLossInterceptor{tracking: map[int64]int64{}}
	err := parseInterceptorArgs("AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_MULTI_GAP_LOSS_ARGS", args, func(k, v string) error {
		var err error
		var n int64
		switch k {
		case "term-id":
			n, err = cInt(v, 10)
			m.termID = int32(n)
		case "gap-radix":
			n, err = cInt(v, 10)
			m.gapRadix = int32(n)
		case "gap-length":
			n, err = cInt(v, 10)
			m.gapLength = uint64(n)
		case "total-gaps":
			n, err = cInt(v, 10)
			m.totalGaps = int32(n)
		}
		return err
	})
	radix := nextPowerOfTwo(m.gapRadix)
	m.radixBits = bits.TrailingZeros32(uint32(radix))
	m.radixMask = ^uint32(radix - 1)
	m.lastGapLimit = m.totalGaps*m.gapRadix + int32(m.gapLength)
	return m, err
}

// nextPowerOfTwo is aeron_find_next_power_of_two.
func nextPowerOfTwo(v int32) int32 {
	v--
	v |= v >> 1
	v |= v >> 2
	v |= v >> 4
	v |= v >> 8
	v |= v >> 16
	return v + 1
}

func (m *multiGapLossInterceptor) drop(p []byte) bool {
	if len(p) < icDataHeaderLength || shm.GetUint16(p, icTypeOffset) != icTypeData || shm.GetInt32(p, icTermIDOffset) != m.termID {
		return false
	}
	termOffset := shm.GetInt32(p, icTermOffsetOffset)
	if termOffset > m.lastGapLimit {
		return false
	}
	key := streamSessionKey(p)
	tracking, ok := m.tracking[key]
	if !ok {
		tracking = int64(termOffset)
		m.tracking[key] = tracking
	}
	off := int64(termOffset)
	if tracking > off {
		return false
	}
	frameLimit := off + int64(len(p))
	drop := termOffset != 0 && bits.TrailingZeros32(uint32(termOffset)) >= m.radixBits
	if !drop {
		prevGapOffset := int64(uint32(termOffset) & m.radixMask)
		drop = prevGapOffset > 0 && off < prevGapOffset+int64(m.gapLength)
	}
	if !drop {
		nextGapOffset := ((off >> m.radixBits) + 1) << m.radixBits
		drop = frameLimit > nextGapOffset && off < nextGapOffset+int64(m.gapLength)
	}
	if drop {
		m.tracking[key] = frameLimit
	}
	return drop
}
