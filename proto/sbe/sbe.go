package sbe

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/goblin-kv/goblin/proto/sbe/goblinsbe"
)

// Op is the command a Request carries (the schema's Op enum).
type Op = goblinsbe.Op

// The operations, as numbered in schemas/goblin.xml.
const (
	OpPing          = goblinsbe.Op_ping
	OpEcho          = goblinsbe.Op_echo
	OpGet           = goblinsbe.Op_get
	OpSet           = goblinsbe.Op_set
	OpDel           = goblinsbe.Op_del
	OpExists        = goblinsbe.Op_exists
	OpExpire        = goblinsbe.Op_expire
	OpPExpire       = goblinsbe.Op_pexpire
	OpTTL           = goblinsbe.Op_ttl
	OpPTTL          = goblinsbe.Op_pttl
	OpPersist       = goblinsbe.Op_persist
	OpIncr          = goblinsbe.Op_incr
	OpIncrBy        = goblinsbe.Op_incrBy
	OpDecr          = goblinsbe.Op_decr
	OpDecrBy        = goblinsbe.Op_decrBy
	OpMGet          = goblinsbe.Op_mget
	OpMSet          = goblinsbe.Op_mset
	OpType          = goblinsbe.Op_keyType
	OpDBSize        = goblinsbe.Op_dbsize
	OpFlushAll      = goblinsbe.Op_flushall
	OpFlushDB       = goblinsbe.Op_flushdb
	OpInfo          = goblinsbe.Op_info
	OpAuth          = goblinsbe.Op_auth
	OpSelect        = goblinsbe.Op_selectDb
	OpQuit          = goblinsbe.Op_quit
	OpConfigGet     = goblinsbe.Op_configGet
	OpClientSetName = goblinsbe.Op_clientSetName
	OpClientGetName = goblinsbe.Op_clientGetName
)

// Expiry says how Request.Expire is read (the schema's Expiry enum).
type Expiry = goblinsbe.Expiry

// The expiry kinds of SET.
const (
	ExpiryNone = goblinsbe.Expiry_none
	ExpiryEX   = goblinsbe.Expiry_ex
	ExpiryPX   = goblinsbe.Expiry_px
	ExpiryEXAT = goblinsbe.Expiry_exat
	ExpiryPXAT = goblinsbe.Expiry_pxat
)

// Status is a Reply's outcome (the schema's Status enum).
type Status = goblinsbe.Status

// The statuses.
const (
	StatusOK                 = goblinsbe.Status_ok
	StatusErr                = goblinsbe.Status_err
	StatusSyntax             = goblinsbe.Status_syntax
	StatusWrongArgs          = goblinsbe.Status_wrongArgs
	StatusNotInteger         = goblinsbe.Status_notInteger
	StatusOverflow           = goblinsbe.Status_overflow
	StatusOOM                = goblinsbe.Status_oom
	StatusKeyTooLong         = goblinsbe.Status_keyTooLong
	StatusValueTooLong       = goblinsbe.Status_valueTooLong
	StatusUnknownCommand     = goblinsbe.Status_unknownCommand
	StatusNoAuth             = goblinsbe.Status_noAuth
	StatusWrongPass          = goblinsbe.Status_wrongPass
	StatusProtocol           = goblinsbe.Status_protocol
	StatusInvalidExpire      = goblinsbe.Status_invalidExpire
	StatusUnsupportedVersion = goblinsbe.Status_unsupportedVersion
)

// Kind is the shape of a Reply's payload (the schema's Kind enum).
type Kind = goblinsbe.Kind

// The reply kinds.
const (
	KindSimple  = goblinsbe.Kind_simple  // status text in Value: OK, PONG
	KindBulk    = goblinsbe.Kind_bulk    // bytes in Value
	KindNil     = goblinsbe.Kind_absent  // no value
	KindInteger = goblinsbe.Kind_integer // number in Integer
	KindArray   = goblinsbe.Kind_array   // elements in Items
	KindError   = goblinsbe.Kind_failure // Status says which; text in Value
)

// Flags are SET's and EXPIRE's modifiers, bit i being choice i of the
// schema's SetFlags.
type Flags uint8

// The flags.
const (
	FlagNX      Flags = 1 << 0 // SET: only if the key does not exist; EXPIRE: only if it has no expiry
	FlagXX      Flags = 1 << 1 // SET: only if the key exists; EXPIRE: only if it has an expiry
	FlagKeepTTL Flags = 1 << 2 // SET: keep the key's time to live
	FlagGet     Flags = 1 << 3 // SET: reply with the old value
	FlagGT      Flags = 1 << 4 // EXPIRE: only if the new expiry is later
	FlagLT      Flags = 1 << 5 // EXPIRE: only if the new expiry is earlier

	allFlags = FlagNX | FlagXX | FlagKeepTTL | FlagGet | FlagGT | FlagLT
)

// Identity of the schema this package was generated from.
const (
	SchemaID      = goblinsbe.RequestSbeSchemaID
	SchemaVersion = goblinsbe.RequestSbeSchemaVersion
)

// Request is one command. Key, Value and Args point into the decoded
// buffer.
type Request struct {
	CorrelationID uint64
	Op            Op
	Flags         Flags
	Expiry        Expiry
	Expire        int64 // SET's expiry time, read per Expiry
	// Amount is EXPIRE's seconds, PEXPIRE's milliseconds, INCRBY/DECRBY's
	// delta and SELECT's index.
	Amount int64
	Key    []byte
	Value  []byte
	// Args are further arguments: MGET's keys after Key, MSET's key/value
	// pairs after Key/Value, INFO's sections, CONFIG GET's patterns after
	// Key.
	Args [][]byte
	// Compact asks for the 16-byte Ping message (schema version 1) in place
	// of a Request; the encoders honour it only for a PING with no message
	// (Op OpPing, no Key, Value or Args). The decoder sets it when the
	// message was a Ping, so the server can answer with a Pong.
	Compact bool
}

// compactPing reports whether r is encoded as a Ping message.
func compactPing(r *Request) bool {
	return r.Compact && r.Op == OpPing && len(r.Key) == 0 && len(r.Value) == 0 && len(r.Args) == 0
}

// Item is one element of an array Reply.
type Item struct {
	Kind    Kind // KindBulk, KindNil, KindInteger or KindSimple
	Integer int64
	Value   []byte
}

// Reply is the answer to one Request. Value and Items[i].Value point into
// the decoded buffer.
type Reply struct {
	CorrelationID uint64
	Status        Status
	Kind          Kind
	Integer       int64
	Value         []byte
	Items         []Item
	// Compact asks for the 16-byte Pong message (schema version 1) in place
	// of a Reply; the encoders honour it only for the simple reply PONG
	// (Status OK, Kind KindSimple, Value "PONG"). The decoder sets it, with
	// that status, kind and value, when the message was a Pong.
	Compact bool
}

// txtPong is the value a decoded Pong carries. Its capacity is its length,
// so a caller's append copies instead of writing into it.
var txtPong = []byte("PONG")[:4:4]

// compactPong reports whether r is encoded as a Pong message.
func compactPong(r *Reply) bool {
	return r.Compact && r.Status == StatusOK && r.Kind == KindSimple && string(r.Value) == "PONG"
}

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
)

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
// a MultiRequest when r has Args, or a Ping (see Request.Compact).
func RequestLen(r *Request) int {
	if compactPing(r) {
		return compactLen
	}
	n := headerLen + int(goblinsbe.RequestSbeBlockLength) + 2*varHdrLen + len(r.Key) + len(r.Value)
	if len(r.Args) > 0 {
		n += groupHdrLen
		for _, a := range r.Args {
			n += varHdrLen + len(a)
		}
	}
	return n
}

// ReplyLen is the encoded length of r (without SOFH): a Reply message, an
// ArrayReply when r.Kind is KindArray (whose Value is not sent), or a Pong
// (see Reply.Compact).
func ReplyLen(r *Reply) int {
	if compactPong(r) {
		return compactLen
	}
	if r.Kind == KindArray {
		n := headerLen + int(goblinsbe.ArrayReplySbeBlockLength) + groupHdrLen
		for i := range r.Items {
			n += itemBlockLen + varHdrLen + len(r.Items[i].Value)
		}
		return n
	}
	return headerLen + int(goblinsbe.ReplySbeBlockLength) + varHdrLen + len(r.Value)
}

const itemBlockLen = 9 // kind (1) + integer (8); checked in tests

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
func flagBits(f Flags) uint8 {
	var fs goblinsbe.SetFlags
	var b uint8
	b = fs.SetNxValue(b, f&FlagNX != 0)
	b = fs.SetXxValue(b, f&FlagXX != 0)
	b = fs.SetKeepTtlValue(b, f&FlagKeepTTL != 0)
	b = fs.SetGetValue(b, f&FlagGet != 0)
	b = fs.SetGtValue(b, f&FlagGT != 0)
	b = fs.SetLtValue(b, f&FlagLT != 0)
	return b
}

// AppendRequest appends r encoded as a bare SBE message to dst: a Request,
// or a MultiRequest when r has Args. It panics if r has more than 65534
// Args (programmer error; the client library checks first).
func (c *Codec) AppendRequest(dst []byte, r *Request) []byte {
	n := RequestLen(r)
	dst, off := grow(dst, n)
	return c.requestAt(dst, off, n, r)
}

// AppendFramedRequest appends r as a SOFH-framed message, the form stream
// transports carry.
func (c *Codec) AppendFramedRequest(dst []byte, r *Request) []byte {
	n := RequestLen(r)
	dst, off := grow(dst, SOFHLen+n)
	putSOFH(dst[off:], SOFHLen+n)
	return c.requestAt(dst, off+SOFHLen, n, r)
}

// requestAt encodes r into the n bytes of dst at off.
func (c *Codec) requestAt(dst []byte, off, n int, r *Request) []byte {
	if len(r.Args) > 0 {
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
	m.SetCorrelationId(r.CorrelationID).SetOp(r.Op).SetExpiry(r.Expiry).SetExpire(r.Expire).SetAmount(r.Amount)
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

func (c *Codec) appendMulti(dst []byte, off, n int, r *Request) []byte {
	if len(r.Args) > maxGroup {
		panic(ErrTooManyItems)
	}
	m := &c.mreq
	m.WrapAndApplyHeader(dst, uint64(off), uint64(off+n))
	m.SetCorrelationId(r.CorrelationID).SetOp(r.Op).SetExpiry(r.Expiry).SetExpire(r.Expire).SetAmount(r.Amount)
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
// an ArrayReply when r.Kind is KindArray. It panics if r has more than
// 65534 Items.
func (c *Codec) AppendReply(dst []byte, r *Reply) []byte {
	n := ReplyLen(r)
	dst, off := grow(dst, n)
	return c.replyAt(dst, off, n, r)
}

// AppendFramedReply appends r as a SOFH-framed message, the form stream
// transports carry.
func (c *Codec) AppendFramedReply(dst []byte, r *Reply) []byte {
	n := ReplyLen(r)
	dst, off := grow(dst, SOFHLen+n)
	putSOFH(dst[off:], SOFHLen+n)
	return c.replyAt(dst, off+SOFHLen, n, r)
}

// replyAt encodes r into the n bytes of dst at off.
func (c *Codec) replyAt(dst []byte, off, n int, r *Reply) []byte {
	if r.Kind == KindArray {
		return c.appendArray(dst, off, n, r)
	}
	if compactPong(r) {
		var m goblinsbe.Pong
		m.WrapAndApplyHeader(dst, uint64(off), uint64(off+n))
		m.SetCorrelationId(r.CorrelationID)
		return dst
	}
	var m goblinsbe.Reply
	m.WrapAndApplyHeader(dst, uint64(off), uint64(off+n))
	m.SetCorrelationId(r.CorrelationID).SetStatus(r.Status).SetKind(r.Kind).SetInteger(r.Integer)
	putVar(dst, int(m.SbePosition()), r.Value)
	return dst
}

func (c *Codec) appendArray(dst []byte, off, n int, r *Reply) []byte {
	if len(r.Items) > maxGroup {
		panic(ErrTooManyItems)
	}
	m := &c.arep
	m.WrapAndApplyHeader(dst, uint64(off), uint64(off+n))
	m.SetCorrelationId(r.CorrelationID).SetStatus(r.Status).SetKind(r.Kind).SetInteger(r.Integer)
	g := m.ItemsCount(uint16(len(r.Items)))
	for i := range r.Items {
		it := &r.Items[i]
		g.Next().SetKind(it.Kind).SetInteger(it.Integer)
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
	var h goblinsbe.MessageHeader
	h.Wrap(msg, 0, uint64(SchemaVersion), uint64(len(msg)))
	if h.SchemaId() != SchemaID {
		return 0, 0, 0, ErrWrongSchema
	}
	template = h.TemplateId()
	var min uint16
	switch template {
	case templateRequest:
		min = goblinsbe.RequestSbeBlockLength
	case templateMultiRequest:
		min = goblinsbe.MultiRequestSbeBlockLength
	case templateReply:
		min = goblinsbe.ReplySbeBlockLength
	case templateArrayReply:
		min = goblinsbe.ArrayReplySbeBlockLength
	case templatePing:
		min = goblinsbe.PingSbeBlockLength
	case templatePong:
		min = goblinsbe.PongSbeBlockLength
	default:
		return 0, 0, 0, ErrWrongTemplate
	}
	bl := h.BlockLength()
	if bl < min || headerLen+int(bl) > len(msg) {
		return 0, 0, 0, ErrTruncated
	}
	return template, uint64(bl), uint64(h.Version()), nil
}

// TemplateID returns the template id of the SBE message in msg: 1
// Request, 2 Reply, 3 MultiRequest, 4 ArrayReply, 5 Ping, 6 Pong.
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
func (c *Codec) DecodeRequest(msg []byte, r *Request) (err error) {
	_, err = c.decodeRequest(msg, r)
	return err
}

func (c *Codec) decodeRequest(msg []byte, r *Request) (end uint64, err error) {
	template, block, version, err := header(msg)
	if err != nil {
		return 0, err
	}
	r.Args = r.Args[:0]
	r.Compact = false
	switch template {
	case templatePing:
		var m goblinsbe.Ping
		m.WrapForDecode(msg, uint64(headerLen), block, version, uint64(len(msg)))
		*r = Request{CorrelationID: m.CorrelationId(), Op: OpPing, Args: r.Args, Compact: true}
		return uint64(headerLen) + block, nil
	case templateRequest:
		// No recover needed: header checked that the block fits, and the
		// var-data fields are bounds-checked before they are sliced.
		var m goblinsbe.Request
		m.WrapForDecode(msg, uint64(headerLen), block, version, uint64(len(msg)))
		r.CorrelationID = m.CorrelationId()
		r.Op = m.Op()
		r.Flags = Flags(msg[headerLen+int(m.FlagsEncodingOffset())]) & allFlags
		r.Expiry = m.Expiry()
		r.Expire = m.Expire()
		r.Amount = m.Amount()
		pos := m.SbePosition()
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
	}
	return 0, ErrWrongTemplate
}

func (c *Codec) decodeMulti(msg []byte, block, version uint64, r *Request) (end uint64, err error) {
	defer recoverMalformed(&err)
	m := &c.mreq
	m.WrapForDecode(msg, uint64(headerLen), block, version, uint64(len(msg)))
	r.CorrelationID = m.CorrelationId()
	r.Op = m.Op()
	r.Flags = Flags(msg[headerLen+int(m.FlagsEncodingOffset())]) & allFlags
	r.Expiry = m.Expiry()
	r.Expire = m.Expire()
	r.Amount = m.Amount()
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
func (c *Codec) DecodeReply(msg []byte, r *Reply) (err error) {
	_, err = c.decodeReply(msg, r)
	return err
}

func (c *Codec) decodeReply(msg []byte, r *Reply) (end uint64, err error) {
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
		*r = Reply{CorrelationID: m.CorrelationId(), Status: StatusOK, Kind: KindSimple, Value: txtPong, Items: r.Items, Compact: true}
		return uint64(headerLen) + block, nil
	case templateReply:
		var m goblinsbe.Reply
		m.WrapForDecode(msg, uint64(headerLen), block, version, uint64(len(msg)))
		r.CorrelationID = m.CorrelationId()
		r.Status = m.Status()
		r.Kind = m.Kind()
		r.Integer = m.Integer()
		pos := m.SbePosition()
		v, ok := varData(msg, pos)
		if !ok {
			return 0, ErrTruncated
		}
		r.Value = v
		if r.Kind == KindArray {
			return 0, fmt.Errorf("%w: array kind in a Reply", ErrMalformed)
		}
		return pos + varHdrLen + uint64(len(v)), nil
	case templateArrayReply:
		return c.decodeArray(msg, block, version, r)
	}
	return 0, ErrWrongTemplate
}

func (c *Codec) decodeArray(msg []byte, block, version uint64, r *Reply) (end uint64, err error) {
	defer recoverMalformed(&err)
	m := &c.arep
	m.WrapForDecode(msg, uint64(headerLen), block, version, uint64(len(msg)))
	r.CorrelationID = m.CorrelationId()
	r.Status = m.Status()
	r.Kind = m.Kind()
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
		it := Item{Kind: g.Kind(), Integer: g.Integer()}
		v, ok := varData(msg, g.SbePosition())
		if !ok {
			return 0, ErrTruncated
		}
		it.Value = v
		r.Items = append(r.Items, it)
		g.SkipItem()
	}
	if r.Kind != KindArray {
		return 0, fmt.Errorf("%w: ArrayReply of kind %d", ErrMalformed, r.Kind)
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
	case templateRequest, templateMultiRequest, templatePing:
		var r Request
		end, err = c.decodeRequest(msg, &r)
	default:
		var r Reply
		end, err = c.decodeReply(msg, &r)
	}
	return int(end), err
}
