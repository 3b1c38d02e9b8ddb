package command

import (
	"github.com/goblin-kv/goblin/command/parse"
	"github.com/goblin-kv/goblin/proto/sbe"
)

// Op is a command: the schema's Op enum (sbe.Op), extended with the few
// operations only RESP clients send (COMMAND, HELLO, CLIENT SETINFO),
// numbered from 100 and never put on the SBE wire.
type Op = sbe.Op

// The commands goblin answers.
const (
	OpNone          = Op(0)
	OpPing          = sbe.OpPing
	OpEcho          = sbe.OpEcho
	OpGet           = sbe.OpGet
	OpSet           = sbe.OpSet
	OpDel           = sbe.OpDel
	OpExists        = sbe.OpExists
	OpExpire        = sbe.OpExpire
	OpPExpire       = sbe.OpPExpire
	OpTTL           = sbe.OpTTL
	OpPTTL          = sbe.OpPTTL
	OpPersist       = sbe.OpPersist
	OpIncr          = sbe.OpIncr
	OpIncrBy        = sbe.OpIncrBy
	OpDecr          = sbe.OpDecr
	OpDecrBy        = sbe.OpDecrBy
	OpMGet          = sbe.OpMGet
	OpMSet          = sbe.OpMSet
	OpType          = sbe.OpType
	OpDBSize        = sbe.OpDBSize
	OpFlushAll      = sbe.OpFlushAll
	OpFlushDB       = sbe.OpFlushDB
	OpInfo          = sbe.OpInfo
	OpAuth          = sbe.OpAuth
	OpSelect        = sbe.OpSelect
	OpQuit          = sbe.OpQuit
	OpConfigGet     = sbe.OpConfigGet
	OpClientSetName = sbe.OpClientSetName
	OpClientGetName = sbe.OpClientGetName
	OpCommand       = parse.OpCommand       // COMMAND (RESP only)
	OpCommandDocs   = parse.OpCommandDocs   // COMMAND DOCS (RESP only)
	OpCommandCount  = parse.OpCommandCount  // COMMAND COUNT (RESP only)
	OpHello         = parse.OpHello         // HELLO (RESP only)
	OpClientSetInfo = parse.OpClientSetInfo // CLIENT SETINFO (RESP only)
	// NumOps bounds Op values; Stats.Commands is indexed by Op.
	NumOps = parse.NumOps
)

// OpName returns the command's Redis name in lower case ("get",
// "client|setname"), or "" for an unknown Op.
func OpName(op Op) string { return parse.OpName(op) }

// Request is one decoded command, the same value whichever protocol it
// arrived in: the shape of the schema's Request, which was designed as
// goblin's protocol-neutral command (operation, correlation id, SET flags
// and expiry, an integer amount, key, value, further arguments). RESP
// commands decode into it as SBE messages do, so execution has one input
// type. Byte slices point into the request's wire bytes and are valid only
// while the engine serves it. For RESP-only commands: HELLO's protocol
// version is in Amount, its AUTH user and password in Key and Value and its
// SETNAME name in Args; CLIENT SETINFO's attribute and value in Key and
// Value.
type Request = sbe.Request
