package command

import "github.com/goblin-kv/goblin/proto/sbe"

// Op is a command. The operations SBE carries share the schema's numbers
// (sbe.Op); the few that only RESP clients send (COMMAND, HELLO, CLIENT
// SETINFO) are numbered from 100.
type Op uint8

// The commands goblin answers.
const (
	OpNone          Op = 0
	OpPing             = Op(sbe.OpPing)
	OpEcho             = Op(sbe.OpEcho)
	OpGet              = Op(sbe.OpGet)
	OpSet              = Op(sbe.OpSet)
	OpDel              = Op(sbe.OpDel)
	OpExists           = Op(sbe.OpExists)
	OpExpire           = Op(sbe.OpExpire)
	OpPExpire          = Op(sbe.OpPExpire)
	OpTTL              = Op(sbe.OpTTL)
	OpPTTL             = Op(sbe.OpPTTL)
	OpPersist          = Op(sbe.OpPersist)
	OpIncr             = Op(sbe.OpIncr)
	OpIncrBy           = Op(sbe.OpIncrBy)
	OpDecr             = Op(sbe.OpDecr)
	OpDecrBy           = Op(sbe.OpDecrBy)
	OpMGet             = Op(sbe.OpMGet)
	OpMSet             = Op(sbe.OpMSet)
	OpType             = Op(sbe.OpType)
	OpDBSize           = Op(sbe.OpDBSize)
	OpFlushAll         = Op(sbe.OpFlushAll)
	OpFlushDB          = Op(sbe.OpFlushDB)
	OpInfo             = Op(sbe.OpInfo)
	OpAuth             = Op(sbe.OpAuth)
	OpSelect           = Op(sbe.OpSelect)
	OpQuit             = Op(sbe.OpQuit)
	OpConfigGet        = Op(sbe.OpConfigGet)
	OpClientSetName    = Op(sbe.OpClientSetName)
	OpClientGetName    = Op(sbe.OpClientGetName)
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

// String returns the command's Redis name in lower case ("get",
// "client|setname"), or "" for an unknown Op.
func (op Op) String() string {
	if int(op) < len(opNames) {
		return opNames[op]
	}
	return ""
}

// Request is one decoded command, the same value whichever protocol it
// arrived in. Byte slices point into the request's wire bytes and are valid
// only while the engine serves it.
type Request struct {
	Op            Op
	CorrelationID uint64    // SBE's correlation id; 0 for RESP
	Flags         sbe.Flags // SET's NX, XX, KEEPTTL, GET
	Expiry        sbe.Expiry
	Expire        int64 // SET's expiry, read per Expiry
	// Amount: EXPIRE seconds, PEXPIRE milliseconds, INCRBY/DECRBY delta,
	// SELECT index, HELLO protocol version (0 = none given).
	Amount int64
	Key    []byte
	Value  []byte
	// Args holds further arguments: PING's message, DEL/EXISTS/MGET's
	// further keys, MSET's further pairs, INFO's sections, CONFIG GET's
	// further patterns, HELLO's SETNAME name, CLIENT SETINFO's value.
	Args [][]byte
}
