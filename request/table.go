package request

// The operations. The numbers are the SBE schema's Op values and never
// change: new commands are appended. Ops up to OpClientGetName exist since
// schema version 0; the rest since version 2.
const (
	OpNone                   Op = 0
	OpPing                   Op = 1
	OpEcho                   Op = 2
	OpGet                    Op = 3
	OpSet                    Op = 4
	OpDel                    Op = 5
	OpExists                 Op = 6
	OpExpire                 Op = 7
	OpPExpire                Op = 8
	OpTTL                    Op = 9
	OpPTTL                   Op = 10
	OpPersist                Op = 11
	OpIncr                   Op = 12
	OpIncrBy                 Op = 13
	OpDecr                   Op = 14
	OpDecrBy                 Op = 15
	OpMGet                   Op = 16
	OpMSet                   Op = 17
	OpType                   Op = 18
	OpDBSize                 Op = 19
	OpFlushAll               Op = 20
	OpFlushDB                Op = 21
	OpInfo                   Op = 22
	OpAuth                   Op = 23
	OpSelect                 Op = 24
	OpQuit                   Op = 25
	OpConfigGet              Op = 26
	OpClientSetName          Op = 27
	OpClientGetName          Op = 28
	OpCommand                Op = 29
	OpCommandCount           Op = 30
	OpCommandDocs            Op = 31
	OpCommandInfo            Op = 32
	OpCommandList            Op = 33
	OpCommandGetKeys         Op = 34
	OpCommandGetKeysAndFlags Op = 35
	OpCommandHelp            Op = 36
	OpHello                  Op = 37
	OpClient                 Op = 38 // container: CLIENT <subcommand>
	OpClientSetInfo          Op = 39
	OpConfig                 Op = 40 // container: CONFIG <subcommand>
)

// Key specs of the common shapes.
var (
	key1RO       = []KeySpec{{Flags: KeyRO, Index: 1, KeyStep: 1}}
	key1ROAccess = []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, KeyStep: 1}}
	key1RWUpdate = []KeySpec{{Flags: KeyRW | KeyUpdate, Index: 1, KeyStep: 1}}
	key1RWAU     = []KeySpec{{Flags: KeyRW | KeyAccess | KeyUpdate, Index: 1, KeyStep: 1}}
)

const (
	tipsMultiSum  = "request_policy:multi_shard response_policy:agg_sum"
	tipsAllShards = "request_policy:all_shards response_policy:all_succeeded"
)

// specs is the command table, indexed by Op. Name, arity, flags, ACL
// categories, tips and key specs are Redis 7.0's for the same command (the
// oracle test compares COMMAND INFO with a real redis-server); syntax and
// summary are goblin's.
var specs = [NumOps]Spec{
	OpPing: {Name: "ping", Arity: -1, Flags: Fast, ACL: CatFast | CatConnection, Tips: tipsAllShards,
		Group: "connection", Since: "1.0.0", Complexity: "O(1)", Syntax: "[message]",
		Summary: "Check the server answers: PONG, or the message back."},
	OpEcho: {Name: "echo", Arity: 2, Flags: Loading | Stale | Fast, ACL: CatFast | CatConnection,
		Group: "connection", Since: "1.0.0", Complexity: "O(1)", Syntax: "message",
		Summary: "Return the message."},
	OpGet: {Name: "get", Arity: 2, Flags: Readonly | Fast, ACL: CatRead | CatString | CatFast, Keys: key1ROAccess,
		Group: "string", Since: "1.0.0", Complexity: "O(1)", Syntax: "key",
		Summary: "Return a key's value, or nil when the key is missing."},
	OpSet: {Name: "set", Arity: -3, Flags: Write | DenyOOM, ACL: CatWrite | CatString | CatSlow,
		Keys:  []KeySpec{{Flags: KeyRW | KeyAccess | KeyUpdate | KeyVariableFlags, Index: 1, KeyStep: 1}},
		Group: "string", Since: "1.0.0", Complexity: "O(1)",
		Syntax:  "key value [condition=NX|XX] [GET] [expiration=EX seconds|PX milliseconds|EXAT unix-time-seconds|PXAT unix-time-milliseconds|KEEPTTL]",
		Summary: "Store a value, optionally only if the key is missing (NX) or present (XX), with a time to live."},
	OpDel: {Name: "del", Arity: -2, Flags: Write, ACL: CatKeyspace | CatWrite | CatSlow, Tips: tipsMultiSum,
		Keys: []KeySpec{{Flags: KeyRM | KeyDelete, Index: 1, LastKey: -1, KeyStep: 1}}, ReqKeys: ArgRange{0, 1},
		Group: "generic", Since: "1.0.0", Complexity: "O(N) for N keys", Syntax: "key...",
		Summary: "Remove keys; returns how many existed."},
	OpExists: {Name: "exists", Arity: -2, Flags: Readonly | Fast, ACL: CatKeyspace | CatRead | CatFast, Tips: tipsMultiSum,
		Keys: []KeySpec{{Flags: KeyRO, Index: 1, LastKey: -1, KeyStep: 1}}, ReqKeys: ArgRange{0, 1},
		Group: "generic", Since: "1.0.0", Complexity: "O(N) for N keys", Syntax: "key...",
		Summary: "Count how many of the keys exist (a key named twice counts twice)."},
	OpExpire: {Name: "expire", Arity: -3, Flags: Write | Fast, ACL: CatKeyspace | CatWrite | CatFast, Keys: key1RWUpdate,
		Group: "generic", Since: "1.0.0", Complexity: "O(1)", Syntax: "key seconds [condition=NX|XX|GT|LT]",
		Summary: "Set a key's time to live in seconds."},
	OpPExpire: {Name: "pexpire", Arity: -3, Flags: Write | Fast, ACL: CatKeyspace | CatWrite | CatFast, Keys: key1RWUpdate,
		Group: "generic", Since: "2.6.0", Complexity: "O(1)", Syntax: "key milliseconds [condition=NX|XX|GT|LT]",
		Summary: "Set a key's time to live in milliseconds."},
	OpTTL: {Name: "ttl", Arity: 2, Flags: Readonly | Fast, ACL: CatKeyspace | CatRead | CatFast, Tips: "nondeterministic_output",
		Keys: key1ROAccess, Group: "generic", Since: "1.0.0", Complexity: "O(1)", Syntax: "key",
		Summary: "Seconds a key has left to live: -1 without an expiry, -2 when missing."},
	OpPTTL: {Name: "pttl", Arity: 2, Flags: Readonly | Fast, ACL: CatKeyspace | CatRead | CatFast, Tips: "nondeterministic_output",
		Keys: key1ROAccess, Group: "generic", Since: "2.6.0", Complexity: "O(1)", Syntax: "key",
		Summary: "Milliseconds a key has left to live: -1 without an expiry, -2 when missing."},
	OpPersist: {Name: "persist", Arity: 2, Flags: Write | Fast, ACL: CatKeyspace | CatWrite | CatFast, Keys: key1RWUpdate,
		Group: "generic", Since: "2.2.0", Complexity: "O(1)", Syntax: "key",
		Summary: "Remove a key's time to live."},
	OpIncr: {Name: "incr", Arity: 2, Flags: Write | DenyOOM | Fast, ACL: CatWrite | CatString | CatFast, Keys: key1RWAU,
		Group: "string", Since: "1.0.0", Complexity: "O(1)", Syntax: "key",
		Summary: "Add one to the integer stored at a key (0 when missing)."},
	OpIncrBy: {Name: "incrby", Arity: 3, Flags: Write | DenyOOM | Fast, ACL: CatWrite | CatString | CatFast, Keys: key1RWAU,
		Group: "string", Since: "1.0.0", Complexity: "O(1)", Syntax: "key increment",
		Summary: "Add an integer to the integer stored at a key."},
	OpDecr: {Name: "decr", Arity: 2, Flags: Write | DenyOOM | Fast, ACL: CatWrite | CatString | CatFast, Keys: key1RWAU,
		Group: "string", Since: "1.0.0", Complexity: "O(1)", Syntax: "key",
		Summary: "Subtract one from the integer stored at a key."},
	OpDecrBy: {Name: "decrby", Arity: 3, Flags: Write | DenyOOM | Fast, ACL: CatWrite | CatString | CatFast, Keys: key1RWAU,
		Group: "string", Since: "1.0.0", Complexity: "O(1)", Syntax: "key decrement",
		Summary: "Subtract an integer from the integer stored at a key."},
	OpMGet: {Name: "mget", Arity: -2, Flags: Readonly | Fast, ACL: CatRead | CatString | CatFast, Tips: "request_policy:multi_shard",
		Keys: []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: -1, KeyStep: 1}}, ReqKeys: ArgRange{0, 1},
		Group: "string", Since: "1.0.0", Complexity: "O(N) for N keys", Syntax: "key...",
		Summary: "Return the values of several keys; nil for each missing one."},
	OpMSet: {Name: "mset", Arity: -3, Flags: Write | DenyOOM, ACL: CatWrite | CatString | CatSlow,
		Tips: "request_policy:multi_shard response_policy:all_succeeded",
		Keys: []KeySpec{{Flags: KeyOW | KeyUpdate, Index: 1, LastKey: -1, KeyStep: 2}}, ReqKeys: ArgRange{0, 2},
		Group: "string", Since: "1.0.1", Complexity: "O(N) for N keys", Syntax: "(data=key value)...",
		Summary: "Store several values at once."},
	OpType: {Name: "type", Arity: 2, Flags: Readonly | Fast, ACL: CatKeyspace | CatRead | CatFast, Keys: key1RO,
		Group: "generic", Since: "1.0.0", Complexity: "O(1)", Syntax: "key",
		Summary: "The type of a key's value: string, or none when missing."},
	OpDBSize: {Name: "dbsize", Arity: 1, Flags: Readonly | Fast, ACL: CatKeyspace | CatRead | CatFast,
		Tips:  "request_policy:all_shards response_policy:agg_sum",
		Group: "server", Since: "1.0.0", Complexity: "O(1)",
		Summary: "The number of keys in the selected database."},
	OpFlushAll: {Name: "flushall", Arity: -1, Flags: Write, ACL: CatKeyspace | CatWrite | CatSlow | CatDangerous, Tips: tipsAllShards,
		Group: "server", Since: "1.0.0", Complexity: "O(1): memory is released at once", Syntax: "[flush-type=ASYNC|SYNC]",
		Summary: "Remove every key of every database."},
	OpFlushDB: {Name: "flushdb", Arity: -1, Flags: Write, ACL: CatKeyspace | CatWrite | CatSlow | CatDangerous, Tips: tipsAllShards,
		Group: "server", Since: "1.0.0", Complexity: "O(1): memory is released at once", Syntax: "[flush-type=ASYNC|SYNC]",
		Summary: "Remove every key of the selected database."},
	OpInfo: {Name: "info", Arity: -1, Flags: Loading | Stale, ACL: CatSlow | CatDangerous,
		Tips:  "nondeterministic_output request_policy:all_shards response_policy:special",
		Group: "server", Since: "1.0.0", Complexity: "O(1)", Syntax: "[section...]",
		Summary: "Server information and statistics, by section."},
	OpAuth: {Name: "auth", Arity: -2, Flags: NoScript | Loading | Stale | Fast | NoAuth | AllowBusy, ACL: CatFast | CatConnection,
		Group: "connection", Since: "1.0.0", Complexity: "O(1)", Syntax: "[username] password",
		Summary: "Authenticate the connection."},
	OpSelect: {Name: "select", Arity: 2, Flags: Loading | Stale | Fast, ACL: CatFast | CatConnection,
		Group: "connection", Since: "1.0.0", Complexity: "O(1)", Syntax: "index",
		Summary: "Select the database the connection works in."},
	OpQuit: {Name: "quit", Arity: -1, Flags: NoScript | Loading | Stale | Fast | NoAuth | AllowBusy, ACL: CatFast | CatConnection,
		Group: "connection", Since: "1.0.0", Complexity: "O(1)",
		Summary: "Close the connection after answering OK."},
	OpConfig: {Name: "config", Arity: -2, ACL: CatSlow, Dispatch: true,
		Group: "server", Since: "2.0.0", Complexity: "Depends on subcommand.",
		Summary: "Read and change the server's configuration."},
	OpConfigGet: {Name: "config|get", Arity: -3, Flags: Admin | NoScript | Loading | Stale, ACL: CatAdmin | CatSlow | CatDangerous,
		Container: OpConfig, Group: "server", Since: "2.0.0", Complexity: "O(N) for N parameters", Syntax: "parameter...",
		Summary: "The configuration parameters whose names match the glob patterns, with their values."},
	OpClient: {Name: "client", Arity: -2, ACL: CatSlow, Dispatch: true,
		Group: "connection", Since: "2.4.0", Complexity: "Depends on subcommand.",
		Summary: "Inspect and change connections."},
	OpClientSetName: {Name: "client|setname", Arity: 3, Flags: NoScript | Loading | Stale, ACL: CatSlow | CatConnection,
		Container: OpClient, Group: "connection", Since: "2.6.9", Complexity: "O(1)", Syntax: "connection-name",
		Summary: "Name the connection (shown by CLIENT LIST)."},
	OpClientGetName: {Name: "client|getname", Arity: 2, Flags: NoScript | Loading | Stale, ACL: CatSlow | CatConnection,
		Container: OpClient, Group: "connection", Since: "2.6.9", Complexity: "O(1)",
		Summary: "The connection's name, or nil."},
	OpClientSetInfo: {Name: "client|setinfo", Arity: 4, Flags: NoScript | Loading | Stale, ACL: CatSlow | CatConnection,
		Container: OpClient, Group: "connection", Since: "7.2.0", Complexity: "O(1)",
		Syntax:  "(attr=LIB-NAME libname|LIB-VER libver)",
		Summary: "Record the client library's name or version (sent by Redis 7.2 clients)."},
	OpCommand: {Name: "command", Arity: -1, Flags: Loading | Stale, ACL: CatSlow | CatConnection, Tips: "nondeterministic_output_order",
		Group: "server", Since: "2.8.13", Complexity: "O(N) for N commands",
		Summary: "Every command's metadata (name, arity, flags, keys), as COMMAND INFO gives it."},
	OpCommandCount: {Name: "command|count", Arity: 2, Flags: Loading | Stale, ACL: CatSlow | CatConnection,
		Container: OpCommand, Group: "server", Since: "2.8.13", Complexity: "O(1)",
		Summary: "The number of commands the server answers."},
	OpCommandDocs: {Name: "command|docs", Arity: -2, Flags: Loading | Stale, ACL: CatSlow | CatConnection,
		Tips: "nondeterministic_output_order", Container: OpCommand, Group: "server", Since: "7.0.0",
		Complexity: "O(N) for N commands", Syntax: "[command-name...]",
		Summary: "Documentation of commands: summary, group, arguments (redis-cli builds its hints from it)."},
	OpCommandInfo: {Name: "command|info", Arity: -2, Flags: Loading | Stale, ACL: CatSlow | CatConnection,
		Tips: "nondeterministic_output_order", Container: OpCommand, Group: "server", Since: "2.8.13",
		Complexity: "O(N) for N commands", Syntax: "[command-name...]",
		Summary: "Metadata of the named commands, or of all."},
	OpCommandList: {Name: "command|list", Arity: -2, Flags: Loading | Stale, ACL: CatSlow | CatConnection,
		Tips: "nondeterministic_output_order", Container: OpCommand, Group: "server", Since: "7.0.0",
		Complexity: "O(N) for N commands", Syntax: "[filterby=FILTERBY (filter=MODULE module-name|ACLCAT category|PATTERN pattern)]",
		Summary: "The names of the commands, optionally filtered."},
	OpCommandGetKeys: {Name: "command|getkeys", Arity: -4, Flags: Loading | Stale, ACL: CatSlow | CatConnection,
		Container: OpCommand, Group: "server", Since: "2.8.13", Complexity: "O(N) for N arguments", Syntax: "command arg...",
		Summary: "The keys a full command would touch."},
	OpCommandGetKeysAndFlags: {Name: "command|getkeysandflags", Arity: -4, Flags: Loading | Stale, ACL: CatSlow | CatConnection,
		Container: OpCommand, Group: "server", Since: "7.0.0", Complexity: "O(N) for N arguments", Syntax: "command arg...",
		Summary: "The keys a full command would touch, with what it does to each."},
	OpCommandHelp: {Name: "command|help", Arity: 2, Flags: Loading | Stale, ACL: CatSlow | CatConnection,
		Container: OpCommand, Group: "server", Since: "5.0.0", Complexity: "O(1)",
		Summary: "The COMMAND subcommands."},
	OpHello: {Name: "hello", Arity: -1, Flags: NoScript | Loading | Stale | Fast | NoAuth | AllowBusy, ACL: CatFast | CatConnection,
		Group: "connection", Since: "6.0.0", Complexity: "O(1)",
		Syntax:  "[arguments=protover [auth=AUTH username password] [SETNAME clientname]]",
		Summary: "Choose RESP2 or RESP3, optionally authenticating and naming the connection; returns the server's details."},
}
