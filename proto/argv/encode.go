package argv

import (
	"encoding/binary"
	"errors"
	"strconv"
	"strings"

	"github.com/goblin-kv/goblin/command"
)

// Encoder writes requests in Redis command syntax, the inverse of
// Decoder: a client that builds a command.Request from typed arguments
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
func (e *Encoder) Words(r *command.Request) ([][]byte, error) {
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
	nameWords [command.NumOps][][]byte
	encoders  [command.NumOps]func(e *Encoder, r *command.Request)
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
	keyAndArgs         = func(e *Encoder, r *command.Request) { e.add(r.Key); e.add(r.Args...) }
	keyOnly            = func(e *Encoder, r *command.Request) { e.add(r.Key) }
	argsOnly           = func(e *Encoder, r *command.Request) { e.add(r.Args...) }
	valueOnly          = func(e *Encoder, r *command.Request) { e.add(r.Value) }
	keyAmount          = func(e *Encoder, r *command.Request) { e.add(r.Key); e.int(r.Amount) }
	amountOnly         = func(e *Encoder, r *command.Request) { e.int(r.Amount) }
	keyValueAndArgs    = func(e *Encoder, r *command.Request) { e.add(r.Key, r.Value); e.add(r.Args...) }
	expireFlagWords    = [...]struct {
		f command.Flags
		w []byte
	}{{command.FlagNX, wNX}, {command.FlagXX, wXX}, {command.FlagGT, wGT}, {command.FlagLT, wLT}}
)

func init() {
	for _, op := range command.All() {
		s := command.Lookup(op)
		if s.Dispatch {
			continue
		}
		for _, w := range strings.Split(s.Name, "|") {
			nameWords[op] = append(nameWords[op], []byte(strings.ToUpper(w)))
		}
	}
	for op, f := range map[command.Op]func(*Encoder, *command.Request){
		command.OpPing: argsOnly, command.OpEcho: valueOnly, command.OpGet: keyOnly, command.OpSet: encodeSet,
		command.OpDel: keyAndArgs, command.OpExists: keyAndArgs, command.OpMGet: keyAndArgs,
		command.OpExpire: encodeExpire, command.OpPExpire: encodeExpire, command.OpTTL: keyOnly,
		command.OpPTTL: keyOnly, command.OpPersist: keyOnly, command.OpIncr: keyOnly, command.OpDecr: keyOnly,
		command.OpType: keyOnly, command.OpIncrBy: keyAmount, command.OpDecrBy: keyAmount,
		command.OpMSet: keyValueAndArgs, command.OpInfo: argsOnly, command.OpAuth: encodeAuth,
		command.OpSelect: amountOnly, command.OpConfigGet: keyAndArgs, command.OpClientSetName: valueOnly,
		command.OpClientSetInfo: func(e *Encoder, r *command.Request) { e.add(r.Key, r.Value) },
		command.OpCommandDocs:   argsOnly, command.OpCommandInfo: argsOnly, command.OpCommandGetKeys: argsOnly,
		command.OpCommandGetKeysAndFlags: argsOnly, command.OpCommandList: encodeCommandList,
		command.OpHello: encodeHello,
		command.OpSetNX: keyValue2, command.OpGetSet: keyValue2, command.OpAppend: keyValue2,
		command.OpSetEX: encodeSetEx, command.OpPSetEX: encodeSetEx, command.OpGetDel: keyOnly,
		command.OpGetEX: encodeGetEx, command.OpStrLen: keyOnly, command.OpGetRange: keyTwoInts,
		command.OpSubstr: keyTwoInts, command.OpSetRange: func(e *Encoder, r *command.Request) { e.add(r.Key); e.int(r.Amount); e.add(r.Value) },
		command.OpIncrByFloat: keyValue2, command.OpMSetNX: keyValueAndArgs, command.OpUnlink: keyAndArgs,
		command.OpTouch: keyAndArgs, command.OpRename: keyAndArgs, command.OpRenameNX: keyAndArgs,
		command.OpCopy: encodeCopy, command.OpExpireAt: encodeExpire, command.OpPExpireAt: encodeExpire,
		command.OpExpireTime: keyOnly, command.OpPExpireTime: keyOnly, command.OpKeys: valueOnly,
		command.OpScan: encodeScan, command.OpObjectEncoding: keyOnly, command.OpObjectFreq: keyOnly,
		command.OpObjectIdleTime: keyOnly, command.OpObjectRefCount: keyOnly, command.OpMemoryUsage: keyOnly,
		command.OpDump: keyOnly, command.OpRestore: encodeRestore,
		command.OpSwapDB: func(e *Encoder, r *command.Request) { e.int(r.Amount); e.int(r.Amount2) },
		command.OpMove:   keyAmount,
		command.OpSetBit: keyTwoInts, command.OpGetBit: keyAmount, command.OpBitCount: encodeBitCount,
		command.OpBitPos: encodeBitPos, command.OpBitOp: encodeBitOp, command.OpBitField: encodeBitField,
		command.OpBitFieldRO: encodeBitField, command.OpLCS: encodeLCS, command.OpWatch: keyAndArgs,
		command.OpClientList: encodeClientList, command.OpClientKill: encodeClientKill,
		command.OpClientNoEvict: encodeOnOff, command.OpClientNoTouch: encodeOnOff,
		command.OpClientPause: encodeClientPause, command.OpClientReply: encodeClientReply,
		command.OpClientTracking: encodeClientTracking, command.OpClientCaching: valueOnly,
		command.OpClientUnblock: amountOnly, command.OpWait: func(e *Encoder, r *command.Request) { e.int(r.Amount); e.int(r.Amount2) },
		command.OpConfigSet: keyValueAndArgs, command.OpFunctionList: encodeFunctionList,
		// Replica side of replication.
		command.OpReplicaOf: argsOnly, command.OpSlaveOf: argsOnly,
		command.OpFailover: argsOnly, command.OpDebug: argsOnly,
	} {
		encoders[op] = f
	}
	for _, op := range []command.Op{command.OpACLCat, command.OpACLDelUser, command.OpACLDryRun,
		command.OpACLGenPass, command.OpACLGetUser, command.OpACLLog, command.OpACLSetUser, command.OpSlowLogGet} {
		encoders[op] = argsOnly
	}
	// Pub/Sub.
	for _, op := range []command.Op{command.OpSubscribe, command.OpUnsubscribe, command.OpPSubscribe,
		command.OpPUnsubscribe, command.OpPubSubChannels, command.OpPubSubNumSub,
		command.OpPubSubShardChannels, command.OpPubSubShardNumSub} {
		encoders[op] = argsOnly
	}
	encoders[command.OpPublish], encoders[command.OpSPublish] = keyValue2, keyValue2
	for _, op := range []command.Op{command.OpSSubscribe, command.OpSUnsubscribe} {
		encoders[op] = func(e *Encoder, r *command.Request) {
			if r.Key != nil {
				e.add(r.Key)
			}
			e.add(r.Args...)
		}
	}
	// LATENCY: the words after the subcommand's name.
	for _, op := range []command.Op{command.OpLatencyGraph, command.OpLatencyHistogram, command.OpLatencyHistory, command.OpLatencyReset} {
		encoders[op] = argsOnly
	}
}

var (
	wPersist, wReplace, wDB, wAbsTTL = word("PERSIST"), word("REPLACE"), word("DB"), word("ABSTTL")
	wIdleTime, wFreq                 = word("IDLETIME"), word("FREQ")
	wNotInteger                      = word("not-an-integer") // RESTORE's ttl when it was not one
	wMatch, wCount, wType            = word("MATCH"), word("COUNT"), word("TYPE")
	keyValue2                        = func(e *Encoder, r *command.Request) { e.add(r.Key, r.Value) }
	keyTwoInts                       = func(e *Encoder, r *command.Request) { e.add(r.Key); e.int(r.Amount); e.int(r.Amount2) }
)

func encodeSetEx(e *Encoder, r *command.Request) {
	e.add(r.Key)
	if r.Expire == RestoreTTLNotInteger {
		e.add(wNotInteger)
	} else {
		e.int(r.Expire)
	}
	e.add(r.Value)
}

func encodeGetEx(e *Encoder, r *command.Request) {
	e.add(r.Key)
	switch {
	case r.Expiry == command.ExpiryPersist:
		e.add(wPersist)
	case r.Expiry != command.ExpiryNone && int(r.Expiry) < len(expiryWords):
		e.add(expiryWords[r.Expiry])
		e.int(r.Expire)
	}
}

func encodeCopy(e *Encoder, r *command.Request) {
	e.add(r.Key)
	e.add(r.Args...)
	if r.Flags&command.FlagDB != 0 {
		e.add(wDB)
		e.int(r.Amount)
	}
	if r.Flags&command.FlagReplace != 0 {
		e.add(wReplace)
	}
}

func encodeScan(e *Encoder, r *command.Request) {
	start := len(e.num)
	e.num = strconv.AppendUint(e.num, uint64(r.Amount), 10)
	e.words = append(e.words, e.num[start:len(e.num):len(e.num)])
	if r.Flags&command.FlagMatch != 0 {
		e.add(wMatch, r.Value)
	}
	if r.Amount2 > 0 {
		e.add(wCount)
		e.int(r.Amount2)
	}
	if r.Flags&command.FlagType != 0 && len(r.Args) > 0 {
		e.add(wType, r.Args[0])
	}
}

func encodeRestore(e *Encoder, r *command.Request) {
	e.add(r.Key)
	e.int(r.Expire)
	e.add(r.Value)
	if r.Flags&command.FlagReplace != 0 {
		e.add(wReplace)
	}
	if r.Expiry == command.ExpiryPXAT {
		e.add(wAbsTTL)
	}
	if r.Flags&command.FlagIdle != 0 {
		e.add(wIdleTime)
		e.int(r.Amount)
	}
	if r.Flags&command.FlagFreq != 0 {
		e.add(wFreq)
		e.int(r.Amount)
	}
}

func encodeSet(e *Encoder, r *command.Request) {
	e.add(r.Key, r.Value)
	for _, fw := range [...]struct {
		f command.Flags
		w []byte
	}{{command.FlagNX, wNX}, {command.FlagXX, wXX}, {command.FlagKeepTTL, wKeepTTL}, {command.FlagGet, wGet}} {
		if r.Flags&fw.f != 0 {
			e.add(fw.w)
		}
	}
	if r.Expiry != command.ExpiryNone && int(r.Expiry) < len(expiryWords) {
		e.add(expiryWords[r.Expiry])
		e.int(r.Expire)
	}
}

func encodeExpire(e *Encoder, r *command.Request) {
	e.add(r.Key)
	e.int(r.Amount)
	for _, fw := range expireFlagWords {
		if r.Flags&fw.f != 0 {
			e.add(fw.w)
		}
	}
}

func encodeAuth(e *Encoder, r *command.Request) {
	if len(r.Key) > 0 {
		e.add(r.Key)
	}
	e.add(r.Value)
}

func encodeCommandList(e *Encoder, r *command.Request) {
	if r.Amount > 0 && int(r.Amount) < len(listFilterWords) {
		e.add(wFilterBy, listFilterWords[r.Amount], r.Value)
	}
}

func encodeHello(e *Encoder, r *command.Request) {
	if r.Amount == 0 {
		return
	}
	e.int(r.Amount)
	if r.Flags&command.FlagHelloAuth != 0 {
		e.add(wAuth, r.Key, r.Value)
	}
	if r.Flags&command.FlagHelloSetName != 0 && len(r.Args) > 0 {
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

func encodeBitCount(e *Encoder, r *command.Request) {
	e.add(r.Key)
	if r.Flags&command.FlagStart != 0 {
		e.int(r.Amount)
		e.int(r.Amount2)
		if r.Flags&command.FlagBit != 0 {
			e.add(wBit)
		}
	}
}

func encodeBitPos(e *Encoder, r *command.Request) {
	e.add(r.Key)
	e.int(b2i(r.Flags&command.FlagOne != 0))
	if r.Flags&command.FlagStart == 0 {
		return
	}
	e.int(r.Amount)
	if r.Flags&command.FlagEnd != 0 {
		e.int(r.Amount2)
		if r.Flags&command.FlagBit != 0 {
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

func encodeBitOp(e *Encoder, r *command.Request) {
	if r.Amount >= 0 && int(r.Amount) < len(bitOpWords) {
		e.add(bitOpWords[r.Amount])
	}
	e.add(r.Key)
	e.add(r.Args...)
}

func encodeBitField(e *Encoder, r *command.Request) {
	e.add(r.Key)
	overflow := uint8(command.BitWrap)
	for _, rec := range r.Args {
		op, ok := command.ParseBitFieldOp(rec)
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
		if op.Kind != command.BitGet {
			e.int(op.Value)
		}
	}
}

func encodeLCS(e *Encoder, r *command.Request) {
	e.add(r.Key)
	e.add(r.Args...)
	if r.Flags&command.FlagLen != 0 {
		e.add(wLen)
	}
	if r.Flags&command.FlagIdx != 0 {
		e.add(wIdx)
	}
	if r.Amount > 0 {
		e.add(wMinMatchLen)
		e.int(r.Amount)
	}
	if r.Flags&command.FlagWithMatchLen != 0 {
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

func encodeOnOff(e *Encoder, r *command.Request) {
	if r.Amount == 0 || r.Amount == 1 {
		e.add(onOffWords[r.Amount])
	}
}

func encodeClientList(e *Encoder, r *command.Request) {
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

func encodeClientKill(e *Encoder, r *command.Request) {
	if r.Flags&command.FlagKillAddr != 0 {
		e.add(r.Value)
		return
	}
	e.add(r.Args...)
}

func encodeClientPause(e *Encoder, r *command.Request) {
	e.int(r.Amount)
	if r.Flags&command.FlagPauseWrite != 0 {
		e.add(wWrite)
	}
}

func encodeClientReply(e *Encoder, r *command.Request) {
	if r.Amount >= 0 && int(r.Amount) < len(replyWords) {
		e.add(replyWords[r.Amount])
	}
}

func encodeClientTracking(e *Encoder, r *command.Request) {
	encodeOnOff(e, r)
	e.add(r.Args...)
}

func encodeFunctionList(e *Encoder, r *command.Request) {
	if len(r.Value) > 0 {
		e.add(wLibraryName, r.Value)
	}
}

// The collection commands whose decoder puts the key in Key and the rest
// in Args (parsers' keys): written back the same way, so the client's
// typed collection calls travel over RESP as over SBE. The keynum
// commands (ZUNION, ZMPOP, BLMPOP...) keep their own argument order and
// have no encoder: Do sends them as given.
func init() {
	for op := command.OpHSet; op <= command.OpRPopLPush; op++ {
		if command.Lookup(op) != nil {
			encoders[op] = keyAndArgs
		}
	}
	for op := command.OpZAdd; op <= command.OpLMPop; op++ {
		if command.Lookup(op) != nil {
			encoders[op] = keyAndArgs
		}
	}
	for _, op := range []command.Op{command.OpZUnion, command.OpZInter, command.OpZDiff, command.OpZInterCard,
		command.OpZUnionStore, command.OpZInterStore, command.OpZDiffStore, command.OpSInterCard,
		command.OpZMPop, command.OpLMPop} {
		nameWords[op] = nil
	}
	encoders[command.OpSort], encoders[command.OpSortRO] = keyAndArgs, keyAndArgs
	// The blocking pops whose decoder reads the keys then the rest
	// (timeout last) the same way.
	for _, op := range []command.Op{command.OpBLPop, command.OpBRPop, command.OpBLMove,
		command.OpBRPopLPush, command.OpBZPopMin, command.OpBZPopMax} {
		encoders[op] = keyAndArgs
	}
}
