package sbe

import (
	"encoding/binary"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto/sbe/goblinsbe"
)

// The typed collection messages of schema version 4: HGet, HSet, LPush,
// RPop, ZAdd and ZRange, each a correlation id and the command's words as
// var-data (the key first), no op, no flags and no repeating group. A
// request of one of those commands in exactly that form (one field, one
// element, one member, no options) is encoded as its typed message; every
// other form stays a MultiRequest. Decoding gives the same
// command.Request the RESP decoder and the MultiRequest give: the key in
// Key, the other words in Args.
const (
	templateHGet   = goblinsbe.HGetSbeTemplateID
	templateHSet   = goblinsbe.HSetSbeTemplateID
	templateLPush  = goblinsbe.LPushSbeTemplateID
	templateRPop   = goblinsbe.RPopSbeTemplateID
	templateZAdd   = goblinsbe.ZAddSbeTemplateID
	templateZRange = goblinsbe.ZRangeSbeTemplateID

	// typedBlock is every typed message's block: the correlation id
	// (TestTypedMatchesGenerated pins it, and the var-data order, to the
	// generated flyweights).
	typedBlock = 8
)

// typedMsg is one typed message: the command it carries and its number of
// words after the key.
type typedMsg struct {
	op    command.Op
	words int
}

// typedMsgs is indexed by template id minus templateHGet.
var typedMsgs = [...]typedMsg{
	0:                             {command.OpHGet, 1}, // templateHGet
	templateHSet - templateHGet:   {command.OpHSet, 2},
	templateLPush - templateHGet:  {command.OpLPush, 1},
	templateRPop - templateHGet:   {command.OpRPop, 0},
	templateZAdd - templateHGet:   {command.OpZAdd, 2},
	templateZRange - templateHGet: {command.OpZRange, 2},
}

// typedTemplate returns the typed message r travels as, or 0: r must be
// one of the six commands with exactly the message's words and nothing
// else set.
func typedTemplate(r *command.Request) uint16 {
	var t uint16
	switch r.Op {
	case command.OpHGet:
		t = templateHGet
	case command.OpHSet:
		t = templateHSet
	case command.OpLPush:
		t = templateLPush
	case command.OpRPop:
		t = templateRPop
	case command.OpZAdd:
		t = templateZAdd
	case command.OpZRange:
		t = templateZRange
	default:
		return 0
	}
	if len(r.Args) != typedMsgs[t-templateHGet].words || len(r.Value) != 0 || r.Flags != 0 ||
		r.Expiry != 0 || r.Expire != 0 || r.Amount != 0 || r.Amount2 != 0 {
		return 0
	}
	return t
}

// typedLen is the encoded length of r as a typed message.
func typedLen(r *command.Request) int {
	n := headerLen + typedBlock + varHdrLen + len(r.Key)
	for _, a := range r.Args {
		n += varHdrLen + len(a)
	}
	return n
}

// typedAt encodes r as typed message t into the n bytes of dst at off:
// the header, the correlation id, the key and the words.
func typedAt(dst []byte, off int, t uint16, r *command.Request) []byte {
	binary.LittleEndian.PutUint64(dst[off:], uint64(typedBlock)|uint64(t)<<16|uint64(SchemaID)<<32|uint64(SchemaVersion)<<48)
	binary.LittleEndian.PutUint64(dst[off+headerLen:], r.CorrelationID)
	pos := putVar(dst, off+headerLen+typedBlock, r.Key)
	for _, a := range r.Args {
		pos = putVar(dst, pos, a)
	}
	return dst
}

// decodeTyped decodes typed message t (its header checked by header) in
// place: Key and Args point into msg, and Args reuses its backing array,
// so a request whose Args has room for two words allocates nothing.
func decodeTyped(msg []byte, t uint16, block, version uint64, r *command.Request) (end uint64, err error) {
	m := typedMsgs[t-templateHGet]
	r.CorrelationID = binary.LittleEndian.Uint64(msg[headerLen:])
	r.Op, r.Flags, r.Expiry, r.Expire, r.Amount, r.Amount2 = m.op, 0, 0, 0, 0, 0
	r.Value = nil
	pos := uint64(headerLen) + block
	var ok bool
	if r.Key, ok = varData(msg, pos); !ok {
		return 0, ErrTruncated
	}
	pos += varHdrLen + uint64(len(r.Key))
	for range m.words {
		a, ok := varData(msg, pos)
		if !ok {
			return 0, ErrTruncated
		}
		r.Args = append(r.Args, a)
		pos += varHdrLen + uint64(len(a))
	}
	return pos, nil
}
