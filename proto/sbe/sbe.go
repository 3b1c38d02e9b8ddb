package sbe

import (
	"encoding/binary"
	"errors"
	"fmt"

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

// Flags are SET's modifiers, bit i being choice i of the schema's SetFlags.
type Flags uint8

// The SET flags.
const (
	FlagNX      Flags = 1 << 0 // only set if the key does not exist
	FlagXX      Flags = 1 << 1 // only set if the key exists
	FlagKeepTTL Flags = 1 << 2 // keep the key's time to live
	FlagGet     Flags = 1 << 3 // reply with the old value
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
// flyweights, which it keeps so that no call allocates. The zero value is
// ready to use; a Codec is not safe for concurrent use.
type Codec struct {
	hdr goblinsbe.MessageHeader
	req goblinsbe.Request
	rep goblinsbe.Reply
}

// RequestLen is the encoded length of r (without SOFH).
func RequestLen(r *Request) int {
	n := headerLen + int(goblinsbe.RequestSbeBlockLength) + groupHdrLen + 2*varHdrLen + len(r.Key) + len(r.Value)
	for _, a := range r.Args {
		n += varHdrLen + len(a)
	}
	return n
}

// ReplyLen is the encoded length of r (without SOFH).
func ReplyLen(r *Reply) int {
	n := headerLen + int(goblinsbe.ReplySbeBlockLength) + groupHdrLen + varHdrLen + len(r.Value)
	for i := range r.Items {
		n += itemBlockLen + varHdrLen + len(r.Items[i].Value)
	}
	return n
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

// AppendRequest appends r encoded as a bare SBE message to dst. It panics
// if r has more than 65534 Args (programmer error; the client library
// checks first).
func (c *Codec) AppendRequest(dst []byte, r *Request) []byte {
	if len(r.Args) > maxGroup {
		panic(ErrTooManyItems)
	}
	n := RequestLen(r)
	dst, off := grow(dst, n)
	m := &c.req
	m.WrapAndApplyHeader(dst, uint64(off), uint64(off+n))
	m.SetCorrelationId(r.CorrelationID).SetOp(r.Op).SetExpiry(r.Expiry).SetExpire(r.Expire).SetAmount(r.Amount)
	f := m.Flags()
	f.Clear()
	f.SetNx(r.Flags&FlagNX != 0).SetXx(r.Flags&FlagXX != 0).SetKeepTtl(r.Flags&FlagKeepTTL != 0).SetGet(r.Flags&FlagGet != 0)
	g := m.ArgsCount(uint16(len(r.Args)))
	for _, a := range r.Args {
		g.Next()
		// PutArgLen writes the length and advances past the data; the
		// bytes are copied here so no []byte becomes a string.
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

// AppendReply appends r encoded as a bare SBE message to dst. It panics if
// r has more than 65534 Items.
func (c *Codec) AppendReply(dst []byte, r *Reply) []byte {
	if len(r.Items) > maxGroup {
		panic(ErrTooManyItems)
	}
	n := ReplyLen(r)
	dst, off := grow(dst, n)
	m := &c.rep
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
	pos := m.SbePosition() + varHdrLen
	m.PutValueLen("", uint32(len(r.Value)))
	copy(dst[pos:], r.Value)
	return dst
}

// TemplateID returns the template id of the SBE message in msg (1 for
// Request, 2 for Reply) after checking the header's schema id.
func (c *Codec) TemplateID(msg []byte) (uint16, error) {
	if len(msg) < headerLen {
		return 0, ErrTruncated
	}
	c.hdr.Wrap(msg, 0, uint64(SchemaVersion), uint64(len(msg)))
	if c.hdr.SchemaId() != SchemaID {
		return 0, ErrWrongSchema
	}
	return c.hdr.TemplateId(), nil
}

// header checks msg's header for template and returns the acting block
// length and version. A newer version with a longer block is accepted (its
// extra fields are skipped); a block shorter than ours is malformed.
func (c *Codec) header(msg []byte, template, block uint16) (uint64, uint64, error) {
	id, err := c.TemplateID(msg)
	if err != nil {
		return 0, 0, err
	}
	if id != template {
		return 0, 0, ErrWrongTemplate
	}
	bl := c.hdr.BlockLength()
	if bl < block || headerLen+int(bl) > len(msg) {
		return 0, 0, ErrTruncated
	}
	return uint64(bl), uint64(c.hdr.Version()), nil
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

// groupFits reports whether a group header fits at pos and whether count
// entries of blockLength plus a var-data header each could fit after it.
func groupFits(msg []byte, pos uint64) bool {
	if pos+groupHdrLen > uint64(len(msg)) {
		return false
	}
	bl := uint64(binary.LittleEndian.Uint16(msg[pos:]))
	count := uint64(binary.LittleEndian.Uint16(msg[pos+2:]))
	return count*(bl+varHdrLen) <= uint64(len(msg))-pos-groupHdrLen
}

// recoverMalformed turns a bounds panic inside the generated flyweights
// (they panic on short buffers) into ErrMalformed. The checks above make it
// a safety net, not the expected path.
func recoverMalformed(err *error) {
	if recover() != nil {
		*err = ErrTruncated
	}
}

// DecodeRequest decodes the bare Request message msg into r. r.Key,
// r.Value and r.Args point into msg; r.Args reuses its backing array.
// Bytes after the message's end are ignored.
func (c *Codec) DecodeRequest(msg []byte, r *Request) (err error) {
	defer recoverMalformed(&err)
	block, version, err := c.header(msg, goblinsbe.RequestSbeTemplateID, goblinsbe.RequestSbeBlockLength)
	if err != nil {
		return err
	}
	m := &c.req
	m.WrapForDecode(msg, uint64(headerLen), block, version, uint64(len(msg)))
	r.CorrelationID = m.CorrelationId()
	r.Op = m.Op()
	raw := m.Flags().RawValue()
	r.Flags = Flags(raw) & (FlagNX | FlagXX | FlagKeepTTL | FlagGet)
	r.Expiry = m.Expiry()
	r.Expire = m.Expire()
	r.Amount = m.Amount()
	r.Args = r.Args[:0]
	if !groupFits(msg, m.SbePosition()) {
		return ErrTruncated
	}
	for g := m.Args(); g.HasNext(); {
		g.Next()
		a, ok := varData(msg, g.SbePosition())
		if !ok {
			return ErrTruncated
		}
		r.Args = append(r.Args, a)
		g.SkipArg()
	}
	if r.Key, err = c.reqVar(msg, m.SbePosition()); err != nil {
		return err
	}
	m.SkipKey()
	if r.Value, err = c.reqVar(msg, m.SbePosition()); err != nil {
		return err
	}
	m.SkipValue()
	return nil
}

func (c *Codec) reqVar(msg []byte, pos uint64) ([]byte, error) {
	v, ok := varData(msg, pos)
	if !ok {
		return nil, ErrTruncated
	}
	return v, nil
}

// DecodeReply decodes the bare Reply message msg into r. r.Value and the
// items' values point into msg; r.Items reuses its backing array.
func (c *Codec) DecodeReply(msg []byte, r *Reply) (err error) {
	defer recoverMalformed(&err)
	block, version, err := c.header(msg, goblinsbe.ReplySbeTemplateID, goblinsbe.ReplySbeBlockLength)
	if err != nil {
		return err
	}
	m := &c.rep
	m.WrapForDecode(msg, uint64(headerLen), block, version, uint64(len(msg)))
	r.CorrelationID = m.CorrelationId()
	r.Status = m.Status()
	r.Kind = m.Kind()
	r.Integer = m.Integer()
	r.Items = r.Items[:0]
	if !groupFits(msg, m.SbePosition()) {
		return ErrTruncated
	}
	g := m.Items()
	if g.Count() > 0 && binary.LittleEndian.Uint16(msg[g.SbePosition()-groupHdrLen:]) < itemBlockLen {
		return ErrTruncated
	}
	for g.HasNext() {
		g.Next()
		it := Item{Kind: g.Kind(), Integer: g.Integer()}
		v, ok := varData(msg, g.SbePosition())
		if !ok {
			return ErrTruncated
		}
		it.Value = v
		r.Items = append(r.Items, it)
		g.SkipItem()
	}
	v, ok := varData(msg, m.SbePosition())
	if !ok {
		return ErrTruncated
	}
	r.Value = v
	m.SkipValue()
	return nil
}

// MessageLen returns the length of the SBE message at the front of msg by
// walking its groups and var-data, or an error if it does not fit.
func (c *Codec) MessageLen(msg []byte) (n int, err error) {
	defer recoverMalformed(&err)
	id, err := c.TemplateID(msg)
	if err != nil {
		return 0, err
	}
	switch id {
	case goblinsbe.RequestSbeTemplateID:
		var r Request
		if err := c.DecodeRequest(msg, &r); err != nil {
			return 0, err
		}
		return int(c.req.SbePosition()), nil
	case goblinsbe.ReplySbeTemplateID:
		var r Reply
		if err := c.DecodeReply(msg, &r); err != nil {
			return 0, err
		}
		return int(c.rep.SbePosition()), nil
	}
	return 0, ErrWrongTemplate
}
