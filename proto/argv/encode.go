package argv

import (
	"encoding/binary"
	"errors"
	"strconv"
	"strings"

	"github.com/goblin-kv/goblin/request"
)

// Encoder writes requests in Redis command syntax, the inverse of
// Decoder: a client that builds a request.Request from typed arguments
// sends it over RESP as the words Encode returns. The zero value is
// ready; an Encoder is not safe for concurrent use, and what Words
// returns is valid until the next call.
type Encoder struct {
	words [][]byte
	num   []byte // formatted integers
}

// ErrNoSyntax is returned for an Op the encoder has no Redis syntax for.
var ErrNoSyntax = errors.New("argv: no Redis syntax for this operation")

// Words returns r as an argument vector: the command's name (and a
// subcommand's), then its arguments. Decoding the words gives r back.
func (e *Encoder) Words(r *request.Request) ([][]byte, error) {
	if int(r.Op) >= len(nameWords) || nameWords[r.Op] == nil {
		return nil, ErrNoSyntax
	}
	e.words = append(e.words[:0], nameWords[r.Op]...)
	e.num = e.num[:0]
	if f := encoders[r.Op]; f != nil {
		f(e, r)
	}
	return e.words, nil
}

func (e *Encoder) add(w ...[]byte) { e.words = append(e.words, w...) }

// int adds n in decimal. The digits live in e.num; when e.num grows into
// a new array, words already taken still point at the old one, whose
// digits nothing overwrites.
func (e *Encoder) int(n int64) {
	start := len(e.num)
	e.num = strconv.AppendInt(e.num, n, 10)
	e.words = append(e.words, e.num[start:len(e.num):len(e.num)])
}

var (
	nameWords [request.NumOps][][]byte
	encoders  [request.NumOps]func(e *Encoder, r *request.Request)
)

func word(s string) []byte { return []byte(s) }

var (
	wNX, wXX, wGT, wLT = word("NX"), word("XX"), word("GT"), word("LT")
	wGet, wKeepTTL     = word("GET"), word("KEEPTTL")
	wEX, wPX           = word("EX"), word("PX")
	wEXAT, wPXAT       = word("EXAT"), word("PXAT")
	wAuth, wSetName    = word("AUTH"), word("SETNAME")
	wFilterBy          = word("FILTERBY")
	expiryWords        = [...][]byte{nil, wEX, wPX, wEXAT, wPXAT}
	listFilterWords    = [...][]byte{nil, word("MODULE"), word("ACLCAT"), word("PATTERN")}
	keyAndArgs         = func(e *Encoder, r *request.Request) { e.add(r.Key); e.add(r.Args...) }
	keyOnly            = func(e *Encoder, r *request.Request) { e.add(r.Key) }
	argsOnly           = func(e *Encoder, r *request.Request) { e.add(r.Args...) }
	valueOnly          = func(e *Encoder, r *request.Request) { e.add(r.Value) }
	keyAmount          = func(e *Encoder, r *request.Request) { e.add(r.Key); e.int(r.Amount) }
	amountOnly         = func(e *Encoder, r *request.Request) { e.int(r.Amount) }
	keyValueAndArgs    = func(e *Encoder, r *request.Request) { e.add(r.Key, r.Value); e.add(r.Args...) }
	expireFlagWords    = [...]struct {
		f request.Flags
		w []byte
	}{{request.FlagNX, wNX}, {request.FlagXX, wXX}, {request.FlagGT, wGT}, {request.FlagLT, wLT}}
)

func init() {
	for _, op := range request.All() {
		s := request.Lookup(op)
		if s.Dispatch {
			continue
		}
		for _, w := range strings.Split(s.Name, "|") {
			nameWords[op] = append(nameWords[op], []byte(strings.ToUpper(w)))
		}
	}
	for op, f := range map[request.Op]func(*Encoder, *request.Request){
		request.OpPing: argsOnly, request.OpEcho: valueOnly, request.OpGet: keyOnly, request.OpSet: encodeSet,
		request.OpDel: keyAndArgs, request.OpExists: keyAndArgs, request.OpMGet: keyAndArgs,
		request.OpExpire: encodeExpire, request.OpPExpire: encodeExpire, request.OpTTL: keyOnly,
		request.OpPTTL: keyOnly, request.OpPersist: keyOnly, request.OpIncr: keyOnly, request.OpDecr: keyOnly,
		request.OpType: keyOnly, request.OpIncrBy: keyAmount, request.OpDecrBy: keyAmount,
		request.OpMSet: keyValueAndArgs, request.OpInfo: argsOnly, request.OpAuth: encodeAuth,
		request.OpSelect: amountOnly, request.OpConfigGet: keyAndArgs, request.OpClientSetName: valueOnly,
		request.OpClientSetInfo: func(e *Encoder, r *request.Request) { e.add(r.Key, r.Value) },
		request.OpCommandDocs:   argsOnly, request.OpCommandInfo: argsOnly, request.OpCommandGetKeys: argsOnly,
		request.OpCommandGetKeysAndFlags: argsOnly, request.OpCommandList: encodeCommandList,
		request.OpHello: encodeHello,
		request.OpSetNX: keyValue2, request.OpGetSet: keyValue2, request.OpAppend: keyValue2,
		request.OpSetEX: encodeSetEx, request.OpPSetEX: encodeSetEx, request.OpGetDel: keyOnly,
		request.OpGetEX: encodeGetEx, request.OpStrLen: keyOnly, request.OpGetRange: keyTwoInts,
		request.OpSubstr: keyTwoInts, request.OpSetRange: func(e *Encoder, r *request.Request) { e.add(r.Key); e.int(r.Amount); e.add(r.Value) },
		request.OpIncrByFloat: keyValue2, request.OpMSetNX: keyValueAndArgs, request.OpUnlink: keyAndArgs,
		request.OpTouch: keyAndArgs, request.OpRename: keyAndArgs, request.OpRenameNX: keyAndArgs,
		request.OpCopy: encodeCopy, request.OpExpireAt: encodeExpire, request.OpPExpireAt: encodeExpire,
		request.OpExpireTime: keyOnly, request.OpPExpireTime: keyOnly, request.OpKeys: valueOnly,
		request.OpScan: encodeScan, request.OpObjectEncoding: keyOnly, request.OpObjectFreq: keyOnly,
		request.OpObjectIdleTime: keyOnly, request.OpObjectRefCount: keyOnly, request.OpMemoryUsage: keyOnly,
		request.OpDump: keyOnly, request.OpRestore: encodeRestore,
		request.OpSwapDB: func(e *Encoder, r *request.Request) { e.int(r.Amount); e.int(r.Amount2) },
		request.OpMove:   keyAmount,
		request.OpSetBit: keyTwoInts, request.OpGetBit: keyAmount, request.OpBitCount: encodeBitCount,
		request.OpBitPos: encodeBitPos, request.OpBitOp: encodeBitOp, request.OpBitField: encodeBitField,
		request.OpBitFieldRO: encodeBitField, request.OpLCS: encodeLCS, request.OpWatch: keyAndArgs,
		request.OpClientList: encodeClientList, request.OpClientKill: encodeClientKill,
		request.OpClientNoEvict: encodeOnOff, request.OpClientNoTouch: encodeOnOff,
		request.OpClientPause: encodeClientPause, request.OpClientReply: encodeClientReply,
		request.OpClientTracking: encodeClientTracking, request.OpClientCaching: valueOnly,
		request.OpClientUnblock: amountOnly, request.OpWait: func(e *Encoder, r *request.Request) { e.int(r.Amount); e.int(r.Amount2) },
		request.OpConfigSet: keyValueAndArgs, request.OpFunctionList: encodeFunctionList,
	} {
		encoders[op] = f
	}
}

var (
	wPersist, wReplace, wDB, wAbsTTL = word("PERSIST"), word("REPLACE"), word("DB"), word("ABSTTL")
	wNotInteger                      = word("not-an-integer") // RESTORE's ttl when it was not one
	wMatch, wCount, wType            = word("MATCH"), word("COUNT"), word("TYPE")
	keyValue2                        = func(e *Encoder, r *request.Request) { e.add(r.Key, r.Value) }
	keyTwoInts                       = func(e *Encoder, r *request.Request) { e.add(r.Key); e.int(r.Amount); e.int(r.Amount2) }
)

func encodeSetEx(e *Encoder, r *request.Request) {
	e.add(r.Key)
	if r.Expire == RestoreTTLNotInteger {
		e.add(wNotInteger)
	} else {
		e.int(r.Expire)
	}
	e.add(r.Value)
}

func encodeGetEx(e *Encoder, r *request.Request) {
	e.add(r.Key)
	switch {
	case r.Expiry == request.ExpiryPersist:
		e.add(wPersist)
	case r.Expiry != request.ExpiryNone && int(r.Expiry) < len(expiryWords):
		e.add(expiryWords[r.Expiry])
		e.int(r.Expire)
	}
}

func encodeCopy(e *Encoder, r *request.Request) {
	e.add(r.Key)
	e.add(r.Args...)
	if r.Flags&request.FlagDB != 0 {
		e.add(wDB)
		e.int(r.Amount)
	}
	if r.Flags&request.FlagReplace != 0 {
		e.add(wReplace)
	}
}

func encodeScan(e *Encoder, r *request.Request) {
	start := len(e.num)
	e.num = strconv.AppendUint(e.num, uint64(r.Amount), 10)
	e.words = append(e.words, e.num[start:len(e.num):len(e.num)])
	if r.Flags&request.FlagMatch != 0 {
		e.add(wMatch, r.Value)
	}
	if r.Amount2 > 0 {
		e.add(wCount)
		e.int(r.Amount2)
	}
	if r.Flags&request.FlagType != 0 && len(r.Args) > 0 {
		e.add(wType, r.Args[0])
	}
}

func encodeRestore(e *Encoder, r *request.Request) {
	e.add(r.Key)
	e.int(r.Expire)
	e.add(r.Value)
	if r.Flags&request.FlagReplace != 0 {
		e.add(wReplace)
	}
	if r.Expiry == request.ExpiryPXAT {
		e.add(wAbsTTL)
	}
}

func encodeSet(e *Encoder, r *request.Request) {
	e.add(r.Key, r.Value)
	for _, fw := range [...]struct {
		f request.Flags
		w []byte
	}{{request.FlagNX, wNX}, {request.FlagXX, wXX}, {request.FlagKeepTTL, wKeepTTL}, {request.FlagGet, wGet}} {
		if r.Flags&fw.f != 0 {
			e.add(fw.w)
		}
	}
	if r.Expiry != request.ExpiryNone && int(r.Expiry) < len(expiryWords) {
		e.add(expiryWords[r.Expiry])
		e.int(r.Expire)
	}
}

func encodeExpire(e *Encoder, r *request.Request) {
	e.add(r.Key)
	e.int(r.Amount)
	for _, fw := range expireFlagWords {
		if r.Flags&fw.f != 0 {
			e.add(fw.w)
		}
	}
}

func encodeAuth(e *Encoder, r *request.Request) {
	if len(r.Key) > 0 {
		e.add(r.Key)
	}
	e.add(r.Value)
}

func encodeCommandList(e *Encoder, r *request.Request) {
	if r.Amount > 0 && int(r.Amount) < len(listFilterWords) {
		e.add(wFilterBy, listFilterWords[r.Amount], r.Value)
	}
}

func encodeHello(e *Encoder, r *request.Request) {
	if r.Amount == 0 {
		return
	}
	e.int(r.Amount)
	if r.Flags&request.FlagHelloAuth != 0 {
		e.add(wAuth, r.Key, r.Value)
	}
	if r.Flags&request.FlagHelloSetName != 0 && len(r.Args) > 0 {
		e.add(wSetName, r.Args[0])
	}
}

var (
	wBit, wIdx, wLen, wMinMatchLen, wWithMatchLen = word("BIT"), word("IDX"), word("LEN"), word("MINMATCHLEN"), word("WITHMATCHLEN")
	bitOpWords                                    = [...][]byte{word("AND"), word("OR"), word("XOR"), word("NOT")}
	bitKindWords                                  = [...][]byte{word("GET"), word("SET"), word("INCRBY")}
	overflowWords                                 = [...][]byte{word("WRAP"), word("SAT"), word("FAIL")}
	wOverflow                                     = word("OVERFLOW")
)

// text adds a word formatted into e.num.
func (e *Encoder) text(f func([]byte) []byte) {
	start := len(e.num)
	e.num = f(e.num)
	e.words = append(e.words, e.num[start:len(e.num):len(e.num)])
}

func encodeBitCount(e *Encoder, r *request.Request) {
	e.add(r.Key)
	if r.Flags&request.FlagStart != 0 {
		e.int(r.Amount)
		e.int(r.Amount2)
		if r.Flags&request.FlagBit != 0 {
			e.add(wBit)
		}
	}
}

func encodeBitPos(e *Encoder, r *request.Request) {
	e.add(r.Key)
	e.int(b2i(r.Flags&request.FlagOne != 0))
	if r.Flags&request.FlagStart == 0 {
		return
	}
	e.int(r.Amount)
	if r.Flags&request.FlagEnd != 0 {
		e.int(r.Amount2)
		if r.Flags&request.FlagBit != 0 {
			e.add(wBit)
		}
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func encodeBitOp(e *Encoder, r *request.Request) {
	if r.Amount >= 0 && int(r.Amount) < len(bitOpWords) {
		e.add(bitOpWords[r.Amount])
	}
	e.add(r.Key)
	e.add(r.Args...)
}

func encodeBitField(e *Encoder, r *request.Request) {
	e.add(r.Key)
	overflow := uint8(request.BitWrap)
	for _, rec := range r.Args {
		op, ok := request.ParseBitFieldOp(rec)
		if !ok {
			continue
		}
		if op.Overflow != overflow {
			e.add(wOverflow, overflowWords[op.Overflow])
			overflow = op.Overflow
		}
		e.add(bitKindWords[op.Kind])
		e.text(func(b []byte) []byte {
			if op.Signed {
				b = append(b, 'i')
			} else {
				b = append(b, 'u')
			}
			return strconv.AppendUint(b, uint64(op.Bits), 10)
		})
		e.text(func(b []byte) []byte { return strconv.AppendUint(b, op.Offset, 10) })
		if op.Kind != request.BitGet {
			e.int(op.Value)
		}
	}
}

func encodeLCS(e *Encoder, r *request.Request) {
	e.add(r.Key)
	e.add(r.Args...)
	if r.Flags&request.FlagLen != 0 {
		e.add(wLen)
	}
	if r.Flags&request.FlagIdx != 0 {
		e.add(wIdx)
	}
	if r.Amount > 0 {
		e.add(wMinMatchLen)
		e.int(r.Amount)
	}
	if r.Flags&request.FlagWithMatchLen != 0 {
		e.add(wWithMatchLen)
	}
}

var (
	wOn, wOff, wSkip, wWrite = word("ON"), word("OFF"), word("SKIP"), word("WRITE")
	wTypeList, wID           = word("TYPE"), word("ID")
	wLibraryName             = word("LIBRARYNAME")
	onOffWords               = [...][]byte{wOff, wOn}
	replyWords               = [...][]byte{wOn, wOff, wSkip}
)

func encodeOnOff(e *Encoder, r *request.Request) {
	if r.Amount == 0 || r.Amount == 1 {
		e.add(onOffWords[r.Amount])
	}
}

func encodeClientList(e *Encoder, r *request.Request) {
	if len(r.Value) > 0 {
		e.add(wTypeList, r.Value)
		return
	}
	if len(r.Args) > 0 {
		e.add(wID)
		for _, id := range r.Args {
			if len(id) == 8 {
				e.int(int64(binary.LittleEndian.Uint64(id)))
			}
		}
	}
}

func encodeClientKill(e *Encoder, r *request.Request) {
	if r.Flags&request.FlagKillAddr != 0 {
		e.add(r.Value)
		return
	}
	e.add(r.Args...)
}

func encodeClientPause(e *Encoder, r *request.Request) {
	e.int(r.Amount)
	if r.Flags&request.FlagPauseWrite != 0 {
		e.add(wWrite)
	}
}

func encodeClientReply(e *Encoder, r *request.Request) {
	if r.Amount >= 0 && int(r.Amount) < len(replyWords) {
		e.add(replyWords[r.Amount])
	}
}

func encodeClientTracking(e *Encoder, r *request.Request) {
	encodeOnOff(e, r)
	e.add(r.Args...)
}

func encodeFunctionList(e *Encoder, r *request.Request) {
	if len(r.Value) > 0 {
		e.add(wLibraryName, r.Value)
	}
}
