package command

import "github.com/goblin-kv/goblin/proto/sbe"

// Op is a command: the schema's Op enum (sbe.Op), extended with the few
// operations only RESP clients send (COMMAND, HELLO, CLIENT SETINFO),
// numbered from 100 and never put on the SBE wire.
type Op = sbe.Op

// The commands goblin answers.
const (
	OpNone             = Op(0)
	OpPing             = sbe.OpPing
	OpEcho             = sbe.OpEcho
	OpGet              = sbe.OpGet
	OpSet              = sbe.OpSet
	OpDel              = sbe.OpDel
	OpExists           = sbe.OpExists
	OpExpire           = sbe.OpExpire
	OpPExpire          = sbe.OpPExpire
	OpTTL              = sbe.OpTTL
	OpPTTL             = sbe.OpPTTL
	OpPersist          = sbe.OpPersist
	OpIncr             = sbe.OpIncr
	OpIncrBy           = sbe.OpIncrBy
	OpDecr             = sbe.OpDecr
	OpDecrBy           = sbe.OpDecrBy
	OpMGet             = sbe.OpMGet
	OpMSet             = sbe.OpMSet
	OpType             = sbe.OpType
	OpDBSize           = sbe.OpDBSize
	OpFlushAll         = sbe.OpFlushAll
	OpFlushDB          = sbe.OpFlushDB
	OpInfo             = sbe.OpInfo
	OpAuth             = sbe.OpAuth
	OpSelect           = sbe.OpSelect
	OpQuit             = sbe.OpQuit
	OpConfigGet        = sbe.OpConfigGet
	OpClientSetName    = sbe.OpClientSetName
	OpClientGetName    = sbe.OpClientGetName
	OpCommand       Op = 100 // COMMAND (RESP only)
	OpCommandDocs   Op = 101 // COMMAND DOCS (RESP only)
	OpCommandCount  Op = 102 // COMMAND COUNT (RESP only)
	OpHello         Op = 103 // HELLO (RESP only)
	OpClientSetInfo Op = 104 // CLIENT SETINFO (RESP only)
	// NumOps bounds Op values; Stats.Commands is indexed by Op.
	NumOps = 128
)

var opNames = [NumOps]string{
	OpPing: "ping", OpEcho: "echo", OpGet: "get", OpSet: "set", OpDel: "del", OpExists: "exists",
	OpExpire: "expire", OpPExpire: "pexpire", OpTTL: "ttl", OpPTTL: "pttl", OpPersist: "persist",
	OpIncr: "incr", OpIncrBy: "incrby", OpDecr: "decr", OpDecrBy: "decrby", OpMGet: "mget",
	OpMSet: "mset", OpType: "type", OpDBSize: "dbsize", OpFlushAll: "flushall", OpFlushDB: "flushdb",
	OpInfo: "info", OpAuth: "auth", OpSelect: "select", OpQuit: "quit", OpConfigGet: "config|get",
	OpClientSetName: "client|setname", OpClientGetName: "client|getname", OpCommand: "command",
	OpCommandDocs: "command|docs", OpCommandCount: "command|count", OpHello: "hello",
	OpClientSetInfo: "client|setinfo",
}

// OpName returns the command's Redis name in lower case ("get",
// "client|setname"), or "" for an unknown Op.
func OpName(op Op) string {
	if int(op) < len(opNames) {
		return opNames[op]
	}
	return ""
}

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
