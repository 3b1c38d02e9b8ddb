package sbe

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto/sbe/goblinsbe"
)

// Identity of the schema this package was generated from.
const (
	SchemaID      = goblinsbe.RequestSbeSchemaID
	SchemaVersion = goblinsbe.RequestSbeSchemaVersion
)

// allFlags are the bits of the schema's SetFlags set.
const allFlags = command.FlagNX | command.FlagXX | command.FlagKeepTTL | command.FlagGet | command.FlagGT | command.FlagLT

// multi reports whether r needs a MultiRequest: further arguments, a
// second integer (amount2, since version 2), or an Op past the schema's
// op (wideOp, since version 3).
func multi(r *command.Request) bool { return len(r.Args) > 0 || r.Amount2 != 0 || r.Op > MaxOp }

// multiRequestBlockV1 is MultiRequest's block length in schema version 1,
// before amount2: a version 1 message's block may be that short.
const multiRequestBlockV1 = 27

// compactPing reports whether r is encoded as a Ping message.
func compactPing(r *command.Request) bool {
	return r.Compact && r.Op == command.OpPing && len(r.Key) == 0 && len(r.Value) == 0 && len(r.Args) == 0
}

// txtPong is the value a decoded Pong carries. Its capacity is its length,
// so a caller's append copies instead of writing into it.
var txtPong = []byte("PONG")[:4:4]

// compactPong reports whether r is encoded as a Pong message.
func compactPong(r *command.Reply) bool { return r.Compact && r.IsPong() }

// Errors returned by the decoders; each wraps ErrMalformed or is it.
var (
	// ErrMalformed: the bytes are not a well-formed goblin SBE message.
	ErrMalformed = errors.New("sbe: malformed message")
	// ErrWrongSchema: the message header names another schema.
	ErrWrongSchema = fmt.Errorf("%w: wrong schema id", ErrMalformed)
	// ErrWrongTemplate: the message is not the kind the caller asked for
	// (a Reply where a Request was expected or the reverse).
	ErrWrongTemplate = fmt.Errorf("%w: unexpected template id", ErrMalformed)
	// ErrTruncated: a length or count points past the end of the message.
	ErrTruncated = fmt.Errorf("%w: truncated", ErrMalformed)
	// ErrTooManyItems: more than 65534 args or items (the group limit).
	ErrTooManyItems = errors.New("sbe: more than 65534 group entries")
	// ErrOpNotEncodable: the request's Op is neither in the schema's
	// one-byte op nor one wideOp carries (Encodable).
	ErrOpNotEncodable = errors.New("sbe: op has no SBE encoding")
)

// MaxOp is the highest command.Op a Request or MultiRequest's op can
// carry: the schema's Op is a uint8 and 255 is its null value. command.Op
// is wider, so that the command table can grow past the schema; the
// collection commands above it travel in MultiRequest's wideOp (Encodable).
const MaxOp = command.Op(254)

// MaxWideOp bounds the Ops wideOp carries.
const MaxWideOp = command.Op(command.NumOps - 1)

// Encodable reports whether op travels over SBE: in op up to MaxOp, or
// since schema version 3 in MultiRequest's wideOp with op none: the hash,
// set and list commands (256-304), the sorted-set and keynum commands
// (500-559), the blocking pops (640-659; over SBE they answer at once)
// and SORT (770-789). The other ranges (persistence, Pub/Sub,
// replication, ACL, SLOWLOG, LATENCY) stay RESP only.
func Encodable(op command.Op) bool {
	switch {
	case op <= MaxOp:
		return true
	case op >= command.OpHSet && op <= command.OpRPopLPush,
		op >= command.OpZAdd && op <= 559,
		op >= command.OpBLPop && op <= 659,
		op >= command.OpSort && op <= 789:
		return command.Lookup(op) != nil
	}
	return false
}

const (
	headerLen   = int(goblinsbe.MessageHeaderEncodedLength)
	groupHdrLen = 4
	varHdrLen   = 4
	maxGroup    = 65534
)

// Codec encodes and decodes goblin's messages with the generated
// flyweights. Request and Reply use flyweights on the stack; MultiRequest
// and ArrayReply, whose group flyweights point into their parent, are kept
// in the Codec so that no call allocates. The zero value is ready to use; a
// Codec is not safe for concurrent use.
type Codec struct {
	mreq goblinsbe.MultiRequest
	arep goblinsbe.ArrayReply
}

// Template ids of the six messages.
const (
	templateRequest      = goblinsbe.RequestSbeTemplateID
	templateReply        = goblinsbe.ReplySbeTemplateID
	templateMultiRequest = goblinsbe.MultiRequestSbeTemplateID
	templateArrayReply   = goblinsbe.ArrayReplySbeTemplateID
	templatePing         = goblinsbe.PingSbeTemplateID
	templatePong         = goblinsbe.PongSbeTemplateID
)

// compactLen is the length of a Ping or a Pong: header and correlation id.
const compactLen = headerLen + int(goblinsbe.PingSbeBlockLength)

// RequestLen is the encoded length of r (without SOFH): a Request message,
// a MultiRequest when r has Args or Amount2, a Ping (see
// Request.Compact), or one of version 4's typed collection messages
// (typed.go).
func RequestLen(r *command.Request) int {
	if compactPing(r) {
		return compactLen
	}
	if typedTemplate(r) != 0 {
		return typedLen(r)
	}
	if !multi(r) {
		return headerLen + int(goblinsbe.RequestSbeBlockLength) + 2*varHdrLen + len(r.Key) + len(r.Value)
	}
	n := headerLen + int(goblinsbe.MultiRequestSbeBlockLength) + 2*varHdrLen + len(r.Key) + len(r.Value) + groupHdrLen
	for _, a := range r.Args {
		n += varHdrLen + len(a)
	}
	return n
}

// ReplyLen is the encoded length of r (without SOFH): a Reply message, an
// ArrayReply when r is an aggregate (array, map or set; its Value is not
// sent), or a Pong (see Reply.Compact).
func ReplyLen(r *command.Reply) int {
	if compactPong(r) {
		return compactLen
	}
	if r.Kind.Aggregate() {
		n := headerLen + int(goblinsbe.ArrayReplySbeBlockLength) + groupHdrLen
		for i := range r.Items {
			n += itemBlockLen + varHdrLen + len(r.Items[i].Value)
		}
		return n
	}
	return headerLen + int(goblinsbe.ReplySbeBlockLength) + varHdrLen + len(r.Value)
}

const itemBlockLen = 9 // kind (1) + integer (8); checked in tests

// The layout of the Request's and the Reply's fixed blocks (schema version
// 2), which the hot decode and encode read and write directly;
// TestOffsetsMatchGenerated pins every one to the generated flyweights.
const (
	reqCorrelationID = 0
	reqOp            = 8
	reqFlags         = 9
	reqExpiry        = 10
	reqExpire        = 11
	reqAmount        = 19
	reqBlockV2       = 27

	repCorrelationID = 0
	repStatus        = 8
	repKind          = 9
	repInteger       = 10
	repBlock         = 18

	// replyHeader is a Reply's message header as one little-endian uint64:
	// block length, template id, schema id, schema version.
	replyHeader = uint64(repBlock) | uint64(templateReply)<<16 | uint64(SchemaID)<<32 | uint64(SchemaVersion)<<48
)

// growFramed extends dst by a SOFH header for a message of n bytes and
// the message, writes the header, and returns the extended slice and the
// offset where the message starts.
func growFramed(dst []byte, n int) ([]byte, int) {
	dst, off := grow(dst, SOFHLen+n)
	putSOFH(dst[off:], SOFHLen+n)
	return dst, off + SOFHLen
}

// grow extends dst by n bytes and returns the extended slice and the offset
// where the new bytes start.
func grow(dst []byte, n int) ([]byte, int) {
	off := len(dst)
	if cap(dst)-off < n {
		bigger := make([]byte, off, 2*cap(dst)+n)
		copy(bigger, dst)
		dst = bigger
	}
	return dst[:off+n], off
}

// flagBits encodes Flags with the generated set's accessors.
func flagBits(f command.Flags) uint8 {
	var fs goblinsbe.SetFlags
	var b uint8
	b = fs.SetNxValue(b, f&command.FlagNX != 0)
	b = fs.SetXxValue(b, f&command.FlagXX != 0)
	b = fs.SetKeepTtlValue(b, f&command.FlagKeepTTL != 0)
	b = fs.SetGetValue(b, f&command.FlagGet != 0)
	b = fs.SetGtValue(b, f&command.FlagGT != 0)
	b = fs.SetLtValue(b, f&command.FlagLT != 0)
	return b
}

// AppendRequest appends r encoded as a bare SBE message to dst: a Request,
// or a MultiRequest when r has Args or Amount2 or an Op above MaxOp. It
// panics if r has more than 65534 Args or an Op not Encodable (programmer
// errors; the client library checks first).
func (c *Codec) AppendRequest(dst []byte, r *command.Request) []byte {
	if plainRequest(r) {
		return appendPlainRequest(dst, r) // GET, SET and their kind (clienthot.go)
	}
	n := RequestLen(r)
	dst, off := grow(dst, n)
	return c.requestAt(dst, off, n, r)
}

// AppendFramedRequest appends r as a SOFH-framed message, the form stream
// transports carry.
func (c *Codec) AppendFramedRequest(dst []byte, r *command.Request) []byte {
	n := RequestLen(r)
	dst, off := growFramed(dst, n)
	return c.requestAt(dst, off, n, r)
}

// requestAt encodes r into the n bytes of dst at off.
func (c *Codec) requestAt(dst []byte, off, n int, r *command.Request) []byte {
	if !Encodable(r.Op) {
		panic(ErrOpNotEncodable)
	}
	if t := typedTemplate(r); t != 0 {
		return typedAt(dst, off, t, r)
	}
	if multi(r) {
		return c.appendMulti(dst, off, n, r)
	}
	if compactPing(r) {
		var m goblinsbe.Ping
		m.WrapAndApplyHeader(dst, uint64(off), uint64(off+n))
		m.SetCorrelationId(r.CorrelationID)
		return dst
	}
	var m goblinsbe.Request
	m.WrapAndApplyHeader(dst, uint64(off), uint64(off+n))
	m.SetCorrelationId(r.CorrelationID).SetOp(goblinsbe.Op(r.Op)).SetExpiry(goblinsbe.Expiry(r.Expiry)).SetExpire(r.Expire).SetAmount(r.Amount)
	dst[off+headerLen+int(m.FlagsEncodingOffset())] = flagBits(r.Flags)
	pos := putVar(dst, int(m.SbePosition()), r.Key)
	putVar(dst, pos, r.Value)
	return dst
}

// putVar writes one var-data field (uint32 little-endian length, then the
// bytes) at pos and returns the position after it. The generated Put*Len
// methods take a string, which would cost a []byte-to-string copy per
// field; the layout is the schema's varDataEncoding, and the round-trip
// tests decode it with the generated accessors' positions.
func putVar(dst []byte, pos int, v []byte) int {
	binary.LittleEndian.PutUint32(dst[pos:], uint32(len(v)))
	return pos + varHdrLen + copy(dst[pos+varHdrLen:], v)
}

func (c *Codec) appendMulti(dst []byte, off, n int, r *command.Request) []byte {
	if len(r.Args) > maxGroup {
		panic(ErrTooManyItems)
	}
	m := &c.mreq
	m.WrapAndApplyHeader(dst, uint64(off), uint64(off+n))
	op, wide := goblinsbe.Op(r.Op), uint16(0)
	if r.Op > MaxOp {
		op, wide = goblinsbe.Op(command.OpNone), uint16(r.Op)
	}
	m.SetCorrelationId(r.CorrelationID).SetOp(op).SetExpiry(goblinsbe.Expiry(r.Expiry)).SetExpire(r.Expire).SetAmount(r.Amount).SetAmount2(r.Amount2).SetWideOp(wide)
	dst[off+headerLen+int(m.FlagsEncodingOffset())] = flagBits(r.Flags)
	g := m.ArgsCount(uint16(len(r.Args)))
	for _, a := range r.Args {
		g.Next()
		pos := g.SbePosition() + varHdrLen
		g.PutArgLen("", uint32(len(a)))
		copy(dst[pos:], a)
	}
	pos := m.SbePosition() + varHdrLen
	m.PutKeyLen("", uint32(len(r.Key)))
	copy(dst[pos:], r.Key)
	pos = m.SbePosition() + varHdrLen
	m.PutValueLen("", uint32(len(r.Value)))
	copy(dst[pos:], r.Value)
	return dst
}

// AppendReply appends r encoded as a bare SBE message to dst: a Reply, or
// an ArrayReply when r is an aggregate. It panics if r has more than 65534
// Items.
func (c *Codec) AppendReply(dst []byte, r *command.Reply) []byte {
	n := ReplyLen(r)
	dst, off := grow(dst, n)
	return c.replyAt(dst, off, n, r)
}

// AppendFramedReply appends r as a SOFH-framed message, the form stream
// transports carry.
func (c *Codec) AppendFramedReply(dst []byte, r *command.Reply) []byte {
	n := ReplyLen(r)
	dst, off := growFramed(dst, n)
	return c.replyAt(dst, off, n, r)
}

// replyAt encodes r into the n bytes of dst at off.
func (c *Codec) replyAt(dst []byte, off, n int, r *command.Reply) []byte {
	if r.Kind.Aggregate() {
		return c.appendArray(dst, off, n, r)
	}
	if compactPong(r) {
		var m goblinsbe.Pong
		m.WrapAndApplyHeader(dst, uint64(off), uint64(off+n))
		m.SetCorrelationId(r.CorrelationID)
		return dst
	}
	// The header and the fixed fields at the generated layout's offsets
	// (TestOffsetsMatchGenerated), without a flyweight.
	b := dst[off : off+headerLen+repBlock]
	binary.LittleEndian.PutUint64(b, replyHeader)
	b = b[headerLen:]
	binary.LittleEndian.PutUint64(b[repCorrelationID:], r.CorrelationID)
	b[repStatus], b[repKind] = uint8(r.Status), uint8(r.Kind)
	binary.LittleEndian.PutUint64(b[repInteger:], uint64(r.Integer))
	putVar(dst, off+headerLen+repBlock, r.Value)
	return dst
}

func (c *Codec) appendArray(dst []byte, off, n int, r *command.Reply) []byte {
	if len(r.Items) > maxGroup {
		panic(ErrTooManyItems)
	}
	m := &c.arep
	m.WrapAndApplyHeader(dst, uint64(off), uint64(off+n))
	m.SetCorrelationId(r.CorrelationID).SetStatus(goblinsbe.Status(r.Status)).SetKind(goblinsbe.Kind(r.Kind)).SetInteger(r.Integer)
	g := m.ItemsCount(uint16(len(r.Items)))
	for i := range r.Items {
		it := &r.Items[i]
		g.Next().SetKind(goblinsbe.Kind(it.Kind)).SetInteger(it.Integer)
		pos := g.SbePosition() + varHdrLen
		g.PutItemLen("", uint32(len(it.Value)))
		copy(dst[pos:], it.Value)
	}
	return dst
}

// header reads the message header of msg after checking the schema id, and
// returns the template id, acting block length and version. A newer version
// with a longer block is accepted (its extra fields are skipped); a block
// shorter than this version's is malformed.
func header(msg []byte) (template uint16, block, version uint64, err error) {
	if len(msg) < headerLen {
		return 0, 0, 0, ErrTruncated
	}
	// The message header's fields, read directly (TestOffsetsMatchGenerated
	// pins the layout to the generated MessageHeader).
	h := binary.LittleEndian.Uint64(msg)
	bl, version16 := uint16(h), uint16(h>>48)
	template = uint16(h >> 16)
	if uint16(h>>32) != SchemaID {
		return 0, 0, 0, ErrWrongSchema
	}
	var min uint16
	switch template {
	case templateRequest:
		min = goblinsbe.RequestSbeBlockLength
	case templateMultiRequest:
		min = goblinsbe.MultiRequestSbeBlockLength
		if version16 < 2 {
			min = multiRequestBlockV1
		}
	case templateReply:
		min = goblinsbe.ReplySbeBlockLength
	case templateArrayReply:
		min = goblinsbe.ArrayReplySbeBlockLength
	case templatePing:
		min = goblinsbe.PingSbeBlockLength
	case templatePong:
		min = goblinsbe.PongSbeBlockLength
	case templateHGet, templateHSet, templateLPush, templateRPop, templateZAdd, templateZRange:
		min = typedBlock
	default:
		return 0, 0, 0, ErrWrongTemplate
	}
	if bl < min || headerLen+int(bl) > len(msg) {
		return 0, 0, 0, ErrTruncated
	}
	return template, uint64(bl), uint64(version16), nil
}

// TemplateID returns the template id of the SBE message in msg: 1
// Request, 2 Reply, 3 MultiRequest, 4 ArrayReply, 5 Ping, 6 Pong, and
// since version 4 the typed collection requests 7 HGet, 8 HSet, 9 LPush,
// 10 RPop, 11 ZAdd, 12 ZRange.
func (c *Codec) TemplateID(msg []byte) (uint16, error) {
	t, _, _, err := header(msg)
	return t, err
}

// varData slices the var-data field at pos (a uint32 length then bytes).
func varData(msg []byte, pos uint64) ([]byte, bool) {
	if pos+varHdrLen > uint64(len(msg)) {
		return nil, false
	}
	n := uint64(binary.LittleEndian.Uint32(msg[pos:]))
	start := pos + varHdrLen
	if n > uint64(len(msg))-start {
		return nil, false
	}
	return msg[start : start+n : start+n], true
}

// groupFits reports whether a group header fits at pos and whether its
// entries' blocks and var-data headers could fit after it, and returns the
// group's block length.
func groupFits(msg []byte, pos uint64) (uint64, bool) {
	if pos+groupHdrLen > uint64(len(msg)) {
		return 0, false
	}
	bl := uint64(binary.LittleEndian.Uint16(msg[pos:]))
	count := uint64(binary.LittleEndian.Uint16(msg[pos+2:]))
	return bl, count*(bl+varHdrLen) <= uint64(len(msg))-pos-groupHdrLen
}

// recoverMalformed turns a bounds panic inside the generated flyweights
// (they panic on short buffers) into ErrMalformed. The checks the decoders
// make first keep it a safety net, not a path (the fuzz tests hold them to
// it).
func recoverMalformed(err *error) {
	if recover() != nil {
		recoveredPanics.Add(1)
		*err = ErrTruncated
	}
}

// recoveredPanics counts the panics recoverMalformed caught; FuzzDecode
// requires it to stay 0, i.e. that the explicit checks caught everything.
var recoveredPanics atomic.Int64

// DecodeRequest decodes the bare Request, MultiRequest or Ping message msg
// into r (a Ping becomes a PING with r.Compact set). r.Key, r.Value and r.Args point into msg; r.Args reuses its backing
// array. Bytes after the message's end are ignored.
func (c *Codec) DecodeRequest(msg []byte, r *command.Request) (err error) {
	_, err = c.decodeRequest(msg, r)
	return err
}

func (c *Codec) decodeRequest(msg []byte, r *command.Request) (end uint64, err error) {
	template, block, version, err := header(msg)
	if err != nil {
		return 0, err
	}
	r.Args = r.Args[:0]
	r.Compact = false
	r.Version = uint16(version)
	switch template {
	case templatePing:
		var m goblinsbe.Ping
		m.WrapForDecode(msg, uint64(headerLen), block, version, uint64(len(msg)))
		*r = command.Request{CorrelationID: m.CorrelationId(), Op: command.OpPing, Args: r.Args, Compact: true, Version: uint16(version)}
		return uint64(headerLen) + block, nil
	case templateRequest:
		// No recover needed: header checked that the block fits, and the
		// var-data fields are bounds-checked before they are sliced. The
		// fixed fields are read at the generated layout's offsets
		// (TestOffsetsMatchGenerated), without a flyweight.
		requestFixed(msg[headerLen:headerLen+reqBlockV2], r)
		pos := uint64(headerLen) + block
		var ok bool
		if r.Key, ok = varData(msg, pos); !ok {
			return 0, ErrTruncated
		}
		pos += varHdrLen + uint64(len(r.Key))
		if r.Value, ok = varData(msg, pos); !ok {
			return 0, ErrTruncated
		}
		return pos + varHdrLen + uint64(len(r.Value)), nil
	case templateMultiRequest:
		return c.decodeMulti(msg, block, version, r)
	case templateHGet, templateHSet, templateLPush, templateRPop, templateZAdd, templateZRange:
		return decodeTyped(msg, template, block, version, r)
	}
	return 0, ErrWrongTemplate
}

// setFixed sets the fixed fields a Request and a MultiRequest share (and
// Amount2 to zero, the MultiRequest's own to read after). It is inlined.
func setFixed(r *command.Request, corr uint64, op goblinsbe.Op, flags uint8, expiry goblinsbe.Expiry, expire, amount int64) {
	r.CorrelationID, r.Op, r.Flags = corr, command.Op(op), command.Flags(flags)&allFlags
	r.Expiry, r.Expire, r.Amount, r.Amount2 = command.Expiry(expiry), expire, amount, 0
}

func (c *Codec) decodeMulti(msg []byte, block, version uint64, r *command.Request) (end uint64, err error) {
	defer recoverMalformed(&err)
	m := &c.mreq
	m.WrapForDecode(msg, uint64(headerLen), block, version, uint64(len(msg)))
	setFixed(r, m.CorrelationId(), m.Op(), msg[headerLen+int(m.FlagsEncodingOffset())], m.Expiry(), m.Expire(), m.Amount())
	if m.Amount2InActingVersion() {
		r.Amount2 = m.Amount2()
	}
	if m.WideOpInActingVersion() {
		if w := command.Op(m.WideOp()); w > MaxOp && w <= MaxWideOp && Encodable(w) && r.Op == command.OpNone {
			r.Op = w
		}
	}
	gbl, ok := groupFits(msg, m.SbePosition())
	if !ok {
		return 0, ErrTruncated
	}
	for g := m.Args(); g.HasNext(); {
		if g.SbePosition()+gbl > uint64(len(msg)) {
			return 0, ErrTruncated
		}
		g.Next()
		a, ok := varData(msg, g.SbePosition())
		if !ok {
			return 0, ErrTruncated
		}
		r.Args = append(r.Args, a)
		g.SkipArg()
	}
	if r.Key, ok = varData(msg, m.SbePosition()); !ok {
		return 0, ErrTruncated
	}
	m.SkipKey()
	if r.Value, ok = varData(msg, m.SbePosition()); !ok {
		return 0, ErrTruncated
	}
	m.SkipValue()
	return m.SbePosition(), nil
}

// DecodeReply decodes the bare Reply, ArrayReply or Pong message msg into
// r (a Pong becomes the simple reply PONG with r.Compact set).
// r.Value and the items' values point into msg; r.Items reuses its backing
// array.
func (c *Codec) DecodeReply(msg []byte, r *command.Reply) (err error) {
	_, err = c.decodeReply(msg, r)
	return err
}

func (c *Codec) decodeReply(msg []byte, r *command.Reply) (end uint64, err error) {
	template, block, version, err := header(msg)
	if err != nil {
		return 0, err
	}
	r.Items = r.Items[:0]
	r.Value = nil
	r.Compact = false
	switch template {
	case templatePong:
		var m goblinsbe.Pong
		m.WrapForDecode(msg, uint64(headerLen), block, version, uint64(len(msg)))
		*r = command.Reply{CorrelationID: m.CorrelationId(), Status: command.OK, Kind: command.Simple, Value: txtPong, Items: r.Items, Compact: true}
		return uint64(headerLen) + block, nil
	case templateReply:
		var m goblinsbe.Reply
		m.WrapForDecode(msg, uint64(headerLen), block, version, uint64(len(msg)))
		r.CorrelationID = m.CorrelationId()
		r.Status = command.Status(m.Status())
		r.Kind = command.Kind(m.Kind())
		r.Integer = m.Integer()
		pos := m.SbePosition()
		v, ok := varData(msg, pos)
		if !ok {
			return 0, ErrTruncated
		}
		r.Value = v
		if r.Kind.Aggregate() {
			return 0, fmt.Errorf("%w: aggregate kind in a Reply", ErrMalformed)
		}
		return pos + varHdrLen + uint64(len(v)), nil
	case templateArrayReply:
		return c.decodeArray(msg, block, version, r)
	}
	return 0, ErrWrongTemplate
}

func (c *Codec) decodeArray(msg []byte, block, version uint64, r *command.Reply) (end uint64, err error) {
	defer recoverMalformed(&err)
	m := &c.arep
	m.WrapForDecode(msg, uint64(headerLen), block, version, uint64(len(msg)))
	r.CorrelationID = m.CorrelationId()
	r.Status = command.Status(m.Status())
	r.Kind = command.Kind(m.Kind())
	r.Integer = m.Integer()
	gbl, ok := groupFits(msg, m.SbePosition())
	if !ok {
		return 0, ErrTruncated
	}
	g := m.Items()
	if g.Count() > 0 && gbl < itemBlockLen {
		return 0, ErrTruncated
	}
	for g.HasNext() {
		if g.SbePosition()+gbl > uint64(len(msg)) {
			return 0, ErrTruncated
		}
		g.Next()
		it := command.Item{Kind: command.Kind(g.Kind()), Integer: g.Integer()}
		v, ok := varData(msg, g.SbePosition())
		if !ok {
			return 0, ErrTruncated
		}
		it.Value = v
		r.Items = append(r.Items, it)
		g.SkipItem()
	}
	if !r.Kind.Aggregate() || (version < 2 && r.Kind != command.Array) {
		return 0, fmt.Errorf("%w: ArrayReply of kind %d", ErrMalformed, r.Kind)
	}
	// Since version 2 the items are nested in pre-order and must add up to
	// the root's count exactly; version 1's are one flat level (an array
	// item was an empty nested array).
	if version >= 2 && !command.Walk(r.Kind, r.Integer, r.Items) {
		return 0, fmt.Errorf("%w: ArrayReply items do not match their counts", ErrMalformed)
	}
	if version < 2 {
		r.Integer = int64(len(r.Items))
		for i := range r.Items {
			if r.Items[i].Kind.Aggregate() {
				r.Items[i].Integer = 0
			}
		}
	}
	return m.SbePosition(), nil
}

// MessageLen returns the length of the SBE message at the front of msg by
// walking its groups and var-data, or an error if it does not fit.
func (c *Codec) MessageLen(msg []byte) (int, error) {
	t, err := c.TemplateID(msg)
	if err != nil {
		return 0, err
	}
	var end uint64
	switch t {
	case templateRequest, templateMultiRequest, templatePing,
		templateHGet, templateHSet, templateLPush, templateRPop, templateZAdd, templateZRange:
		var r command.Request
		end, err = c.decodeRequest(msg, &r)
	default:
		var r command.Reply
		end, err = c.decodeReply(msg, &r)
	}
	return int(end), err
}
