package command

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
	OpSetNX                  Op = 41
	OpSetEX                  Op = 42
	OpPSetEX                 Op = 43
	OpGetSet                 Op = 44
	OpGetDel                 Op = 45
	OpGetEX                  Op = 46
	OpAppend                 Op = 47
	OpStrLen                 Op = 48
	OpGetRange               Op = 49
	OpSubstr                 Op = 50
	OpSetRange               Op = 51
	OpIncrByFloat            Op = 52
	OpMSetNX                 Op = 53
	OpUnlink                 Op = 54
	OpTouch                  Op = 55
	OpRename                 Op = 56
	OpRenameNX               Op = 57
	OpCopy                   Op = 58
	OpRandomKey              Op = 59
	OpExpireAt               Op = 60
	OpPExpireAt              Op = 61
	OpExpireTime             Op = 62
	OpPExpireTime            Op = 63
	OpKeys                   Op = 64
	OpScan                   Op = 65
	OpObject                 Op = 66 // container: OBJECT <subcommand>
	OpObjectEncoding         Op = 67
	OpObjectFreq             Op = 68
	OpObjectIdleTime         Op = 69
	OpObjectRefCount         Op = 70
	OpObjectHelp             Op = 71
	OpMemory                 Op = 72 // container: MEMORY <subcommand>
	OpMemoryUsage            Op = 73
	OpMemoryHelp             Op = 74
	OpMemoryDoctor           Op = 75
	OpMemoryStats            Op = 76
	OpMemoryMallocStats      Op = 77
	OpMemoryPurge            Op = 78
	OpDump                   Op = 79
	OpRestore                Op = 80
	OpSwapDB                 Op = 81
	OpMove                   Op = 82
	OpSetBit                 Op = 83
	OpGetBit                 Op = 84
	OpBitCount               Op = 85
	OpBitPos                 Op = 86
	OpBitOp                  Op = 87
	OpBitField               Op = 88
	OpBitFieldRO             Op = 89
	OpLCS                    Op = 90
	OpMulti                  Op = 91
	OpExec                   Op = 92
	OpDiscard                Op = 93
	OpWatch                  Op = 94
	OpUnwatch                Op = 95
	OpReset                  Op = 96
	OpClientID               Op = 97
	OpClientInfo             Op = 98
	OpClientList             Op = 99
	OpClientKill             Op = 100
	OpClientNoEvict          Op = 101
	OpClientNoTouch          Op = 102
	OpClientPause            Op = 103
	OpClientUnpause          Op = 104
	OpClientReply            Op = 105
	OpClientHelp             Op = 106
	OpClientGetRedir         Op = 107
	OpClientTrackingInfo     Op = 108
	OpClientTracking         Op = 109
	OpClientCaching          Op = 110
	OpClientUnblock          Op = 111
	OpTime                   Op = 112
	OpLastSave               Op = 113
	OpWait                   Op = 114
	OpConfigSet              Op = 115
	OpConfigResetStat        Op = 116
	OpConfigRewrite          Op = 117
	OpConfigHelp             Op = 118
	OpFunction               Op = 119 // container: FUNCTION <subcommand>
	OpFunctionFlush          Op = 120
	OpFunctionList           Op = 121
	OpFunctionHelp           Op = 122
	OpMonitor                Op = 123
	// Cluster mode (--cluster-config): RESP only, not in the SBE schema.
	OpCluster                    Op = 124 // container: CLUSTER <subcommand>
	OpClusterSlots               Op = 125
	OpClusterShards              Op = 126
	OpClusterNodes               Op = 127
	OpClusterMyID                Op = 128
	OpClusterMyShardID           Op = 129
	OpClusterInfo                Op = 130
	OpClusterKeySlot             Op = 131
	OpClusterCountKeysInSlot     Op = 132
	OpClusterGetKeysInSlot       Op = 133
	OpClusterCountFailureReports Op = 134
	OpClusterSetSlot             Op = 135
	OpClusterHelp                Op = 136
	OpClusterSaveConfig          Op = 137
	OpClusterReload              Op = 138
	OpClusterAddSlots            Op = 139
	OpClusterAddSlotsRange       Op = 140
	OpClusterDelSlots            Op = 141
	OpClusterMeet                Op = 142
	OpClusterForget              Op = 143
	OpClusterReplicate           Op = 144
	OpClusterFailover            Op = 145
	OpClusterReset               Op = 146
	OpAsking                     Op = 147
	OpReadOnly                   Op = 148
	OpReadWrite                  Op = 149
	OpMigrate                    Op = 150
	OpRestoreAsking              Op = 151
	OpClusterTargets             Op = 152
	// The cluster bus's own CLUSTER subcommands (700-739, --cluster-enabled).
	OpClusterDelSlotsRange  Op = 700
	OpClusterFlushSlots     Op = 701
	OpClusterSetConfigEpoch Op = 702
	OpClusterBumpEpoch      Op = 703
	OpClusterLinks          Op = 704
	OpClusterReplicas       Op = 705
	OpClusterSlaves         Op = 706
	// ACL and SLOWLOG (operations, 410-449): RESP only, above sbe.MaxOp.
	OpACL          Op = 410 // container: ACL <subcommand>
	OpACLCat       Op = 411
	OpACLDelUser   Op = 412
	OpACLDryRun    Op = 413
	OpACLGenPass   Op = 414
	OpACLGetUser   Op = 415
	OpACLList      Op = 416
	OpACLLoad      Op = 417
	OpACLLog       Op = 418
	OpACLSave      Op = 419
	OpACLSetUser   Op = 420
	OpACLUsers     Op = 421
	OpACLWhoAmI    Op = 422
	OpACLHelp      Op = 423
	OpSlowLog      Op = 424 // container: SLOWLOG <subcommand>
	OpSlowLogGet   Op = 425
	OpSlowLogLen   Op = 426
	OpSlowLogReset Op = 427
	OpSlowLogHelp  Op = 428
	// LATENCY (operations, 610-639): RESP only.
	OpLatency          Op = 610 // container: LATENCY <subcommand>
	OpLatencyDoctor    Op = 611
	OpLatencyGraph     Op = 612
	OpLatencyHistogram Op = 613
	OpLatencyHistory   Op = 614
	OpLatencyLatest    Op = 615
	OpLatencyReset     Op = 616
	OpLatencyHelp      Op = 617
	// Hashes, sets and lists. Values 256 and up are past the SBE schema's
	// one-byte op (proto/sbe's MaxOp): since schema version 3 they travel
	// in MultiRequest's wideOp (sbe.Encodable, docs/protocols.md).
	OpHSet         Op = 256
	OpHSetNX       Op = 257
	OpHMSet        Op = 258
	OpHGet         Op = 259
	OpHMGet        Op = 260
	OpHGetAll      Op = 261
	OpHDel         Op = 262
	OpHExists      Op = 263
	OpHLen         Op = 264
	OpHStrLen      Op = 265
	OpHKeys        Op = 266
	OpHVals        Op = 267
	OpHIncrBy      Op = 268
	OpHIncrByFloat Op = 269
	OpHRandField   Op = 270
	OpHScan        Op = 271
	OpSAdd         Op = 272
	OpSRem         Op = 273
	OpSCard        Op = 274
	OpSIsMember    Op = 275
	OpSMIsMember   Op = 276
	OpSMembers     Op = 277
	OpSRandMember  Op = 278
	OpSPop         Op = 279
	OpSMove        Op = 280
	OpSInter       Op = 281
	OpSInterStore  Op = 283
	OpSUnion       Op = 284
	OpSUnionStore  Op = 285
	OpSDiff        Op = 286
	OpSDiffStore   Op = 287
	OpSScan        Op = 288
	OpLPush        Op = 289
	OpRPush        Op = 290
	OpLPushX       Op = 291
	OpRPushX       Op = 292
	OpLPop         Op = 293
	OpRPop         Op = 294
	OpLLen         Op = 295
	OpLIndex       Op = 296
	OpLSet         Op = 297
	OpLRange       Op = 298
	OpLTrim        Op = 299
	OpLRem         Op = 300
	OpLInsert      Op = 301
	OpLPos         Op = 302
	OpLMove        Op = 303
	OpRPopLPush    Op = 304
	// Persistence (400-409): RESP only, above sbe.MaxOp.
	OpSave     Op = 400
	OpBgSave   Op = 401
	OpShutdown Op = 402
	// Pub/Sub (560-579): RESP only, above sbe.MaxOp (the subscriber's
	// messages come out of turn, which only a socket carries).
	OpSubscribe           Op = 560
	OpUnsubscribe         Op = 561
	OpPSubscribe          Op = 562
	OpPUnsubscribe        Op = 563
	OpPublish             Op = 564
	OpPubSub              Op = 565 // container: PUBSUB <subcommand>
	OpPubSubChannels      Op = 566
	OpPubSubNumSub        Op = 567
	OpPubSubNumPat        Op = 568
	OpPubSubShardChannels Op = 569
	OpPubSubShardNumSub   Op = 570
	OpPubSubHelp          Op = 571
	OpSSubscribe          Op = 572
	OpSUnsubscribe        Op = 573
	OpSPublish            Op = 574
	// Replication, primary side (580-599): RESP only, above sbe.MaxOp.
	OpSync     Op = 580
	OpPSync    Op = 581
	OpReplConf Op = 582
	OpRole     Op = 583
	// Replica side of replication (600-609): RESP only. ROLE is above
	// (583), one command whichever side this node is on.
	OpReplicaOf Op = 600
	OpSlaveOf   Op = 601
	// Sentinel compatibility (660-679): RESP only.
	OpScript     Op = 660 // container: SCRIPT <subcommand>
	OpScriptKill Op = 661
	OpScriptHelp Op = 662
	// Sorted sets, and the keynum commands of sets and lists (500-559):
	// RESP only, above sbe.MaxOp.
	OpZAdd             Op = 500
	OpZIncrBy          Op = 501
	OpZCard            Op = 502
	OpZCount           Op = 503
	OpZLexCount        Op = 504
	OpZScore           Op = 505
	OpZMScore          Op = 506
	OpZRank            Op = 507
	OpZRevRank         Op = 508
	OpZRange           Op = 509
	OpZRangeByScore    Op = 510
	OpZRevRangeByScore Op = 511
	OpZRangeByLex      Op = 512
	OpZRevRangeByLex   Op = 513
	OpZRevRange        Op = 514
	OpZRangeStore      Op = 515
	OpZRem             Op = 516
	OpZRemRangeByRank  Op = 517
	OpZRemRangeByScore Op = 518
	OpZRemRangeByLex   Op = 519
	OpZPopMin          Op = 520
	OpZPopMax          Op = 521
	OpZRandMember      Op = 522
	OpZScan            Op = 523
	OpZUnion           Op = 524
	OpZInter           Op = 525
	OpZDiff            Op = 526
	OpZUnionStore      Op = 527
	OpZInterStore      Op = 528
	OpZDiffStore       Op = 529
	OpZInterCard       Op = 530
	OpZMPop            Op = 531
	OpSInterCard       Op = 532
	OpLMPop            Op = 533

	// The blocking pops of lists and sorted sets (640-659): RESP only.
	OpBLPop      Op = 640
	OpBRPop      Op = 641
	OpBLMove     Op = 642
	OpBRPopLPush Op = 643
	OpBLMPop     Op = 644
	OpBZPopMin   Op = 645
	OpBZPopMax   Op = 646
	OpBZMPop     Op = 647

	// SORT (770-789): RESP only.
	OpSort   Op = 770
	OpSortRO Op = 771

	// Coordinated failover (730-739): RESP only.
	OpFailover Op = 730
)

// The operator's kit (750–759).
const (
	OpDebug Op = 750 // DEBUG OBJECT only (engine/cmd_debug.go)
)

// Key specs of the common shapes.
var (
	key1OWInsert = []KeySpec{{Flags: KeyOW | KeyInsert, Index: 1, KeyStep: 1}}
	key1OWUpdate = []KeySpec{{Flags: KeyOW | KeyUpdate, Index: 1, KeyStep: 1}}
	key1RWAD     = []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, Index: 1, KeyStep: 1}}
	key2RO       = []KeySpec{{Flags: KeyRO, Index: 2, KeyStep: 1}}
	key1RO       = []KeySpec{{Flags: KeyRO, Index: 1, KeyStep: 1}}
	key1ROAccess = []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, KeyStep: 1}}
	key1RWUpdate = []KeySpec{{Flags: KeyRW | KeyUpdate, Index: 1, KeyStep: 1}}
	key1RWAU     = []KeySpec{{Flags: KeyRW | KeyAccess | KeyUpdate, Index: 1, KeyStep: 1}}
)

const (
	tipsMultiSum  = "request_policy:multi_shard response_policy:agg_sum"
	tipsAllShards = "request_policy:all_shards response_policy:all_succeeded"
	tipsSpecial   = "nondeterministic_output request_policy:all_shards response_policy:special"
	expiration    = "[expiration=EX seconds|PX milliseconds|EXAT unix-time-seconds|PXAT unix-time-milliseconds"
	wrA           = Write | DenyOOM
	strW          = CatWrite | CatString
	keyW          = CatKeyspace | CatWrite
	keyR          = CatKeyspace | CatRead
	clientAdmin   = CatAdmin | CatSlow | CatDangerous | CatConnection
	clusterAdmin  = CatAdmin | CatSlow | CatDangerous
	clusterSet    = Admin | Stale | NoAsyncLoading
	aclAdmin      = Admin | NoScript | Loading | Stale
	aclAdminCats  = CatAdmin | CatSlow | CatDangerous
	nondet        = "nondeterministic_output"
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
		Summary: "The type of a key's value: string, hash, list, set or zset, or none when missing."},
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
	OpAuth: {Name: "auth", Arity: -2, Flags: NoScript | Loading | Stale | Fast | NoAuthFlag | AllowBusy, ACL: CatFast | CatConnection,
		Group: "connection", Since: "1.0.0", Complexity: "O(1)", Syntax: "[username] password",
		Summary: "Authenticate the connection."},
	OpSelect: {Name: "select", Arity: 2, Flags: Loading | Stale | Fast, ACL: CatFast | CatConnection,
		Group: "connection", Since: "1.0.0", Complexity: "O(1)", Syntax: "index",
		Summary: "Select the database the connection works in."},
	OpQuit: {Name: "quit", Arity: -1, Flags: NoScript | Loading | Stale | Fast | NoAuthFlag | AllowBusy, ACL: CatFast | CatConnection,
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
	OpHello: {Name: "hello", Arity: -1, Flags: NoScript | Loading | Stale | Fast | NoAuthFlag | AllowBusy, ACL: CatFast | CatConnection,
		Group: "connection", Since: "6.0.0", Complexity: "O(1)",
		Syntax:  "[arguments=protover [auth=AUTH username password] [SETNAME clientname]]",
		Summary: "Choose RESP2 or RESP3, optionally authenticating and naming the connection; returns the server's details."},
	OpSetNX: {Name: "setnx", Arity: 3, Flags: wrA | Fast, ACL: strW | CatFast, Keys: key1OWInsert,
		Group: "string", Since: "1.0.0", Complexity: "O(1)", Syntax: "key value",
		Summary: "Store a value only if the key does not exist; 1 if stored, 0 if not."},
	OpSetEX: {Name: "setex", Arity: 4, Flags: wrA, ACL: strW | CatSlow, Keys: key1OWUpdate,
		Group: "string", Since: "2.0.0", Complexity: "O(1)", Syntax: "key seconds value",
		Summary: "Store a value with a time to live in seconds."},
	OpPSetEX: {Name: "psetex", Arity: 4, Flags: wrA, ACL: strW | CatSlow, Keys: key1OWUpdate,
		Group: "string", Since: "2.6.0", Complexity: "O(1)", Syntax: "key milliseconds value",
		Summary: "Store a value with a time to live in milliseconds."},
	OpGetSet: {Name: "getset", Arity: 3, Flags: wrA | Fast, ACL: strW | CatFast, Keys: key1RWAU,
		Group: "string", Since: "1.0.0", Complexity: "O(1)", Syntax: "key value",
		Summary: "Store a value and return the old one (nil if none)."},
	OpGetDel: {Name: "getdel", Arity: 2, Flags: Write | Fast, ACL: strW | CatFast, Keys: key1RWAD,
		Group: "string", Since: "6.2.0", Complexity: "O(1)", Syntax: "key",
		Summary: "Return a key's value and delete the key."},
	OpGetEX: {Name: "getex", Arity: -2, Flags: Write | Fast, ACL: strW | CatFast, Keys: key1RWAU,
		Group: "string", Since: "6.2.0", Complexity: "O(1)", Syntax: "key " + expiration + "|PERSIST]",
		Summary: "Return a key's value and set or remove its time to live."},
	OpAppend: {Name: "append", Arity: 3, Flags: wrA | Fast, ACL: strW | CatFast,
		Keys:  []KeySpec{{Flags: KeyRW | KeyInsert, Index: 1, KeyStep: 1}},
		Group: "string", Since: "2.0.0", Complexity: "O(1) amortized", Syntax: "key value",
		Summary: "Append to a key's value (creating it); returns the new length."},
	OpStrLen: {Name: "strlen", Arity: 2, Flags: Readonly | Fast, ACL: CatRead | CatString | CatFast, Keys: key1RO,
		Group: "string", Since: "2.2.0", Complexity: "O(1)", Syntax: "key",
		Summary: "The length of a key's value (0 when missing)."},
	OpGetRange: {Name: "getrange", Arity: 4, Flags: Readonly, ACL: CatRead | CatString | CatSlow, Keys: key1ROAccess,
		Group: "string", Since: "2.4.0", Complexity: "O(N) for N bytes returned", Syntax: "key start end",
		Summary: "The bytes of a key's value from start to end (inclusive; negative counts from the end)."},
	OpSubstr: {Name: "substr", Arity: 4, Flags: Readonly, ACL: CatRead | CatString | CatSlow, Keys: key1ROAccess,
		Group: "string", Since: "1.0.0", Complexity: "O(N) for N bytes returned", Syntax: "key start end",
		Summary: "GETRANGE's old name."},
	OpSetRange: {Name: "setrange", Arity: 4, Flags: wrA, ACL: strW | CatSlow, Keys: key1RWUpdate,
		Group: "string", Since: "2.2.0", Complexity: "O(1) beyond copying the value", Syntax: "key offset value",
		Summary: "Overwrite part of a key's value from offset (padding with zero bytes); returns the new length."},
	OpIncrByFloat: {Name: "incrbyfloat", Arity: 3, Flags: wrA | Fast, ACL: strW | CatFast, Keys: key1RWAU,
		Group: "string", Since: "2.6.0", Complexity: "O(1)", Syntax: "key increment:double",
		Summary: "Add a decimal number to the number stored at a key, in Redis's long double arithmetic."},
	OpMSetNX: {Name: "msetnx", Arity: -3, Flags: wrA, ACL: strW | CatSlow,
		Tips: "request_policy:multi_shard response_policy:agg_min",
		Keys: []KeySpec{{Flags: KeyOW | KeyInsert, Index: 1, LastKey: -1, KeyStep: 2}}, ReqKeys: ArgRange{0, 2},
		Group: "string", Since: "1.0.1", Complexity: "O(N) for N keys", Syntax: "(data=key value)...",
		Summary: "Store several values only if none of the keys exists; 1 if stored, 0 if not."},
	OpUnlink: {Name: "unlink", Arity: -2, Flags: Write | Fast, ACL: keyW | CatFast, Tips: tipsMultiSum,
		Keys: []KeySpec{{Flags: KeyRM | KeyDelete, Index: 1, LastKey: -1, KeyStep: 1}}, ReqKeys: ArgRange{0, 1},
		Group: "generic", Since: "4.0.0", Complexity: "O(N) for N keys", Syntax: "key...",
		Summary: "DEL: goblin frees a small value at once and a large collection in the background either way."},
	OpTouch: {Name: "touch", Arity: -2, Flags: Readonly | Fast, ACL: keyR | CatFast, Tips: tipsMultiSum,
		Keys: []KeySpec{{Flags: KeyRO, Index: 1, LastKey: -1, KeyStep: 1}}, ReqKeys: ArgRange{0, 1},
		Group: "generic", Since: "3.2.1", Complexity: "O(N) for N keys", Syntax: "key...",
		Summary: "Mark keys as used now (for LRU eviction); returns how many exist."},
	OpRename: {Name: "rename", Arity: 3, Flags: Write, ACL: keyW | CatSlow,
		Keys:    []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, Index: 1, KeyStep: 1}, {Flags: KeyOW | KeyUpdate, Index: 2, KeyStep: 1}},
		ReqKeys: ArgRange{0, 1}, Group: "generic", Since: "1.0.0", Complexity: "O(1)", Syntax: "key newkey",
		Summary: "Give a key a new name, overwriting any key of that name."},
	OpRenameNX: {Name: "renamenx", Arity: 3, Flags: Write | Fast, ACL: keyW | CatFast,
		Keys:    []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, Index: 1, KeyStep: 1}, {Flags: KeyOW | KeyInsert, Index: 2, KeyStep: 1}},
		ReqKeys: ArgRange{0, 1}, Group: "generic", Since: "1.0.0", Complexity: "O(1)", Syntax: "key newkey",
		Summary: "Rename a key only if the new name is free; 1 if renamed, 0 if not."},
	OpCopy: {Name: "copy", Arity: -3, Flags: wrA, ACL: keyW | CatSlow,
		Keys:    []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, KeyStep: 1}, {Flags: KeyOW | KeyUpdate, Index: 2, KeyStep: 1}},
		ReqKeys: ArgRange{0, 1}, Group: "generic", Since: "6.2.0", Complexity: "O(N) for a value of N bytes",
		Syntax:  "source destination [DB destination-db] [REPLACE]",
		Summary: "Copy a key's value and expiry to another key, in this or another database."},
	OpRandomKey: {Name: "randomkey", Arity: 1, Flags: Readonly, ACL: keyR | CatSlow,
		Tips:  "request_policy:all_shards nondeterministic_output",
		Group: "generic", Since: "1.0.0", Complexity: "O(1)",
		Summary: "A random key of the selected database, or nil."},
	OpExpireAt: {Name: "expireat", Arity: -3, Flags: Write | Fast, ACL: keyW | CatFast, Keys: key1RWUpdate,
		Group: "generic", Since: "1.2.0", Complexity: "O(1)", Syntax: "key unix-time-seconds [condition=NX|XX|GT|LT]",
		Summary: "Expire a key at a unix time in seconds."},
	OpPExpireAt: {Name: "pexpireat", Arity: -3, Flags: Write | Fast, ACL: keyW | CatFast, Keys: key1RWUpdate,
		Group: "generic", Since: "2.6.0", Complexity: "O(1)", Syntax: "key unix-time-milliseconds [condition=NX|XX|GT|LT]",
		Summary: "Expire a key at a unix time in milliseconds."},
	OpExpireTime: {Name: "expiretime", Arity: 2, Flags: Readonly | Fast, ACL: keyR | CatFast, Keys: key1ROAccess,
		Group: "generic", Since: "7.0.0", Complexity: "O(1)", Syntax: "key",
		Summary: "The unix time in seconds a key expires at: -1 without an expiry, -2 when missing."},
	OpPExpireTime: {Name: "pexpiretime", Arity: 2, Flags: Readonly | Fast, ACL: keyR | CatFast, Keys: key1ROAccess,
		Group: "generic", Since: "7.0.0", Complexity: "O(1)", Syntax: "key",
		Summary: "The unix time in milliseconds a key expires at: -1 without an expiry, -2 when missing."},
	OpKeys: {Name: "keys", Arity: 2, Flags: Readonly, ACL: keyR | CatSlow | CatDangerous,
		Tips:  "request_policy:all_shards nondeterministic_output_order",
		Group: "generic", Since: "1.0.0", Complexity: "O(N) for N keys in the database", Syntax: "pattern",
		Summary: "Every key matching a glob pattern (use SCAN on large databases)."},
	OpScan: {Name: "scan", Arity: -2, Flags: Readonly, ACL: keyR | CatSlow, Tips: "nondeterministic_output request_policy:special",
		Group: "generic", Since: "2.8.0", Complexity: "O(1) per call, O(N) for a whole iteration",
		Syntax:  "cursor [MATCH pattern] [COUNT count] [TYPE type]",
		Summary: "Iterate the keys: every key present for the whole iteration is returned at least once."},
	OpObject: {Name: "object", Arity: -2, ACL: CatSlow, Dispatch: true,
		Group: "generic", Since: "2.2.3", Complexity: "Depends on subcommand.",
		Summary: "Inspect how a key's value is kept."},
	OpObjectEncoding: {Name: "object|encoding", Arity: 3, Flags: Readonly, ACL: keyR | CatSlow, Tips: "nondeterministic_output",
		Keys: key2RO, Container: OpObject, Group: "generic", Since: "2.2.3", Complexity: "O(1)", Syntax: "key",
		Summary: "How the value is kept: int, embstr (up to 44 bytes) or raw; listpack, hashtable, intset, quicklist or skiplist for a collection."},
	OpObjectFreq: {Name: "object|freq", Arity: 3, Flags: Readonly, ACL: keyR | CatSlow, Tips: "nondeterministic_output",
		Keys: key2RO, Container: OpObject, Group: "generic", Since: "4.0.0", Complexity: "O(1)", Syntax: "key",
		Summary: "The key's logarithmic access counter under an LFU policy (allkeys-lfu, volatile-lfu); an error under any other."},
	OpObjectIdleTime: {Name: "object|idletime", Arity: 3, Flags: Readonly, ACL: keyR | CatSlow, Tips: "nondeterministic_output",
		Keys: key2RO, Container: OpObject, Group: "generic", Since: "2.2.3", Complexity: "O(1)", Syntax: "key",
		Summary: "Seconds since the key was last used, by the store's LRU clock; an error under an LFU policy."},
	OpObjectRefCount: {Name: "object|refcount", Arity: 3, Flags: Readonly, ACL: keyR | CatSlow, Tips: "nondeterministic_output",
		Keys: key2RO, Container: OpObject, Group: "generic", Since: "2.2.3", Complexity: "O(1)", Syntax: "key",
		Summary: "The value's reference count as Redis reports it (shared small integers are 2147483647)."},
	OpObjectHelp: {Name: "object|help", Arity: 2, Flags: Loading | Stale, ACL: CatKeyspace | CatSlow,
		Container: OpObject, Group: "generic", Since: "6.2.0", Complexity: "O(1)",
		Summary: "The OBJECT subcommands."},
	OpMemory: {Name: "memory", Arity: -2, ACL: CatSlow, Dispatch: true,
		Group: "server", Since: "4.0.0", Complexity: "Depends on subcommand.",
		Summary: "Memory use: per key and overall."},
	OpMemoryUsage: {Name: "memory|usage", Arity: -3, Flags: Readonly, ACL: CatRead | CatSlow,
		Keys: key2RO, Container: OpMemory, Group: "server", Since: "4.0.0", Complexity: "O(1)",
		Syntax:  "key [SAMPLES count]",
		Summary: "The bytes a key costs goblin: its slot, its arena block and its share of the index."},
	OpMemoryHelp: {Name: "memory|help", Arity: 2, Flags: Loading | Stale, ACL: CatSlow,
		Container: OpMemory, Group: "server", Since: "4.0.0", Complexity: "O(1)",
		Summary: "The MEMORY subcommands."},
	OpMemoryDoctor: {Name: "memory|doctor", Arity: 2, ACL: CatSlow, Tips: tipsSpecial,
		Container: OpMemory, Group: "server", Since: "4.0.0", Complexity: "O(1)",
		Summary: "A short report on the memory in use."},
	OpMemoryStats: {Name: "memory|stats", Arity: 2, ACL: CatSlow, Tips: tipsSpecial,
		Container: OpMemory, Group: "server", Since: "4.0.0", Complexity: "O(1)",
		Summary: "Memory figures: totals, per database, per key."},
	OpMemoryMallocStats: {Name: "memory|malloc-stats", Arity: 2, ACL: CatSlow, Tips: tipsSpecial,
		Container: OpMemory, Group: "server", Since: "4.0.0", Complexity: "O(1)",
		Summary: "Allocator statistics: goblin's arena has none to give."},
	OpMemoryPurge: {Name: "memory|purge", Arity: 2, ACL: CatSlow, Tips: tipsAllShards,
		Container: OpMemory, Group: "server", Since: "4.0.0", Complexity: "O(1)",
		Summary: "Return unused memory to the system (goblin's arena does this as it goes)."},
	OpDump: {Name: "dump", Arity: 2, Flags: Readonly, ACL: keyR | CatSlow, Tips: "nondeterministic_output",
		Keys: key1ROAccess, Group: "generic", Since: "2.6.0", Complexity: "O(N) for a value of N bytes", Syntax: "key",
		Summary: "A key's value serialized in Redis 7.0's DUMP format (for RESTORE on a goblin or Redis server)."},
	OpRestore: {Name: "restore", Arity: -4, Flags: wrA, ACL: keyW | CatSlow | CatDangerous, Keys: key1OWUpdate,
		Group: "generic", Since: "2.6.0", Complexity: "O(N) for a value of N bytes",
		Syntax:  "key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]",
		Summary: "Create a key from a DUMP payload, with a time to live in milliseconds (0: none)."},
	OpSwapDB: {Name: "swapdb", Arity: 3, Flags: Write | Fast, ACL: keyW | CatFast | CatDangerous,
		Group: "server", Since: "4.0.0", Complexity: "O(1)", Syntax: "index1 index2",
		Summary: "Exchange the contents of two databases."},
	OpMove: {Name: "move", Arity: 3, Flags: Write | Fast, ACL: keyW | CatFast, Keys: key1RWAU,
		Group: "generic", Since: "1.0.0", Complexity: "O(1)", Syntax: "key db",
		Summary: "Move a key to another database if no key of that name is there; 1 if moved."},
	OpSetBit: {Name: "setbit", Arity: 4, Flags: wrA, ACL: CatWrite | CatBitmap | CatSlow, Keys: key1RWAU,
		Group: "bitmap", Since: "2.2.0", Complexity: "O(1) beyond copying the value", Syntax: "key offset value",
		Summary: "Set or clear the bit at offset (growing the value with zero bytes); returns the old bit."},
	OpGetBit: {Name: "getbit", Arity: 3, Flags: Readonly | Fast, ACL: CatRead | CatBitmap | CatFast, Keys: key1ROAccess,
		Group: "bitmap", Since: "2.2.0", Complexity: "O(1)", Syntax: "key offset",
		Summary: "The bit at offset (0 past the end or for a missing key)."},
	OpBitCount: {Name: "bitcount", Arity: -2, Flags: Readonly, ACL: CatRead | CatBitmap | CatSlow, Keys: key1ROAccess,
		Group: "bitmap", Since: "2.6.0", Complexity: "O(N) for N bytes counted",
		Syntax:  "key [range=start end [unit=BYTE|BIT]]",
		Summary: "Count the set bits, in the whole value or a byte or bit range."},
	OpBitPos: {Name: "bitpos", Arity: -3, Flags: Readonly, ACL: CatRead | CatBitmap | CatSlow, Keys: key1ROAccess,
		Group: "bitmap", Since: "2.8.7", Complexity: "O(N) for N bytes searched",
		Syntax:  "key bit [range=start [end-unit-block=end [unit=BYTE|BIT]]]",
		Summary: "The position of the first bit set to 1 or 0, in the whole value or a range."},
	OpBitOp: {Name: "bitop", Arity: -4, Flags: wrA, ACL: CatWrite | CatBitmap | CatSlow,
		Keys:    []KeySpec{{Flags: KeyOW | KeyUpdate, Index: 2, KeyStep: 1}, {Flags: KeyRO | KeyAccess, Index: 3, LastKey: -1, KeyStep: 1}},
		ReqKeys: ArgRange{0, 1}, Group: "bitmap", Since: "2.6.0", Complexity: "O(N) for the longest value of N bytes",
		Syntax:  "(operation=AND|OR|XOR|NOT) destkey key...",
		Summary: "Store the AND, OR, XOR of values (or the NOT of one) at destkey; returns its length."},
	OpBitField: {Name: "bitfield", Arity: -2, Flags: wrA, ACL: CatWrite | CatBitmap | CatSlow,
		Keys:  []KeySpec{{Flags: KeyRW | KeyAccess | KeyUpdate | KeyVariableFlags, Index: 1, KeyStep: 1}},
		Group: "bitmap", Since: "3.2.0", Complexity: "O(1) per operation",
		Syntax:  "key [operation=GET encoding offset|SET encoding offset value|INCRBY encoding offset increment|OVERFLOW (overflow=WRAP|SAT|FAIL)]...",
		Summary: "Read, write and increment integers of any width (i1..i64, u1..u63) at any bit offset."},
	OpBitFieldRO: {Name: "bitfield_ro", Arity: -2, Flags: Readonly | Fast, ACL: CatRead | CatBitmap | CatFast, Keys: key1ROAccess,
		Group: "bitmap", Since: "6.0.0", Complexity: "O(1) per operation", Syntax: "key [GET encoding offset]...",
		Summary: "BITFIELD with GET operations only."},
	OpLCS: {Name: "lcs", Arity: -3, Flags: Readonly, ACL: CatRead | CatString | CatSlow,
		Keys:    []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 1, KeyStep: 1}},
		ReqKeys: ArgRange{0, 1}, Group: "string", Since: "7.0.0", Complexity: "O(N*M) for values of N and M bytes",
		Syntax:  "key1 key2 [LEN] [IDX] [MINMATCHLEN min-match-len] [WITHMATCHLEN]",
		Summary: "The longest common subsequence of two values, its length, or the matching ranges."},
	OpMulti: {Name: "multi", Arity: 1, Flags: NoScript | Loading | Stale | Fast | AllowBusy, ACL: CatFast | CatTransaction,
		Group: "transactions", Since: "1.2.0", Complexity: "O(1)",
		Summary: "Start a transaction: the following commands are queued until EXEC."},
	OpExec: {Name: "exec", Arity: 1, Flags: NoScript | Loading | Stale | SkipSlowlog, ACL: CatSlow | CatTransaction,
		Group: "transactions", Since: "1.2.0", Complexity: "The sum of the queued commands'",
		Summary: "Run the queued commands at once; nil if a watched key changed, EXECABORT if one was refused."},
	OpDiscard: {Name: "discard", Arity: 1, Flags: NoScript | Loading | Stale | Fast | AllowBusy, ACL: CatFast | CatTransaction,
		Group: "transactions", Since: "2.0.0", Complexity: "O(N) for N queued commands",
		Summary: "Drop the queued commands and end the transaction."},
	OpWatch: {Name: "watch", Arity: -2, Flags: NoScript | Loading | Stale | Fast | AllowBusy, ACL: CatFast | CatTransaction,
		Keys: []KeySpec{{Flags: KeyRO, Index: 1, LastKey: -1, KeyStep: 1}}, ReqKeys: ArgRange{0, 1},
		Group: "transactions", Since: "2.2.0", Complexity: "O(1) per key", Syntax: "key...",
		Summary: "Make the next EXEC fail if any of the keys changes before it."},
	OpUnwatch: {Name: "unwatch", Arity: 1, Flags: NoScript | Loading | Stale | Fast | AllowBusy, ACL: CatFast | CatTransaction,
		Group: "transactions", Since: "2.2.0", Complexity: "O(1)",
		Summary: "Forget the watched keys."},
	OpReset: {Name: "reset", Arity: 1, Flags: NoScript | Loading | Stale | Fast | NoAuthFlag | AllowBusy, ACL: CatFast | CatConnection,
		Group: "connection", Since: "6.2.0", Complexity: "O(1)",
		Summary: "Return the connection to its state on connecting: no transaction, database 0, RESP2, no name."},
	OpClientID: {Name: "client|id", Arity: 2, Flags: NoScript | Loading | Stale, ACL: CatSlow | CatConnection,
		Container: OpClient, Group: "connection", Since: "5.0.0", Complexity: "O(1)",
		Summary: "The connection's client id."},
	OpClientInfo: {Name: "client|info", Arity: 2, Flags: NoScript | Loading | Stale, ACL: CatSlow | CatConnection,
		Tips: "nondeterministic_output", Container: OpClient, Group: "connection", Since: "6.2.0", Complexity: "O(1)",
		Summary: "This connection's line of CLIENT LIST."},
	OpClientList: {Name: "client|list", Arity: -2, Flags: Admin | NoScript | Loading | Stale, ACL: clientAdmin,
		Tips: "nondeterministic_output", Container: OpClient, Group: "connection", Since: "2.4.0",
		Complexity: "O(N) for N clients", Syntax: "[TYPE (client-type=NORMAL|MASTER|REPLICA|PUBSUB)] [ID client-id...]",
		Summary: "One line per connected client, over every transport."},
	OpClientKill: {Name: "client|kill", Arity: -3, Flags: Admin | NoScript | Loading | Stale, ACL: clientAdmin,
		Container: OpClient, Group: "connection", Since: "2.4.0", Complexity: "O(N) for N clients",
		Syntax:  "(filter=ip:port|[ID client-id] [TYPE client-type] [USER username] [ADDR ip:port] [LADDR ip:port] [SKIPME yes-no])",
		Summary: "Disconnect clients by address, or those matching every filter given."},
	OpClientNoEvict: {Name: "client|no-evict", Arity: 3, Flags: Admin | NoScript | Loading | Stale, ACL: clientAdmin,
		Container: OpClient, Group: "connection", Since: "7.0.0", Complexity: "O(1)", Syntax: "(enabled=ON|OFF)",
		Summary: "Exempt this connection from client eviction."},
	OpClientNoTouch: {Name: "client|no-touch", Arity: 3, Flags: NoScript | Loading | Stale, ACL: CatSlow | CatConnection,
		Container: OpClient, Group: "connection", Since: "7.2.0", Complexity: "O(1)", Syntax: "(enabled=ON|OFF)",
		Summary: "Leave keys' LRU recency alone when this connection reads them (TOUCH still touches)."},
	OpClientPause: {Name: "client|pause", Arity: -3, Flags: Admin | NoScript | Loading | Stale, ACL: clientAdmin,
		Container: OpClient, Group: "connection", Since: "3.0.0", Complexity: "O(1)", Syntax: "timeout [mode=WRITE|ALL]",
		Summary: "Hold socket clients' commands (all, or writes) for timeout milliseconds."},
	OpClientUnpause: {Name: "client|unpause", Arity: 2, Flags: Admin | NoScript | Loading | Stale, ACL: clientAdmin,
		Container: OpClient, Group: "connection", Since: "6.2.0", Complexity: "O(N) for N paused clients",
		Summary: "End CLIENT PAUSE."},
	OpClientReply: {Name: "client|reply", Arity: 3, Flags: NoScript | Loading | Stale, ACL: CatSlow | CatConnection,
		Container: OpClient, Group: "connection", Since: "3.2.0", Complexity: "O(1)", Syntax: "(action=ON|OFF|SKIP)",
		Summary: "Turn this connection's replies off, on, or off for the next command."},
	OpClientHelp: {Name: "client|help", Arity: 2, Flags: Loading | Stale, ACL: CatSlow | CatConnection,
		Container: OpClient, Group: "connection", Since: "5.0.0", Complexity: "O(1)",
		Summary: "The CLIENT subcommands."},
	OpClientGetRedir: {Name: "client|getredir", Arity: 2, Flags: NoScript | Loading | Stale, ACL: CatSlow | CatConnection,
		Container: OpClient, Group: "connection", Since: "6.0.0", Complexity: "O(1)",
		Summary: "The client tracking redirection: -1, as goblin has no client tracking."},
	OpClientTrackingInfo: {Name: "client|trackinginfo", Arity: 2, Flags: NoScript | Loading | Stale, ACL: CatSlow | CatConnection,
		Container: OpClient, Group: "connection", Since: "6.2.0", Complexity: "O(1)",
		Summary: "Client tracking state: always off in goblin."},
	OpClientTracking: {Name: "client|tracking", Arity: -3, Flags: NoScript | Loading | Stale, ACL: CatSlow | CatConnection,
		Container: OpClient, Group: "connection", Since: "6.0.0", Complexity: "O(1)",
		Syntax:  "(status=ON|OFF) [REDIRECT client-id] [PREFIX prefix]... [BCAST] [OPTIN] [OPTOUT] [NOLOOP]",
		Summary: "Client-side caching: goblin refuses ON (no invalidation messages) and accepts OFF."},
	OpClientCaching: {Name: "client|caching", Arity: 3, Flags: NoScript | Loading | Stale, ACL: CatSlow | CatConnection,
		Container: OpClient, Group: "connection", Since: "6.0.0", Complexity: "O(1)", Syntax: "(mode=YES|NO)",
		Summary: "Tracking of the next command: always refused, as tracking is never on."},
	OpClientUnblock: {Name: "client|unblock", Arity: -3, Flags: Admin | NoScript | Loading | Stale, ACL: clientAdmin,
		Container: OpClient, Group: "connection", Since: "5.0.0", Complexity: "O(log N)",
		Syntax:  "client-id [unblock-type=TIMEOUT|ERROR]",
		Summary: "Answer a client blocked in a blocking command or WAIT now, as a timeout or with an error; 1 if it was blocked."},
	OpTime: {Name: "time", Arity: 1, Flags: Loading | Stale | Fast, ACL: CatFast, Tips: "nondeterministic_output",
		Group: "server", Since: "2.6.0", Complexity: "O(1)",
		Summary: "The server's time: unix seconds and microseconds."},
	OpLastSave: {Name: "lastsave", Arity: 1, Flags: Loading | Stale | Fast, ACL: CatAdmin | CatFast | CatDangerous,
		Tips: "nondeterministic_output", Group: "server", Since: "1.0.0", Complexity: "O(1)",
		Summary: "The unix time of the last successful save (SAVE, BGSAVE, the save policy), or of the start before any."},
	OpSave: {Name: "save", Arity: 1, Flags: Admin | NoScript | NoAsyncLoading | NoMulti, ACL: CatAdmin | CatSlow | CatDangerous,
		Group: "server", Since: "1.0.0", Complexity: "O(N) where N is the total number of keys in all databases",
		Summary: "Write a snapshot of every database to the RDB file now, on the loop: clients wait until it is on disk."},
	OpBgSave: {Name: "bgsave", Arity: -1, Flags: Admin | NoScript | NoAsyncLoading, ACL: CatAdmin | CatSlow | CatDangerous,
		Group: "server", Since: "1.0.0", Complexity: "O(1)", Syntax: "[SCHEDULE]",
		Summary: "Write a point-in-time snapshot to the RDB file while the server goes on serving (no fork); SCHEDULE queues it behind one in progress."},
	OpShutdown: {Name: "shutdown", Arity: -1, Flags: Admin | NoScript | Loading | Stale | NoMulti | AllowBusy, ACL: CatAdmin | CatSlow | CatDangerous,
		Group: "server", Since: "1.0.0", Complexity: "O(N) when saving, where N is the total number of keys in all databases when saving data, otherwise O(1)",
		Syntax:  "[nosave_save=NOSAVE|SAVE] [NOW] [FORCE] [ABORT]",
		Summary: "Save (with a save policy, or SAVE) and stop the server; NOSAVE skips the save, FORCE stops even if it fails."},
	// Replica side of replication.
	OpReplicaOf: {Name: "replicaof", Arity: 3, Flags: Admin | NoScript | Stale | NoAsyncLoading, ACL: CatAdmin | CatSlow | CatDangerous,
		Group: "server", Since: "5.0.0", Complexity: "O(1)", Syntax: "(args=(host-port=host port:integer)|(no-one=NO ONE))",
		Summary: "Follow the primary at host port (a full or partial resynchronisation, then its command stream), or NO ONE to stop following and take writes."},
	OpSlaveOf: {Name: "slaveof", Arity: 3, Flags: Admin | NoScript | Stale | NoAsyncLoading, ACL: CatAdmin | CatSlow | CatDangerous,
		Group: "server", Since: "1.0.0", Complexity: "O(1)", Syntax: "(args=(host-port=host port:integer)|(no-one=NO ONE))",
		Summary: "The old name of REPLICAOF."},
	OpRole: {Name: "role", Arity: 1, Flags: NoScript | Loading | Stale | Fast, ACL: CatAdmin | CatFast | CatDangerous,
		Group: "server", Since: "2.8.12", Complexity: "O(1)",
		Summary: "The replication role: master with its offset and replicas, or slave with its primary, link state and offset."},
	OpWait: {Name: "wait", Arity: 3, Flags: NoScript, ACL: CatSlow | CatConnection,
		Tips:  "request_policy:all_shards response_policy:agg_min",
		Group: "generic", Since: "3.0.0", Complexity: "O(1)", Syntax: "numreplicas timeout",
		Summary: "Wait until numreplicas replicas acknowledged this client's writes, or timeout ms (0: for ever); the count that did."},
	// Replication, primary side.
	OpSync: {Name: "sync", Arity: 1, Flags: Admin | NoAsyncLoading | NoMulti | NoScript, ACL: CatAdmin | CatSlow | CatDangerous,
		Group: "server", Since: "1.0.0", Complexity: "O(N)",
		Summary: "Become a replica by the old protocol: a snapshot, then the command stream (used by old replicas)."},
	OpPSync: {Name: "psync", Arity: -3, Flags: Admin | NoAsyncLoading | NoMulti | NoScript, ACL: CatAdmin | CatSlow | CatDangerous,
		Group: "server", Since: "2.8.0", Complexity: "O(N)", Syntax: "replicationid offset",
		Summary: "Become a replica: +CONTINUE with the missed stream from the backlog, or +FULLRESYNC and a snapshot."},
	OpReplConf: {Name: "replconf", Arity: -1, Flags: Admin | NoScript | Loading | Stale | AllowBusy, ACL: CatAdmin | CatSlow | CatDangerous,
		Group: "server", Since: "3.0.0", Complexity: "O(1)",
		Summary: "A replica tells its primary its port, address, capabilities and acknowledged offset (internal)."},
	OpConfigSet: {Name: "config|set", Arity: -4, Flags: Admin | NoScript | Loading | Stale, ACL: CatAdmin | CatSlow | CatDangerous,
		Tips: "request_policy:all_nodes response_policy:all_succeeded", Container: OpConfig, Group: "server", Since: "2.0.0",
		Complexity: "O(N) for N parameters", Syntax: "(data=parameter value)...",
		Summary: "Change configuration parameters that can change live (maxmemory, maxmemory-policy, timeout, requirepass...)."},
	OpConfigResetStat: {Name: "config|resetstat", Arity: 2, Flags: Admin | NoScript | Loading | Stale, ACL: CatAdmin | CatSlow | CatDangerous,
		Container: OpConfig, Group: "server", Since: "2.0.0", Complexity: "O(1)",
		Summary: "Reset INFO's statistics."},
	OpConfigRewrite: {Name: "config|rewrite", Arity: 2, Flags: Admin | NoScript | Loading | Stale, ACL: CatAdmin | CatSlow | CatDangerous,
		Container: OpConfig, Group: "server", Since: "2.8.0", Complexity: "O(1)",
		Summary: "Write the parameters CONFIG SET changed into the configuration file the server started from (docs/config.md)."},
	OpConfigHelp: {Name: "config|help", Arity: 2, Flags: Loading | Stale, ACL: CatSlow,
		Container: OpConfig, Group: "server", Since: "5.0.0", Complexity: "O(1)",
		Summary: "The CONFIG subcommands."},
	OpFunction: {Name: "function", Arity: -2, ACL: CatSlow, Dispatch: true,
		Group: "scripting", Since: "7.0.0", Complexity: "Depends on subcommand.",
		Summary: "The function library: goblin has no scripting, so it is always empty."},
	OpFunctionFlush: {Name: "function|flush", Arity: -2, Flags: Write | NoScript, ACL: CatWrite | CatSlow | CatScripting,
		Tips: tipsAllShards, Container: OpFunction, Group: "scripting", Since: "7.0.0", Complexity: "O(1)",
		Syntax: "[flush-type=ASYNC|SYNC]", Summary: "Delete every library (there are none)."},
	OpFunctionList: {Name: "function|list", Arity: -2, Flags: NoScript, ACL: CatSlow | CatScripting,
		Tips: "nondeterministic_output_order", Container: OpFunction, Group: "scripting", Since: "7.0.0", Complexity: "O(1)",
		Syntax: "[LIBRARYNAME library-name-pattern] [WITHCODE]", Summary: "The libraries: none."},
	OpFunctionHelp: {Name: "function|help", Arity: 2, Flags: Loading | Stale, ACL: CatSlow | CatScripting,
		Container: OpFunction, Group: "scripting", Since: "7.0.0", Complexity: "O(1)",
		Summary: "The FUNCTION subcommands."},
	// Sentinel compatibility (660-679).
	OpScript: {Name: "script", Arity: -2, ACL: CatSlow, Dispatch: true,
		Group: "scripting", Since: "2.6.0", Complexity: "Depends on subcommand.",
		Summary: "Lua scripts: goblin has no scripting; SCRIPT KILL answers as an idle Redis does (redis-sentinel sends it)."},
	OpScriptKill: {Name: "script|kill", Arity: 2, Flags: NoScript | AllowBusy, ACL: CatSlow | CatScripting,
		Tips: "request_policy:all_shards response_policy:one_succeeded", Container: OpScript, Group: "scripting", Since: "2.6.0", Complexity: "O(1)",
		Summary: "Kill the running script: none ever runs, so NOTBUSY."},
	OpScriptHelp: {Name: "script|help", Arity: 2, Flags: Loading | Stale, ACL: CatSlow | CatScripting,
		Container: OpScript, Group: "scripting", Since: "5.0.0", Complexity: "O(1)",
		Summary: "The SCRIPT subcommands."},
	OpMonitor: {Name: "monitor", Arity: 1, Flags: Admin | NoScript | Loading | Stale, ACL: CatAdmin | CatSlow | CatDangerous,
		Group: "server", Since: "1.0.0", Complexity: "O(1) per command seen",
		Summary: "Stream every command the server executes to this (socket) connection."},
	OpCluster: {Name: "cluster", Arity: -2, ACL: CatSlow, Dispatch: true,
		Group: "cluster", Since: "3.0.0", Complexity: "Depends on subcommand.",
		Summary: "The cluster's slot map and this node's part in it (cluster mode: --cluster-enabled or --cluster-config)."},
	OpClusterSlots: {Name: "cluster|slots", Arity: 2, Flags: Stale, ACL: CatSlow, Tips: nondet, Container: OpCluster,
		Group: "cluster", Since: "3.0.0", Complexity: "O(N) for N nodes",
		Summary: "Slot ranges with the address and id of the node owning each."},
	OpClusterShards: {Name: "cluster|shards", Arity: 2, Flags: Stale, ACL: CatSlow, Tips: nondet, Container: OpCluster,
		Group: "cluster", Since: "7.0.0", Complexity: "O(N) for N nodes",
		Summary: "Each shard with its slots and its nodes (master and replicas)."},
	OpClusterNodes: {Name: "cluster|nodes", Arity: 2, Flags: Stale, ACL: CatSlow, Tips: nondet, Container: OpCluster,
		Group: "cluster", Since: "3.0.0", Complexity: "O(N) for N nodes",
		Summary: "The cluster configuration in Redis's nodes.conf line format."},
	OpClusterMyID: {Name: "cluster|myid", Arity: 2, Flags: Stale, ACL: CatSlow, Container: OpCluster,
		Group: "cluster", Since: "3.0.0", Complexity: "O(1)",
		Summary: "This node's id."},
	OpClusterMyShardID: {Name: "cluster|myshardid", Arity: 2, Flags: Stale, ACL: CatSlow, Tips: nondet, Container: OpCluster,
		Group: "cluster", Since: "7.2.0", Complexity: "O(1)",
		Summary: "This node's shard id (goblin gives its node id)."},
	OpClusterInfo: {Name: "cluster|info", Arity: 2, Flags: Stale, ACL: CatSlow, Tips: nondet, Container: OpCluster,
		Group: "cluster", Since: "3.0.0", Complexity: "O(1)",
		Summary: "Cluster state, slots assigned, nodes and epochs."},
	OpClusterKeySlot: {Name: "cluster|keyslot", Arity: 3, Flags: Stale, ACL: CatSlow, Container: OpCluster,
		Group: "cluster", Since: "3.0.0", Complexity: "O(N) for a key of N bytes", Syntax: "key",
		Summary: "The hash slot of a key (CRC16 of the key or its {hash tag}, modulo 16384)."},
	OpClusterCountKeysInSlot: {Name: "cluster|countkeysinslot", Arity: 3, Flags: Stale, ACL: CatSlow, Container: OpCluster,
		Group: "cluster", Since: "3.0.0", Complexity: "O(N) for N keys in the store on first use, then O(M) for M keys written to the slot", Syntax: "slot",
		Summary: "How many keys of a slot this node holds."},
	OpClusterGetKeysInSlot: {Name: "cluster|getkeysinslot", Arity: 4, Flags: Stale, ACL: CatSlow, Tips: nondet, Container: OpCluster,
		Group: "cluster", Since: "3.0.0", Complexity: "O(N) for N keys in the store on first use, then O(M) for M keys written to the slot", Syntax: "slot count",
		Summary: "Up to count keys of a slot that this node holds."},
	OpClusterCountFailureReports: {Name: "cluster|count-failure-reports", Arity: 3, Flags: Admin | Stale, ACL: clusterAdmin, Tips: nondet,
		Container: OpCluster, Group: "cluster", Since: "3.0.0", Complexity: "O(1)", Syntax: "node-id",
		Summary: "How many nodes report the node as failing (cluster bus; always 0 in file mode, which detects no failures)."},
	OpClusterSetSlot: {Name: "cluster|setslot", Arity: -4, Flags: clusterSet, ACL: clusterAdmin, Container: OpCluster,
		Group: "cluster", Since: "3.0.0", Complexity: "O(1)",
		Syntax:  "slot (subcommand=IMPORTING node-id|MIGRATING node-id|NODE node-id|STABLE)",
		Summary: "Move a slot: mark it importing or migrating, give it to a node, or end a move."},
	OpClusterHelp: {Name: "cluster|help", Arity: 2, Flags: Loading | Stale, ACL: CatSlow, Container: OpCluster,
		Group: "cluster", Since: "5.0.0", Complexity: "O(1)",
		Summary: "The CLUSTER subcommands."},
	OpClusterSaveConfig: {Name: "cluster|saveconfig", Arity: 2, Flags: clusterSet, ACL: clusterAdmin, Container: OpCluster,
		Group: "cluster", Since: "3.0.0", Complexity: "O(N) for N nodes",
		Summary: "Write the slot map as it now stands (after SETSLOT) to the cluster configuration file."},
	OpClusterReload: {Name: "cluster|reload", Arity: 2, Flags: clusterSet, ACL: clusterAdmin, Container: OpCluster,
		Group: "cluster", Since: "7.0.0", Complexity: "O(N) for N nodes",
		Summary: "Read the cluster configuration file again (as SIGHUP does); refused if its epoch is older than this node's."},
	OpClusterTargets: {Name: "cluster|targets", Arity: 2, Flags: Stale, ACL: CatSlow, Tips: nondet, Container: OpCluster,
		Group: "cluster", Since: "7.0.0", Complexity: "O(N) for N nodes",
		Summary: "goblin's own: each node's id and every target it serves (tcp, uds, ring, aeron), for goblin's cluster client."},
	OpClusterAddSlots: {Name: "cluster|addslots", Arity: -3, Flags: clusterSet, ACL: clusterAdmin, Container: OpCluster,
		Group: "cluster", Since: "3.0.0", Complexity: "O(1)", Syntax: "slot...",
		Summary: "Assign slots to this node (cluster bus); refused in file mode."},
	OpClusterAddSlotsRange: {Name: "cluster|addslotsrange", Arity: -4, Flags: clusterSet, ACL: clusterAdmin, Container: OpCluster,
		Group: "cluster", Since: "7.0.0", Complexity: "O(1)", Syntax: "(range=start-slot end-slot)...",
		Summary: "Assign ranges of slots to this node (cluster bus); refused in file mode."},
	OpClusterDelSlots: {Name: "cluster|delslots", Arity: -3, Flags: clusterSet, ACL: clusterAdmin, Container: OpCluster,
		Group: "cluster", Since: "3.0.0", Complexity: "O(1)", Syntax: "slot...",
		Summary: "Unassign slots from this node (cluster bus); refused in file mode."},
	OpClusterMeet: {Name: "cluster|meet", Arity: -4, Flags: clusterSet, ACL: clusterAdmin, Container: OpCluster,
		Group: "cluster", Since: "3.0.0", Complexity: "O(1)", Syntax: "ip port [cluster-bus-port]",
		Summary: "Start a cluster bus handshake with a node; in file mode, OK only for a node the file lists."},
	OpClusterForget: {Name: "cluster|forget", Arity: 3, Flags: clusterSet, ACL: clusterAdmin, Container: OpCluster,
		Group: "cluster", Since: "3.0.0", Complexity: "O(1)", Syntax: "node-id",
		Summary: "Remove a node from this node's table (cluster bus); refused in file mode."},
	OpClusterReplicate: {Name: "cluster|replicate", Arity: 3, Flags: clusterSet, ACL: clusterAdmin, Container: OpCluster,
		Group: "cluster", Since: "3.0.0", Complexity: "O(1)", Syntax: "node-id",
		Summary: "Make this node a replica of a master (cluster bus); refused in file mode."},
	OpClusterFailover: {Name: "cluster|failover", Arity: -2, Flags: clusterSet, ACL: clusterAdmin, Container: OpCluster,
		Group: "cluster", Since: "3.0.0", Complexity: "O(1)", Syntax: "[options=FORCE|TAKEOVER]",
		Summary: "Make this replica its master's master: a manual failover (the master pauses writes until the replica caught up), FORCE (no offset handshake) or TAKEOVER (no election)."},
	OpClusterReset: {Name: "cluster|reset", Arity: -2, Flags: Admin | Stale | NoScript, ACL: clusterAdmin, Container: OpCluster,
		Group: "cluster", Since: "3.0.0", Complexity: "O(1)", Syntax: "[reset-type=HARD|SOFT]",
		Summary: "Forget every node and slot (cluster bus); refused in file mode."},
	OpAsking: {Name: "asking", Arity: 1, Flags: Fast, ACL: CatFast | CatConnection,
		Group: "cluster", Since: "3.0.0", Complexity: "O(1)",
		Summary: "Let the next command reach a slot this node is importing (sent after an -ASK redirect)."},
	OpReadOnly: {Name: "readonly", Arity: 1, Flags: Loading | Stale | Fast, ACL: CatFast | CatConnection,
		Group: "cluster", Since: "3.0.0", Complexity: "O(1)",
		Summary: "READONLY lets a cluster replica serve this client's reads of its master's slots; READWRITE ends that."},
	OpReadWrite: {Name: "readwrite", Arity: 1, Flags: Loading | Stale | Fast, ACL: CatFast | CatConnection,
		Group: "cluster", Since: "3.0.0", Complexity: "O(1)",
		Summary: "READONLY lets a cluster replica serve this client's reads of its master's slots; READWRITE ends that."},
	OpMigrate: {Name: "migrate", Arity: -6, Flags: Write | MovableKeys, ACL: keyW | CatSlow | CatDangerous, Tips: nondet,
		Keys:  []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, Index: 3, KeyStep: 1}},
		Group: "generic", Since: "2.6.0", Complexity: "O(N) for N bytes moved, and a round trip to the target",
		Syntax:  "host port (key-selector=key|\"\") destination-db timeout [COPY] [REPLACE] [authentication=AUTH password|AUTH2 username password] [KEYS key...]",
		Summary: "Move keys to another goblin or Redis server (DUMP, RESTORE there, DEL here); waits for the target, up to timeout ms."},
	OpRestoreAsking: {Name: "restore-asking", Arity: -4, Flags: wrA | Asking, ACL: keyW | CatSlow | CatDangerous, Keys: key1OWUpdate,
		Group: "server", Since: "3.0.0", Complexity: "O(N) for a value of N bytes",
		Syntax:  "key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]",
		Summary: "RESTORE that reaches a slot this node is importing without ASKING: what MIGRATE sends in cluster mode."},
	OpACL: {Name: "acl", Arity: -2, ACL: CatSlow, Dispatch: true,
		Group: "server", Since: "6.0.0", Complexity: "Depends on subcommand.",
		Summary: "Users, their rules and the ACL log (docs/acl.md)."},
	OpACLCat: {Name: "acl|cat", Arity: -2, Flags: NoScript | Loading | Stale, ACL: CatSlow, Container: OpACL,
		Group: "server", Since: "6.0.0", Complexity: "O(1) since the categories and commands are a fixed set.", Syntax: "[categoryname]",
		Summary: "The ACL categories, or the commands in one."},
	OpACLDelUser: {Name: "acl|deluser", Arity: -3, Flags: aclAdmin, ACL: aclAdminCats, Container: OpACL,
		Group: "server", Since: "6.0.0", Complexity: "O(1) amortized time considering the typical user.", Syntax: "username...",
		Summary: "Delete users; clients authenticated as one are disconnected."},
	OpACLDryRun: {Name: "acl|dryrun", Arity: -4, Flags: aclAdmin, ACL: aclAdminCats, Container: OpACL,
		Group: "server", Since: "7.0.0", Complexity: "O(1).", Syntax: "username command [arg...]",
		Summary: "Whether the user may run the command with these arguments, without running it."},
	OpACLGenPass: {Name: "acl|genpass", Arity: -2, Flags: NoScript | Loading | Stale, ACL: CatSlow, Container: OpACL,
		Group: "server", Since: "6.0.0", Complexity: "O(1)", Syntax: "[bits:integer]",
		Summary: "A random password: 256 bits (or bits) of crypto randomness in hex."},
	OpACLGetUser: {Name: "acl|getuser", Arity: 3, Flags: aclAdmin, ACL: aclAdminCats, Container: OpACL,
		Group: "server", Since: "6.0.0", Complexity: "O(N). Where N is the number of password, command and pattern rules that the user has.", Syntax: "username",
		Summary: "A user's flags, passwords, commands, keys, channels and selectors."},
	OpACLList: {Name: "acl|list", Arity: 2, Flags: aclAdmin, ACL: aclAdminCats, Container: OpACL,
		Group: "server", Since: "6.0.0", Complexity: "O(N). Where N is the number of configured users.",
		Summary: "Every user as an aclfile line."},
	OpACLLoad: {Name: "acl|load", Arity: 2, Flags: aclAdmin, ACL: aclAdminCats, Container: OpACL,
		Group: "server", Since: "6.0.0", Complexity: "O(N). Where N is the number of configured users.",
		Summary: "Replace the users with those of the aclfile, all or none."},
	OpACLLog: {Name: "acl|log", Arity: -2, Flags: aclAdmin, ACL: aclAdminCats, Container: OpACL,
		Group: "server", Since: "6.0.0", Complexity: "O(N) with N being the number of entries shown.", Syntax: "[operation=count|RESET]",
		Summary: "The latest denials (commands, keys, failed AUTH), newest first; RESET empties the log."},
	OpACLSave: {Name: "acl|save", Arity: 2, Flags: aclAdmin, ACL: aclAdminCats, Container: OpACL,
		Group: "server", Since: "6.0.0", Complexity: "O(N). Where N is the number of configured users.",
		Summary: "Write the users to the aclfile."},
	OpACLSetUser: {Name: "acl|setuser", Arity: -3, Flags: aclAdmin, ACL: aclAdminCats, Container: OpACL,
		Group: "server", Since: "6.0.0", Complexity: "O(N). Where N is the number of rules provided.", Syntax: "username [rule...]",
		Summary: "Create a user or change its rules, all or none."},
	OpACLUsers: {Name: "acl|users", Arity: 2, Flags: aclAdmin, ACL: aclAdminCats, Container: OpACL,
		Group: "server", Since: "6.0.0", Complexity: "O(N). Where N is the number of configured users.",
		Summary: "The user names."},
	OpACLWhoAmI: {Name: "acl|whoami", Arity: 2, Flags: NoScript | Loading | Stale, ACL: CatSlow, Container: OpACL,
		Group: "server", Since: "6.0.0", Complexity: "O(1)",
		Summary: "The user this connection is authenticated as."},
	OpACLHelp: {Name: "acl|help", Arity: 2, Flags: Loading | Stale, ACL: CatSlow, Container: OpACL,
		Group: "server", Since: "6.0.0", Complexity: "O(1)",
		Summary: "The ACL subcommands."},
	OpSlowLog: {Name: "slowlog", Arity: -2, ACL: CatSlow, Dispatch: true,
		Group: "server", Since: "2.2.12", Complexity: "Depends on subcommand.",
		Summary: "The commands that took longer than slowlog-log-slower-than microseconds."},
	OpSlowLogGet: {Name: "slowlog|get", Arity: -2, Flags: Admin | Loading | Stale, ACL: aclAdminCats, Container: OpSlowLog,
		Tips:  "request_policy:all_nodes nondeterministic_output",
		Group: "server", Since: "2.2.12", Complexity: "O(N) where N is the number of entries returned", Syntax: "[count]",
		Summary: "The newest count entries (10; -1: all): id, unix time, microseconds, arguments, client address, client name."},
	OpSlowLogLen: {Name: "slowlog|len", Arity: 2, Flags: Admin | Loading | Stale, ACL: aclAdminCats, Container: OpSlowLog,
		Tips:  "request_policy:all_nodes response_policy:agg_sum nondeterministic_output",
		Group: "server", Since: "2.2.12", Complexity: "O(1)",
		Summary: "How many entries the slow log holds."},
	OpSlowLogReset: {Name: "slowlog|reset", Arity: 2, Flags: Admin | Loading | Stale, ACL: aclAdminCats, Container: OpSlowLog,
		Tips:  "request_policy:all_nodes response_policy:all_succeeded",
		Group: "server", Since: "2.2.12", Complexity: "O(N) where N is the number of entries in the slowlog",
		Summary: "Empty the slow log."},
	OpSlowLogHelp: {Name: "slowlog|help", Arity: 2, Flags: Loading | Stale, ACL: CatSlow, Container: OpSlowLog,
		Group: "server", Since: "6.2.0", Complexity: "O(1)",
		Summary: "The SLOWLOG subcommands."},
	// Pub/Sub.
	OpSubscribe: {Name: "subscribe", Arity: -2, Flags: PubSub | NoScript | Loading | Stale, ACL: CatPubSub | CatSlow,
		Group: "pubsub", Since: "2.0.0", Complexity: "O(N) where N is the number of channels to subscribe to.", Syntax: "channel...",
		Summary: "Receive the messages published to the channels."},
	OpUnsubscribe: {Name: "unsubscribe", Arity: -1, Flags: PubSub | NoScript | Loading | Stale, ACL: CatPubSub | CatSlow,
		Group: "pubsub", Since: "2.0.0", Complexity: "O(N) where N is the number of clients already subscribed to a channel.", Syntax: "[channel...]",
		Summary: "Stop receiving the channels' messages (every channel when none is named)."},
	OpPSubscribe: {Name: "psubscribe", Arity: -2, Flags: PubSub | NoScript | Loading | Stale, ACL: CatPubSub | CatSlow,
		Group: "pubsub", Since: "2.0.0", Complexity: "O(N) where N is the number of patterns the client is already subscribed to.", Syntax: "(pattern=pattern)...",
		Summary: "Receive the messages published to every channel matching the glob patterns."},
	OpPUnsubscribe: {Name: "punsubscribe", Arity: -1, Flags: PubSub | NoScript | Loading | Stale, ACL: CatPubSub | CatSlow,
		Group: "pubsub", Since: "2.0.0", Complexity: "O(N+M) where N is the number of patterns the client is already subscribed and M is the number of total patterns subscribed in the system (by any client).",
		Syntax: "[pattern...]", Summary: "Stop receiving the patterns' messages (every pattern when none is named)."},
	OpPublish: {Name: "publish", Arity: 3, Flags: PubSub | Loading | Stale | Fast, ACL: CatPubSub | CatFast,
		Group: "pubsub", Since: "2.0.0", Complexity: "O(N+M) where N is the number of clients subscribed to the receiving channel and M is the total number of subscribed patterns (by any client).",
		Syntax: "channel message", Summary: "Send a message to a channel's subscribers; returns how many received it."},
	OpPubSub: {Name: "pubsub", Arity: -2, ACL: CatSlow, Dispatch: true,
		Group: "pubsub", Since: "2.8.0", Complexity: "Depends on subcommand.",
		Summary: "The state of Pub/Sub: channels, subscriber counts, patterns."},
	OpPubSubChannels: {Name: "pubsub|channels", Arity: -2, Flags: PubSub | Loading | Stale, ACL: CatPubSub | CatSlow, Container: OpPubSub,
		Group: "pubsub", Since: "2.8.0", Complexity: "O(N) where N is the number of active channels, and assuming constant time pattern matching (relatively short channels and patterns)",
		Syntax: "[pattern]", Summary: "The channels with at least one subscriber (patterns not counted), those matching the pattern."},
	OpPubSubNumSub: {Name: "pubsub|numsub", Arity: -2, Flags: PubSub | Loading | Stale, ACL: CatPubSub | CatSlow, Container: OpPubSub,
		Group: "pubsub", Since: "2.8.0", Complexity: "O(N) for the NUMSUB subcommand, where N is the number of requested channels",
		Syntax: "[channel...]", Summary: "Each channel and its number of subscribers (patterns not counted)."},
	OpPubSubNumPat: {Name: "pubsub|numpat", Arity: 2, Flags: PubSub | Loading | Stale, ACL: CatPubSub | CatSlow, Container: OpPubSub,
		Group: "pubsub", Since: "2.8.0", Complexity: "O(1)",
		Summary: "How many distinct patterns have subscribers."},
	OpPubSubShardChannels: {Name: "pubsub|shardchannels", Arity: -2, Flags: PubSub | Loading | Stale, ACL: CatPubSub | CatSlow, Container: OpPubSub,
		Group: "pubsub", Since: "7.0.0", Complexity: "O(N) where N is the number of active shard channels, and assuming constant time pattern matching (relatively short shard channels).",
		Syntax: "[pattern]", Summary: "The shard channels with at least one subscriber, those matching the pattern."},
	OpPubSubShardNumSub: {Name: "pubsub|shardnumsub", Arity: -2, Flags: PubSub | Loading | Stale, ACL: CatPubSub | CatSlow, Container: OpPubSub,
		Group: "pubsub", Since: "7.0.0", Complexity: "O(N) for the SHARDNUMSUB subcommand, where N is the number of requested shard channels",
		Syntax: "[shardchannel...]", Summary: "Each shard channel and its number of subscribers."},
	OpPubSubHelp: {Name: "pubsub|help", Arity: 2, Flags: Loading | Stale, ACL: CatSlow, Container: OpPubSub,
		Group: "pubsub", Since: "6.2.0", Complexity: "O(1)",
		Summary: "The PUBSUB subcommands."},
	OpSSubscribe: {Name: "ssubscribe", Arity: -2, Flags: PubSub | NoScript | Loading | Stale, ACL: CatPubSub | CatSlow,
		Keys: []KeySpec{{Flags: KeyNotKey, Index: 1, LastKey: -1, KeyStep: 1}}, ReqKeys: ArgRange{0, 1},
		Group: "pubsub", Since: "7.0.0", Complexity: "O(N) where N is the number of shard channels to subscribe to.", Syntax: "shardchannel...",
		Summary: "Receive the messages published to the shard channels (in cluster mode, of one slot, on the node serving it)."},
	OpSUnsubscribe: {Name: "sunsubscribe", Arity: -1, Flags: PubSub | NoScript | Loading | Stale, ACL: CatPubSub | CatSlow,
		Keys: []KeySpec{{Flags: KeyNotKey, Index: 1, LastKey: -1, KeyStep: 1}}, ReqKeys: ArgRange{0, 1},
		Group: "pubsub", Since: "7.0.0", Complexity: "O(N) where N is the number of clients already subscribed to a shard channel.", Syntax: "[shardchannel...]",
		Summary: "Stop receiving the shard channels' messages (every shard channel when none is named)."},
	OpSPublish: {Name: "spublish", Arity: 3, Flags: PubSub | Loading | Stale | Fast, ACL: CatPubSub | CatFast,
		Keys:  []KeySpec{{Flags: KeyNotKey, Index: 1, KeyStep: 1}},
		Group: "pubsub", Since: "7.0.0", Complexity: "O(N) where N is the number of clients subscribed to the receiving shard channel.",
		Syntax: "shardchannel message", Summary: "Send a message to a shard channel's subscribers; returns how many received it."},
	// LATENCY (operations, 610-639).
	OpLatency: {Name: "latency", Arity: -2, ACL: CatSlow, Dispatch: true,
		Group: "server", Since: "2.8.13", Complexity: "Depends on subcommand.",
		Summary: "The latency monitor's events and the per-command latency histograms."},
	OpLatencyDoctor: {Name: "latency|doctor", Arity: 2, Flags: aclAdmin, ACL: aclAdminCats, Container: OpLatency,
		Tips:  "nondeterministic_output request_policy:all_nodes response_policy:special",
		Group: "server", Since: "2.8.13", Complexity: "O(1)",
		Summary: "Return a human readable latency analysis report."},
	OpLatencyGraph: {Name: "latency|graph", Arity: 3, Flags: aclAdmin, ACL: aclAdminCats, Container: OpLatency,
		Tips:  "nondeterministic_output request_policy:all_nodes response_policy:special",
		Group: "server", Since: "2.8.13", Complexity: "O(1)", Syntax: "event",
		Summary: "Return an ASCII latency graph for the <event> class."},
	OpLatencyHistogram: {Name: "latency|histogram", Arity: -2, Flags: aclAdmin, ACL: aclAdminCats, Container: OpLatency,
		Tips:  "nondeterministic_output request_policy:all_nodes response_policy:special",
		Group: "server", Since: "7.0.0", Complexity: "O(N) where N is the number of commands with latency information being retrieved.", Syntax: "[command...]",
		Summary: "Return a cumulative distribution of latencies in the format of a histogram for the specified command names."},
	OpLatencyHistory: {Name: "latency|history", Arity: 3, Flags: aclAdmin, ACL: aclAdminCats, Container: OpLatency,
		Tips:  "nondeterministic_output request_policy:all_nodes response_policy:special",
		Group: "server", Since: "2.8.13", Complexity: "O(1)", Syntax: "event",
		Summary: "Return time-latency samples for the <event> class."},
	OpLatencyLatest: {Name: "latency|latest", Arity: 2, Flags: aclAdmin, ACL: aclAdminCats, Container: OpLatency,
		Tips:  "nondeterministic_output request_policy:all_nodes response_policy:special",
		Group: "server", Since: "2.8.13", Complexity: "O(1)",
		Summary: "Return the latest latency samples for all events."},
	OpLatencyReset: {Name: "latency|reset", Arity: -2, Flags: aclAdmin, ACL: aclAdminCats, Container: OpLatency,
		Tips:  "request_policy:all_nodes response_policy:all_succeeded",
		Group: "server", Since: "2.8.13", Complexity: "O(1)", Syntax: "[event...]",
		Summary: "Reset latency data of one or more <event> classes."},
	OpLatencyHelp: {Name: "latency|help", Arity: 2, Flags: Loading | Stale, ACL: CatSlow, Container: OpLatency,
		Group: "server", Since: "2.8.13", Complexity: "O(1)",
		Summary: "Show helpful text about the different subcommands."},
	OpHSet: {Name: "hset", Arity: -4, Flags: Write | DenyOOM | Fast, ACL: CatWrite | CatHash | CatFast,
		Keys:  []KeySpec{{Flags: KeyRW | KeyUpdate, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "hash", Since: "2.0.0", Complexity: "O(N) for N pairs",
		Syntax:  "key (field_value=field value)...",
		Summary: "Store field values in a hash, creating it; returns how many fields are new."},
	OpHSetNX: {Name: "hsetnx", Arity: 4, Flags: Write | DenyOOM | Fast, ACL: CatWrite | CatHash | CatFast,
		Keys:  []KeySpec{{Flags: KeyRW | KeyInsert, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "hash", Since: "2.0.0", Complexity: "O(1)",
		Syntax:  "key field value",
		Summary: "Store a field's value only if the field is missing; 1 if stored, 0 if not."},
	OpHMSet: {Name: "hmset", Arity: -4, Flags: Write | DenyOOM | Fast, ACL: CatWrite | CatHash | CatFast,
		Keys:  []KeySpec{{Flags: KeyRW | KeyUpdate, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "hash", Since: "2.0.0", Complexity: "O(N) for N pairs",
		Syntax:  "key (field_value=field value)...",
		Summary: "Store field values in a hash (HSET answering OK)."},
	OpHGet: {Name: "hget", Arity: 3, Flags: Readonly | Fast, ACL: CatRead | CatHash | CatFast,
		Keys:  []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "hash", Since: "2.0.0", Complexity: "O(1)",
		Syntax:  "key field",
		Summary: "A field's value, or nil when the key or field is missing."},
	OpHMGet: {Name: "hmget", Arity: -3, Flags: Readonly | Fast, ACL: CatRead | CatHash | CatFast,
		Keys:  []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "hash", Since: "2.0.0", Complexity: "O(N) for N fields",
		Syntax:  "key field...",
		Summary: "The values of several fields; nil for each missing one."},
	OpHGetAll: {Name: "hgetall", Arity: 2, Flags: Readonly, ACL: CatRead | CatHash | CatSlow, Tips: "nondeterministic_output_order",
		Keys:  []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "hash", Since: "2.0.0", Complexity: "O(N) for a hash of N fields",
		Syntax:  "key",
		Summary: "Every field and value of a hash (a map in RESP3)."},
	OpHDel: {Name: "hdel", Arity: -3, Flags: Write | Fast, ACL: CatWrite | CatHash | CatFast,
		Keys:  []KeySpec{{Flags: KeyRW | KeyDelete, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "hash", Since: "2.0.0", Complexity: "O(N) for N fields",
		Syntax:  "key field...",
		Summary: "Remove fields from a hash; returns how many existed. An emptied hash is deleted."},
	OpHExists: {Name: "hexists", Arity: 3, Flags: Readonly | Fast, ACL: CatRead | CatHash | CatFast,
		Keys:  []KeySpec{{Flags: KeyRO, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "hash", Since: "2.0.0", Complexity: "O(1)",
		Syntax:  "key field",
		Summary: "1 if the hash has the field, else 0."},
	OpHLen: {Name: "hlen", Arity: 2, Flags: Readonly | Fast, ACL: CatRead | CatHash | CatFast,
		Keys:  []KeySpec{{Flags: KeyRO, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "hash", Since: "2.0.0", Complexity: "O(1)",
		Syntax:  "key",
		Summary: "The number of fields of a hash (0 when missing)."},
	OpHStrLen: {Name: "hstrlen", Arity: 3, Flags: Readonly | Fast, ACL: CatRead | CatHash | CatFast,
		Keys:  []KeySpec{{Flags: KeyRO, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "hash", Since: "3.2.0", Complexity: "O(1)",
		Syntax:  "key field",
		Summary: "The length of a field's value (0 when missing)."},
	OpHKeys: {Name: "hkeys", Arity: 2, Flags: Readonly, ACL: CatRead | CatHash | CatSlow, Tips: "nondeterministic_output_order",
		Keys:  []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "hash", Since: "2.0.0", Complexity: "O(N) for a hash of N fields",
		Syntax:  "key",
		Summary: "Every field of a hash."},
	OpHVals: {Name: "hvals", Arity: 2, Flags: Readonly, ACL: CatRead | CatHash | CatSlow, Tips: "nondeterministic_output_order",
		Keys:  []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "hash", Since: "2.0.0", Complexity: "O(N) for a hash of N fields",
		Syntax:  "key",
		Summary: "Every value of a hash."},
	OpHIncrBy: {Name: "hincrby", Arity: 4, Flags: Write | DenyOOM | Fast, ACL: CatWrite | CatHash | CatFast,
		Keys:  []KeySpec{{Flags: KeyRW | KeyAccess | KeyUpdate, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "hash", Since: "2.0.0", Complexity: "O(1)",
		Syntax:  "key field increment",
		Summary: "Add an integer to the integer in a hash field (0 when missing)."},
	OpHIncrByFloat: {Name: "hincrbyfloat", Arity: 4, Flags: Write | DenyOOM | Fast, ACL: CatWrite | CatHash | CatFast,
		Keys:  []KeySpec{{Flags: KeyRW | KeyAccess | KeyUpdate, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "hash", Since: "2.6.0", Complexity: "O(1)",
		Syntax:  "key field increment:double",
		Summary: "Add a decimal number to the number in a hash field, with Redis's long double arithmetic."},
	OpHRandField: {Name: "hrandfield", Arity: -2, Flags: Readonly, ACL: CatRead | CatHash | CatSlow, Tips: "nondeterministic_output",
		Keys:  []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "hash", Since: "6.2.0", Complexity: "O(N) for N fields returned",
		Syntax:  "key [options=count [WITHVALUES]]",
		Summary: "Random fields of a hash: one, count distinct, or -count with repeats; optionally with values."},
	OpHScan: {Name: "hscan", Arity: -3, Flags: Readonly, ACL: CatRead | CatHash | CatSlow, Tips: "nondeterministic_output",
		Keys:  []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "hash", Since: "2.8.0", Complexity: "O(1) per call; O(N) for a whole iteration",
		Syntax:  "key cursor [MATCH pattern] [COUNT count]",
		Summary: "Iterate a hash's fields and values by cursor, optionally filtered by a glob pattern."},
	OpSAdd: {Name: "sadd", Arity: -3, Flags: Write | DenyOOM | Fast, ACL: CatWrite | CatSet | CatFast,
		Keys:  []KeySpec{{Flags: KeyRW | KeyInsert, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "set", Since: "1.0.0", Complexity: "O(N) for N members",
		Syntax:  "key member...",
		Summary: "Add members to a set, creating it; returns how many are new."},
	OpSRem: {Name: "srem", Arity: -3, Flags: Write | Fast, ACL: CatWrite | CatSet | CatFast,
		Keys:  []KeySpec{{Flags: KeyRW | KeyDelete, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "set", Since: "1.0.0", Complexity: "O(N) for N members",
		Syntax:  "key member...",
		Summary: "Remove members from a set; returns how many were there. An emptied set is deleted."},
	OpSCard: {Name: "scard", Arity: 2, Flags: Readonly | Fast, ACL: CatRead | CatSet | CatFast,
		Keys:  []KeySpec{{Flags: KeyRO, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "set", Since: "1.0.0", Complexity: "O(1)",
		Syntax:  "key",
		Summary: "The number of members of a set (0 when missing)."},
	OpSIsMember: {Name: "sismember", Arity: 3, Flags: Readonly | Fast, ACL: CatRead | CatSet | CatFast,
		Keys:  []KeySpec{{Flags: KeyRO, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "set", Since: "1.0.0", Complexity: "O(1)",
		Syntax:  "key member",
		Summary: "1 if the set has the member, else 0."},
	OpSMIsMember: {Name: "smismember", Arity: -3, Flags: Readonly | Fast, ACL: CatRead | CatSet | CatFast,
		Keys:  []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "set", Since: "6.2.0", Complexity: "O(N) for N members",
		Syntax:  "key member...",
		Summary: "For each member, 1 if the set has it, else 0."},
	OpSMembers: {Name: "smembers", Arity: 2, Flags: Readonly, ACL: CatRead | CatSet | CatSlow, Tips: "nondeterministic_output_order",
		Keys:  []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "set", Since: "1.0.0", Complexity: "O(N) for a set of N members",
		Syntax:  "key",
		Summary: "Every member of a set (a set in RESP3)."},
	OpSRandMember: {Name: "srandmember", Arity: -2, Flags: Readonly, ACL: CatRead | CatSet | CatSlow, Tips: "nondeterministic_output",
		Keys:  []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "set", Since: "1.0.0", Complexity: "O(N) for N members returned",
		Syntax:  "key [count]",
		Summary: "Random members of a set: one, count distinct, or -count with repeats."},
	OpSPop: {Name: "spop", Arity: -2, Flags: Write | Fast, ACL: CatWrite | CatSet | CatFast, Tips: "nondeterministic_output",
		Keys:  []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "set", Since: "1.0.0", Complexity: "O(N) for N members returned",
		Syntax:  "key [count]",
		Summary: "Remove and return random members of a set."},
	OpSMove: {Name: "smove", Arity: 4, Flags: Write | Fast, ACL: CatWrite | CatSet | CatFast,
		Keys: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}, {Flags: KeyRW | KeyInsert, Index: 2, LastKey: 0, KeyStep: 1, Limit: 0}}, ReqKeys: FirstArg,
		Group: "set", Since: "1.0.0", Complexity: "O(1)",
		Syntax:  "source destination member",
		Summary: "Move a member from one set to another; 1 if moved, 0 if the source lacks it."},
	OpSInter: {Name: "sinter", Arity: -2, Flags: Readonly, ACL: CatRead | CatSet | CatSlow, Tips: "nondeterministic_output_order",
		Keys: []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: -1, KeyStep: 1, Limit: 0}}, ReqKeys: ArgRange{0, 1},
		Group: "set", Since: "1.0.0", Complexity: "O(N*M): N members of the smallest set, M sets",
		Syntax:  "key...",
		Summary: "The members every given set has."},
	OpSInterStore: {Name: "sinterstore", Arity: -3, Flags: Write | DenyOOM, ACL: CatWrite | CatSet | CatSlow,
		Keys: []KeySpec{{Flags: KeyRW | KeyUpdate, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}, {Flags: KeyRO | KeyAccess, Index: 2, LastKey: -1, KeyStep: 1, Limit: 0}}, ReqKeys: ArgRange{0, 1},
		Group: "set", Since: "1.0.0", Complexity: "O(N*M): N members of the smallest set, M sets",
		Syntax:  "destination key...",
		Summary: "Store the intersection of sets in a key; returns its size."},
	OpSUnion: {Name: "sunion", Arity: -2, Flags: Readonly, ACL: CatRead | CatSet | CatSlow, Tips: "nondeterministic_output_order",
		Keys: []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: -1, KeyStep: 1, Limit: 0}}, ReqKeys: ArgRange{0, 1},
		Group: "set", Since: "1.0.0", Complexity: "O(N) for N members in all",
		Syntax:  "key...",
		Summary: "The members any given set has."},
	OpSUnionStore: {Name: "sunionstore", Arity: -3, Flags: Write | DenyOOM, ACL: CatWrite | CatSet | CatSlow,
		Keys: []KeySpec{{Flags: KeyOW | KeyUpdate, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}, {Flags: KeyRO | KeyAccess, Index: 2, LastKey: -1, KeyStep: 1, Limit: 0}}, ReqKeys: ArgRange{0, 1},
		Group: "set", Since: "1.0.0", Complexity: "O(N) for N members in all",
		Syntax:  "destination key...",
		Summary: "Store the union of sets in a key; returns its size."},
	OpSDiff: {Name: "sdiff", Arity: -2, Flags: Readonly, ACL: CatRead | CatSet | CatSlow, Tips: "nondeterministic_output_order",
		Keys: []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: -1, KeyStep: 1, Limit: 0}}, ReqKeys: ArgRange{0, 1},
		Group: "set", Since: "1.0.0", Complexity: "O(N) for N members in all",
		Syntax:  "key...",
		Summary: "The members of the first set that no other given set has."},
	OpSDiffStore: {Name: "sdiffstore", Arity: -3, Flags: Write | DenyOOM, ACL: CatWrite | CatSet | CatSlow,
		Keys: []KeySpec{{Flags: KeyOW | KeyUpdate, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}, {Flags: KeyRO | KeyAccess, Index: 2, LastKey: -1, KeyStep: 1, Limit: 0}}, ReqKeys: ArgRange{0, 1},
		Group: "set", Since: "1.0.0", Complexity: "O(N) for N members in all",
		Syntax:  "destination key...",
		Summary: "Store the difference of sets in a key; returns its size."},
	OpSScan: {Name: "sscan", Arity: -3, Flags: Readonly, ACL: CatRead | CatSet | CatSlow, Tips: "nondeterministic_output",
		Keys:  []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "set", Since: "2.8.0", Complexity: "O(1) per call; O(N) for a whole iteration",
		Syntax:  "key cursor [MATCH pattern] [COUNT count]",
		Summary: "Iterate a set's members by cursor, optionally filtered by a glob pattern."},
	OpLPush: {Name: "lpush", Arity: -3, Flags: Write | DenyOOM | Fast, ACL: CatWrite | CatList | CatFast,
		Keys:  []KeySpec{{Flags: KeyRW | KeyInsert, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "list", Since: "1.0.0", Complexity: "O(N) for N elements",
		Syntax:  "key element...",
		Summary: "Add elements at the head of a list, creating it; returns its length."},
	OpRPush: {Name: "rpush", Arity: -3, Flags: Write | DenyOOM | Fast, ACL: CatWrite | CatList | CatFast,
		Keys:  []KeySpec{{Flags: KeyRW | KeyInsert, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "list", Since: "1.0.0", Complexity: "O(N) for N elements",
		Syntax:  "key element...",
		Summary: "Add elements at the tail of a list, creating it; returns its length."},
	OpLPushX: {Name: "lpushx", Arity: -3, Flags: Write | DenyOOM | Fast, ACL: CatWrite | CatList | CatFast,
		Keys:  []KeySpec{{Flags: KeyRW | KeyInsert, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "list", Since: "2.2.0", Complexity: "O(N) for N elements",
		Syntax:  "key element...",
		Summary: "LPUSH only when the list exists; 0 otherwise."},
	OpRPushX: {Name: "rpushx", Arity: -3, Flags: Write | DenyOOM | Fast, ACL: CatWrite | CatList | CatFast,
		Keys:  []KeySpec{{Flags: KeyRW | KeyInsert, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "list", Since: "2.2.0", Complexity: "O(N) for N elements",
		Syntax:  "key element...",
		Summary: "RPUSH only when the list exists; 0 otherwise."},
	OpLPop: {Name: "lpop", Arity: -2, Flags: Write | Fast, ACL: CatWrite | CatList | CatFast,
		Keys:  []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "list", Since: "1.0.0", Complexity: "O(N) for N elements returned",
		Syntax:  "key [count]",
		Summary: "Remove and return the first element, or the first count. An emptied list is deleted."},
	OpRPop: {Name: "rpop", Arity: -2, Flags: Write | Fast, ACL: CatWrite | CatList | CatFast,
		Keys:  []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "list", Since: "1.0.0", Complexity: "O(N) for N elements returned",
		Syntax:  "key [count]",
		Summary: "Remove and return the last element, or the last count. An emptied list is deleted."},
	OpLLen: {Name: "llen", Arity: 2, Flags: Readonly | Fast, ACL: CatRead | CatList | CatFast,
		Keys:  []KeySpec{{Flags: KeyRO, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "list", Since: "1.0.0", Complexity: "O(1)",
		Syntax:  "key",
		Summary: "The length of a list (0 when missing)."},
	OpLIndex: {Name: "lindex", Arity: 3, Flags: Readonly, ACL: CatRead | CatList | CatSlow,
		Keys:  []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "list", Since: "1.0.0", Complexity: "O(N) for the N elements walked to reach it",
		Syntax:  "key index",
		Summary: "The element at an index (negative from the end), or nil."},
	OpLSet: {Name: "lset", Arity: 4, Flags: Write | DenyOOM, ACL: CatWrite | CatList | CatSlow,
		Keys:  []KeySpec{{Flags: KeyRW | KeyUpdate, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "list", Since: "1.0.0", Complexity: "O(N) for the N elements walked to reach it",
		Syntax:  "key index element",
		Summary: "Replace the element at an index."},
	OpLRange: {Name: "lrange", Arity: 4, Flags: Readonly, ACL: CatRead | CatList | CatSlow,
		Keys:  []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "list", Since: "1.0.0", Complexity: "O(S+N): S elements walked to start, N returned",
		Syntax:  "key start stop:integer",
		Summary: "The elements from start to stop, inclusive (negative indexes from the end)."},
	OpLTrim: {Name: "ltrim", Arity: 4, Flags: Write, ACL: CatWrite | CatList | CatSlow,
		Keys:  []KeySpec{{Flags: KeyRW | KeyDelete, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "list", Since: "1.0.0", Complexity: "O(N) for N elements removed",
		Syntax:  "key start stop:integer",
		Summary: "Keep only the elements from start to stop, inclusive."},
	OpLRem: {Name: "lrem", Arity: 4, Flags: Write, ACL: CatWrite | CatList | CatSlow,
		Keys:  []KeySpec{{Flags: KeyRW | KeyDelete, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "list", Since: "1.0.0", Complexity: "O(N) for a list of N elements",
		Syntax:  "key count element",
		Summary: "Remove the first count occurrences of an element (from the tail if negative, all if 0)."},
	OpLInsert: {Name: "linsert", Arity: 5, Flags: Write | DenyOOM, ACL: CatWrite | CatList | CatSlow,
		Keys:  []KeySpec{{Flags: KeyRW | KeyInsert, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "list", Since: "2.2.0", Complexity: "O(N) for the N elements walked to the pivot",
		Syntax:  "key (where=BEFORE|AFTER) pivot element",
		Summary: "Insert an element before or after the first occurrence of a pivot; the new length, or -1."},
	OpLPos: {Name: "lpos", Arity: -3, Flags: Readonly, ACL: CatRead | CatList | CatSlow,
		Keys:  []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "list", Since: "6.0.6", Complexity: "O(N) for the N elements walked",
		Syntax:  "key element [RANK rank:integer] [COUNT num-matches:integer] [MAXLEN len]",
		Summary: "The index of matching elements, with RANK, COUNT and MAXLEN."},
	OpLMove: {Name: "lmove", Arity: 5, Flags: Write | DenyOOM, ACL: CatWrite | CatList | CatSlow,
		Keys: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}, {Flags: KeyRW | KeyInsert, Index: 2, LastKey: 0, KeyStep: 1, Limit: 0}}, ReqKeys: FirstArg,
		Group: "list", Since: "6.2.0", Complexity: "O(1)",
		Syntax:  "source destination (wherefrom=LEFT|RIGHT) (whereto=LEFT|RIGHT)",
		Summary: "Pop an element from one end of a list and push it at one end of another."},
	OpRPopLPush: {Name: "rpoplpush", Arity: 3, Flags: Write | DenyOOM, ACL: CatWrite | CatList | CatSlow,
		Keys: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}, {Flags: KeyRW | KeyInsert, Index: 2, LastKey: 0, KeyStep: 1, Limit: 0}}, ReqKeys: ArgRange{0, 1},
		Group: "list", Since: "1.2.0", Complexity: "O(1)",
		Syntax:  "source destination",
		Summary: "Pop the last element of a list and push it at the head of another (LMOVE RIGHT LEFT)."},
	// Sorted sets, and the keynum commands of sets and lists.
	OpZAdd: {Name: "zadd", Arity: -4, Flags: Write | DenyOOM | Fast, ACL: CatWrite | CatSortedSet | CatFast,
		Keys:  []KeySpec{{Flags: KeyRW | KeyUpdate, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "sorted-set", Since: "1.2.0", Complexity: "O(log N) per member",
		Syntax:  "key [condition=NX|XX] [comparison=GT|LT] [change=CH] [increment=INCR] (score_member=score:double member)...",
		Summary: "Add members with scores to a sorted set, or update their scores; returns how many are new (or changed, with CH)."},
	OpZIncrBy: {Name: "zincrby", Arity: 4, Flags: Write | DenyOOM | Fast, ACL: CatWrite | CatSortedSet | CatFast,
		Keys:  []KeySpec{{Flags: KeyRW | KeyAccess | KeyUpdate, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "sorted-set", Since: "1.2.0", Complexity: "O(log N)",
		Syntax:  "key increment member",
		Summary: "Add to a member's score (0 when new); returns the new score."},
	OpZCard: {Name: "zcard", Arity: 2, Flags: Readonly | Fast, ACL: CatRead | CatSortedSet | CatFast,
		Keys:  []KeySpec{{Flags: KeyRO, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "sorted-set", Since: "1.2.0", Complexity: "O(1)",
		Syntax:  "key",
		Summary: "The number of members of a sorted set."},
	OpZCount: {Name: "zcount", Arity: 4, Flags: Readonly | Fast, ACL: CatRead | CatSortedSet | CatFast,
		Keys:  []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "sorted-set", Since: "2.0.0", Complexity: "O(log N)",
		Syntax:  "key min:double max:double",
		Summary: "How many members have a score between min and max."},
	OpZLexCount: {Name: "zlexcount", Arity: 4, Flags: Readonly | Fast, ACL: CatRead | CatSortedSet | CatFast,
		Keys:  []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "sorted-set", Since: "2.8.9", Complexity: "O(log N)",
		Syntax:  "key min max",
		Summary: "How many members lie between two members, in byte order (scores all equal)."},
	OpZScore: {Name: "zscore", Arity: 3, Flags: Readonly | Fast, ACL: CatRead | CatSortedSet | CatFast,
		Keys:  []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "sorted-set", Since: "1.2.0", Complexity: "O(1)",
		Syntax:  "key member",
		Summary: "A member's score, or nil."},
	OpZMScore: {Name: "zmscore", Arity: -3, Flags: Readonly | Fast, ACL: CatRead | CatSortedSet | CatFast,
		Keys:  []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "sorted-set", Since: "6.2.0", Complexity: "O(N) for N members",
		Syntax:  "key member...",
		Summary: "The scores of several members (nil for each one missing)."},
	OpZRank: {Name: "zrank", Arity: 3, Flags: Readonly | Fast, ACL: CatRead | CatSortedSet | CatFast,
		Keys:  []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "sorted-set", Since: "2.0.0", Complexity: "O(log N)",
		Syntax:  "key member",
		Summary: "A member's rank, lowest score first, or nil."},
	OpZRevRank: {Name: "zrevrank", Arity: 3, Flags: Readonly | Fast, ACL: CatRead | CatSortedSet | CatFast,
		Keys:  []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "sorted-set", Since: "2.0.0", Complexity: "O(log N)",
		Syntax:  "key member",
		Summary: "A member's rank, highest score first, or nil."},
	OpZRange: {Name: "zrange", Arity: -4, Flags: Readonly, ACL: CatRead | CatSortedSet | CatSlow,
		Keys:  []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "sorted-set", Since: "1.2.0", Complexity: "O(log N + M) for M members returned",
		Syntax:  "key start:string stop:string [sortby=BYSCORE|BYLEX] [REV] [offset_count=LIMIT offset count] [WITHSCORES]",
		Summary: "Members by rank, score or lex range, optionally reversed, paged and with scores."},
	OpZRangeByScore: {Name: "zrangebyscore", Arity: -4, Flags: Readonly, ACL: CatRead | CatSortedSet | CatSlow,
		Keys:  []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "sorted-set", Since: "1.0.5", Complexity: "O(log N + M) for M members returned",
		Syntax:  "key min:double max:double [WITHSCORES] [offset_count=LIMIT offset count]",
		Summary: "Members with scores between min and max, lowest first."},
	OpZRevRangeByScore: {Name: "zrevrangebyscore", Arity: -4, Flags: Readonly, ACL: CatRead | CatSortedSet | CatSlow,
		Keys:  []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "sorted-set", Since: "2.2.0", Complexity: "O(log N + M) for M members returned",
		Syntax:  "key max:double min:double [WITHSCORES] [offset_count=LIMIT offset count]",
		Summary: "Members with scores between max and min, highest first."},
	OpZRangeByLex: {Name: "zrangebylex", Arity: -4, Flags: Readonly, ACL: CatRead | CatSortedSet | CatSlow,
		Keys:  []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "sorted-set", Since: "2.8.9", Complexity: "O(log N + M) for M members returned",
		Syntax:  "key min max [offset_count=LIMIT offset count]",
		Summary: "Members between two members in byte order, first to last."},
	OpZRevRangeByLex: {Name: "zrevrangebylex", Arity: -4, Flags: Readonly, ACL: CatRead | CatSortedSet | CatSlow,
		Keys:  []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "sorted-set", Since: "2.8.9", Complexity: "O(log N + M) for M members returned",
		Syntax:  "key max min [offset_count=LIMIT offset count]",
		Summary: "Members between two members in byte order, last to first."},
	OpZRevRange: {Name: "zrevrange", Arity: -4, Flags: Readonly, ACL: CatRead | CatSortedSet | CatSlow,
		Keys:  []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "sorted-set", Since: "1.2.0", Complexity: "O(log N + M) for M members returned",
		Syntax:  "key start stop:integer [WITHSCORES]",
		Summary: "Members by rank, highest score first."},
	OpZRangeStore: {Name: "zrangestore", Arity: -5, Flags: Write | DenyOOM, ACL: CatWrite | CatSortedSet | CatSlow,
		Keys: []KeySpec{{Flags: KeyOW | KeyUpdate, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}, {Flags: KeyRO | KeyAccess, Index: 2, LastKey: 0, KeyStep: 1, Limit: 0}}, ReqKeys: FirstArg,
		Group: "sorted-set", Since: "6.2.0", Complexity: "O(log N + M) for M members stored",
		Syntax:  "dst:key src:key min max [sortby=BYSCORE|BYLEX] [REV] [offset_count=LIMIT offset count]",
		Summary: "Store a ZRANGE's members and scores in a key; returns how many."},
	OpZRem: {Name: "zrem", Arity: -3, Flags: Write | Fast, ACL: CatWrite | CatSortedSet | CatFast,
		Keys:  []KeySpec{{Flags: KeyRW | KeyDelete, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "sorted-set", Since: "1.2.0", Complexity: "O(M log N) for M members",
		Syntax:  "key member...",
		Summary: "Remove members; returns how many were there. An emptied sorted set is deleted."},
	OpZRemRangeByRank: {Name: "zremrangebyrank", Arity: 4, Flags: Write, ACL: CatWrite | CatSortedSet | CatSlow,
		Keys:  []KeySpec{{Flags: KeyRW | KeyDelete, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "sorted-set", Since: "2.0.0", Complexity: "O(log N + M) for M members removed",
		Syntax:  "key start stop:integer",
		Summary: "Remove the members of a rank range; returns how many."},
	OpZRemRangeByScore: {Name: "zremrangebyscore", Arity: 4, Flags: Write, ACL: CatWrite | CatSortedSet | CatSlow,
		Keys:  []KeySpec{{Flags: KeyRW | KeyDelete, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "sorted-set", Since: "1.2.0", Complexity: "O(log N + M) for M members removed",
		Syntax:  "key min:double max:double",
		Summary: "Remove the members with scores in a range; returns how many."},
	OpZRemRangeByLex: {Name: "zremrangebylex", Arity: 4, Flags: Write, ACL: CatWrite | CatSortedSet | CatSlow,
		Keys:  []KeySpec{{Flags: KeyRW | KeyDelete, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "sorted-set", Since: "2.8.9", Complexity: "O(log N + M) for M members removed",
		Syntax:  "key min max",
		Summary: "Remove the members between two members in byte order; returns how many."},
	OpZPopMin: {Name: "zpopmin", Arity: -2, Flags: Write | Fast, ACL: CatWrite | CatSortedSet | CatFast,
		Keys:  []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "sorted-set", Since: "5.0.0", Complexity: "O(log N * M) for M members popped",
		Syntax:  "key [count]",
		Summary: "Remove and return the members with the lowest scores."},
	OpZPopMax: {Name: "zpopmax", Arity: -2, Flags: Write | Fast, ACL: CatWrite | CatSortedSet | CatFast,
		Keys:  []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "sorted-set", Since: "5.0.0", Complexity: "O(log N * M) for M members popped",
		Syntax:  "key [count]",
		Summary: "Remove and return the members with the highest scores."},
	OpZRandMember: {Name: "zrandmember", Arity: -2, Flags: Readonly, ACL: CatRead | CatSortedSet | CatSlow, Tips: "nondeterministic_output",
		Keys:  []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "sorted-set", Since: "6.2.0", Complexity: "O(N) for N members returned",
		Syntax:  "key [options=count [WITHSCORES]]",
		Summary: "Random members: distinct for a positive count, possibly repeated for a negative one."},
	OpZScan: {Name: "zscan", Arity: -3, Flags: Readonly, ACL: CatRead | CatSortedSet | CatSlow, Tips: "nondeterministic_output",
		Keys:  []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}},
		Group: "sorted-set", Since: "2.8.0", Complexity: "O(1) per call; O(N) for a whole iteration",
		Syntax:  "key cursor [MATCH pattern] [COUNT count]",
		Summary: "Iterate a sorted set's members and scores by cursor, optionally filtered by a glob pattern."},
	OpZUnion: {Name: "zunion", Arity: -3, Flags: Readonly | MovableKeys, ACL: CatRead | CatSortedSet | CatSlow,
		Keys: []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, KeyStep: 1}}, ReqKeys: ArgRange{0, 1}, Counted: 1,
		Group: "sorted-set", Since: "6.2.0", Complexity: "O(N) + O(M log M) for N input members and M in the result",
		Syntax:  "numkeys key... [WEIGHTS weight:integer...] [aggregate=AGGREGATE (SUM|MIN|MAX)] [WITHSCORES]",
		Summary: "The union of sorted sets (and sets, scored 1), with weights and an aggregate."},
	OpZInter: {Name: "zinter", Arity: -3, Flags: Readonly | MovableKeys, ACL: CatRead | CatSortedSet | CatSlow,
		Keys: []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, KeyStep: 1}}, ReqKeys: ArgRange{0, 1}, Counted: 1,
		Group: "sorted-set", Since: "6.2.0", Complexity: "O(N*K) + O(M log M): N members of the smallest input, K inputs, M in the result",
		Syntax:  "numkeys key... [WEIGHTS weight:integer...] [aggregate=AGGREGATE (SUM|MIN|MAX)] [WITHSCORES]",
		Summary: "The intersection of sorted sets (and sets, scored 1), with weights and an aggregate."},
	OpZDiff: {Name: "zdiff", Arity: -3, Flags: Readonly | MovableKeys, ACL: CatRead | CatSortedSet | CatSlow,
		Keys: []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, KeyStep: 1}}, ReqKeys: ArgRange{0, 1}, Counted: 1,
		Group: "sorted-set", Since: "6.2.0", Complexity: "O(L + (N-K) log N) for L input members",
		Syntax:  "numkeys key... [WITHSCORES]",
		Summary: "The members of the first sorted set that no other input has."},
	OpZUnionStore: {Name: "zunionstore", Arity: -4, Flags: Write | DenyOOM | MovableKeys, ACL: CatWrite | CatSortedSet | CatSlow,
		Keys: []KeySpec{{Flags: KeyOW | KeyUpdate, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}, {Flags: KeyRO | KeyAccess, Index: 2, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, KeyStep: 1}}, ReqKeys: ArgRange{0, 1}, Counted: 2,
		Group: "sorted-set", Since: "2.0.0", Complexity: "O(N) + O(M log M) for N input members and M in the result",
		Syntax:  "destination numkeys key... [WEIGHTS weight:integer...] [aggregate=AGGREGATE (SUM|MIN|MAX)]",
		Summary: "Store the union of sorted sets in a key; returns its size."},
	OpZInterStore: {Name: "zinterstore", Arity: -4, Flags: Write | DenyOOM | MovableKeys, ACL: CatWrite | CatSortedSet | CatSlow,
		Keys: []KeySpec{{Flags: KeyOW | KeyUpdate, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}, {Flags: KeyRO | KeyAccess, Index: 2, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, KeyStep: 1}}, ReqKeys: ArgRange{0, 1}, Counted: 2,
		Group: "sorted-set", Since: "2.0.0", Complexity: "O(N*K) + O(M log M): N members of the smallest input, K inputs, M in the result",
		Syntax:  "destination numkeys key... [WEIGHTS weight:integer...] [aggregate=AGGREGATE (SUM|MIN|MAX)]",
		Summary: "Store the intersection of sorted sets in a key; returns its size."},
	OpZDiffStore: {Name: "zdiffstore", Arity: -4, Flags: Write | DenyOOM | MovableKeys, ACL: CatWrite | CatSortedSet | CatSlow,
		Keys: []KeySpec{{Flags: KeyOW | KeyUpdate, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}, {Flags: KeyRO | KeyAccess, Index: 2, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, KeyStep: 1}}, ReqKeys: ArgRange{0, 1}, Counted: 2,
		Group: "sorted-set", Since: "6.2.0", Complexity: "O(L + (N-K) log N) for L input members",
		Syntax:  "destination numkeys key...",
		Summary: "Store the difference of sorted sets in a key; returns its size."},
	OpZInterCard: {Name: "zintercard", Arity: -3, Flags: Readonly | MovableKeys, ACL: CatRead | CatSortedSet | CatSlow,
		Keys: []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, KeyStep: 1}}, ReqKeys: ArgRange{0, 1}, Counted: 1,
		Group: "sorted-set", Since: "7.0.0", Complexity: "O(N*K): N members of the smallest input, K inputs",
		Syntax:  "numkeys key... [LIMIT limit:integer]",
		Summary: "How many members every given sorted set has, counting up to a limit."},
	OpZMPop: {Name: "zmpop", Arity: -4, Flags: Write | MovableKeys, ACL: CatWrite | CatSortedSet | CatSlow,
		Keys: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, Index: 1, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, KeyStep: 1}}, ReqKeys: ArgRange{0, 1}, Counted: 1,
		Group: "sorted-set", Since: "7.0.0", Complexity: "O(K) + O(M log N) for M members popped",
		Syntax:  "numkeys key... (where=MIN|MAX) [COUNT count]",
		Summary: "Pop members with the lowest or highest scores from the first non-empty sorted set of several."},
	OpSInterCard: {Name: "sintercard", Arity: -3, Flags: Readonly | MovableKeys, ACL: CatRead | CatSet | CatSlow,
		Keys: []KeySpec{{Flags: KeyRO | KeyAccess, Index: 1, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, KeyStep: 1}}, ReqKeys: ArgRange{0, 1}, Counted: 1,
		Group: "set", Since: "7.0.0", Complexity: "O(N*M): N members of the smallest set, M sets",
		Syntax:  "numkeys key... [LIMIT limit:integer]",
		Summary: "How many members every given set has, counting up to a limit."},
	OpLMPop: {Name: "lmpop", Arity: -4, Flags: Write | MovableKeys, ACL: CatWrite | CatList | CatSlow,
		Keys: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, Index: 1, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, KeyStep: 1}}, ReqKeys: ArgRange{0, 1}, Counted: 1,
		Group: "list", Since: "7.0.0", Complexity: "O(N+M) for N keys and M elements popped",
		Syntax:  "numkeys key... (where=LEFT|RIGHT) [COUNT count]",
		Summary: "Pop elements from one end of the first non-empty list of several."},
	// The blocking pops of lists and sorted sets: the keys before a last
	// timeout (Counted 3), or a keynum after the timeout.
	OpBLPop: {Name: "blpop", Arity: -3, Flags: Write | NoScript | Blocking, ACL: CatWrite | CatList | CatSlow | CatBlocking,
		Keys: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, Index: 1, LastKey: -2, KeyStep: 1, Limit: 0}}, ReqKeys: ArgRange{0, 1}, Counted: 3,
		Group: "list", Since: "2.0.0", Complexity: "O(N) for N keys",
		Syntax:  "key... timeout:double",
		Summary: "LPOP from the first non-empty list of several, or block until one has an element (timeout in seconds, 0: for ever)."},
	OpBRPop: {Name: "brpop", Arity: -3, Flags: Write | NoScript | Blocking, ACL: CatWrite | CatList | CatSlow | CatBlocking,
		Keys: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, Index: 1, LastKey: -2, KeyStep: 1, Limit: 0}}, ReqKeys: ArgRange{0, 1}, Counted: 3,
		Group: "list", Since: "2.0.0", Complexity: "O(N) for N keys",
		Syntax:  "key... timeout:double",
		Summary: "RPOP from the first non-empty list of several, or block until one has an element."},
	OpBLMove: {Name: "blmove", Arity: 6, Flags: Write | DenyOOM | NoScript | Blocking, ACL: CatWrite | CatList | CatSlow | CatBlocking,
		Keys: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}, {Flags: KeyRW | KeyInsert, Index: 2, LastKey: 0, KeyStep: 1, Limit: 0}}, ReqKeys: FirstArg,
		Group: "list", Since: "6.2.0", Complexity: "O(1)",
		Syntax:  "source destination (wherefrom=LEFT|RIGHT) (whereto=LEFT|RIGHT) timeout:double",
		Summary: "LMOVE, or block until the source has an element."},
	OpBRPopLPush: {Name: "brpoplpush", Arity: 4, Flags: Write | DenyOOM | NoScript | Blocking, ACL: CatWrite | CatList | CatSlow | CatBlocking,
		Keys: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, Index: 1, LastKey: 0, KeyStep: 1, Limit: 0}, {Flags: KeyRW | KeyInsert, Index: 2, LastKey: 0, KeyStep: 1, Limit: 0}}, ReqKeys: FirstArg,
		Group: "list", Since: "2.2.0", Complexity: "O(1)",
		Syntax:  "source destination timeout:double",
		Summary: "RPOPLPUSH, or block until the source has an element."},
	OpBLMPop: {Name: "blmpop", Arity: -5, Flags: Write | Blocking | MovableKeys, ACL: CatWrite | CatList | CatSlow | CatBlocking,
		Keys: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, Index: 2, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, KeyStep: 1}}, ReqKeys: ArgRange{0, 1}, Counted: 1,
		Group: "list", Since: "7.0.0", Complexity: "O(N+M) for N keys and M elements popped",
		Syntax:  "timeout:double numkeys key... (where=LEFT|RIGHT) [COUNT count]",
		Summary: "LMPOP, or block until one of the lists has an element."},
	OpBZPopMin: {Name: "bzpopmin", Arity: -3, Flags: Write | NoScript | Blocking | Fast, ACL: CatWrite | CatSortedSet | CatFast | CatBlocking,
		Keys: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, Index: 1, LastKey: -2, KeyStep: 1, Limit: 0}}, ReqKeys: ArgRange{0, 1}, Counted: 3,
		Group: "sorted-set", Since: "5.0.0", Complexity: "O(log N) for N members",
		Syntax:  "key... timeout:double",
		Summary: "ZPOPMIN from the first non-empty sorted set of several, or block until one has a member."},
	OpBZPopMax: {Name: "bzpopmax", Arity: -3, Flags: Write | NoScript | Blocking | Fast, ACL: CatWrite | CatSortedSet | CatFast | CatBlocking,
		Keys: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, Index: 1, LastKey: -2, KeyStep: 1, Limit: 0}}, ReqKeys: ArgRange{0, 1}, Counted: 3,
		Group: "sorted-set", Since: "5.0.0", Complexity: "O(log N) for N members",
		Syntax:  "key... timeout:double",
		Summary: "ZPOPMAX from the first non-empty sorted set of several, or block until one has a member."},
	OpBZMPop: {Name: "bzmpop", Arity: -5, Flags: Write | Blocking | MovableKeys, ACL: CatWrite | CatSortedSet | CatSlow | CatBlocking,
		Keys: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, Index: 2, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, KeyStep: 1}}, ReqKeys: ArgRange{0, 1}, Counted: 1,
		Group: "sorted-set", Since: "7.0.0", Complexity: "O(K) + O(M log N) for K keys and M members popped",
		Syntax:  "timeout:double numkeys key... (where=MIN|MAX) [COUNT count]",
		Summary: "ZMPOP, or block until one of the sorted sets has a member."},
	// The cluster bus's CLUSTER subcommands (--cluster-enabled, docs/cluster.md).
	OpClusterDelSlotsRange: {Name: "cluster|delslotsrange", Arity: -4, Flags: clusterSet, ACL: clusterAdmin, Container: OpCluster,
		Group: "cluster", Since: "7.0.0", Complexity: "O(N) where N is the total number of the slots between the start slot and end slot arguments.",
		Syntax: "(range=start-slot end-slot)...", Summary: "Unassign ranges of slots from this node (cluster bus)."},
	OpClusterFlushSlots: {Name: "cluster|flushslots", Arity: 2, Flags: clusterSet, ACL: clusterAdmin, Container: OpCluster,
		Group: "cluster", Since: "3.0.0", Complexity: "O(1)", Summary: "Unassign every slot of this node, which must hold no keys (cluster bus)."},
	OpClusterSetConfigEpoch: {Name: "cluster|set-config-epoch", Arity: 3, Flags: clusterSet, ACL: clusterAdmin, Container: OpCluster,
		Group: "cluster", Since: "3.0.0", Complexity: "O(1)", Syntax: "config-epoch",
		Summary: "Set a new node's config epoch (only while it knows no other node)."},
	OpClusterBumpEpoch: {Name: "cluster|bumpepoch", Arity: 2, Flags: clusterSet, ACL: clusterAdmin, Tips: nondet, Container: OpCluster,
		Group: "cluster", Since: "3.0.0", Complexity: "O(1)", Summary: "Take a new config epoch unless this node's is already the cluster's highest."},
	OpClusterLinks: {Name: "cluster|links", Arity: 2, Flags: Stale, ACL: CatSlow, Tips: nondet, Container: OpCluster,
		Group: "cluster", Since: "7.0.0", Complexity: "O(N) where N is the total number of Cluster nodes",
		Summary: "The cluster bus links of this node, to and from each peer."},
	OpClusterReplicas: {Name: "cluster|replicas", Arity: 3, Flags: Admin | Stale, ACL: clusterAdmin, Tips: nondet, Container: OpCluster,
		Group: "cluster", Since: "5.0.0", Complexity: "O(1)", Syntax: "node-id", Summary: "The CLUSTER NODES lines of a master's replicas."},
	OpClusterSlaves: {Name: "cluster|slaves", Arity: 3, Flags: Admin | Stale, ACL: clusterAdmin, Tips: nondet, Container: OpCluster,
		Group: "cluster", Since: "3.0.0", Complexity: "O(1)", Syntax: "node-id", Summary: "CLUSTER REPLICAS under its old name."},
	// SORT and SORT_RO (sort.go has SortKeys, engine/cmd_sort.go the command).
	OpSort: {Name: "sort", Arity: -2, Flags: Write | DenyOOM | MovableKeys,
		ACL:     CatWrite | CatSet | CatSortedSet | CatList | CatSlow | CatDangerous,
		Keys:    append(append([]KeySpec{}, sortKeySpecs...), KeySpec{Flags: KeyOW | KeyUpdate, Unknown: true, Notes: sortStoreNotes}),
		ReqKeys: ArgRange{0, 1}, Counted: 4,
		Group: "generic", Since: "1.0.0",
		Complexity: "O(N+M*log(M)) for N elements to sort and M returned; O(N) unsorted",
		Syntax:     "key [BY pattern] [offset_count=LIMIT offset count] [GET pattern]... [order=ASC|DESC] [sorting=ALPHA] [STORE destination]",
		Summary:    "The elements of a list, set or sorted set sorted, optionally by other keys' values, or stored in a list."},
	OpSortRO: {Name: "sort_ro", Arity: -2, Flags: Readonly | MovableKeys,
		ACL:   CatRead | CatSet | CatSortedSet | CatList | CatSlow | CatDangerous,
		Keys:  sortKeySpecs,
		Group: "generic", Since: "7.0.0",
		Complexity: "O(N+M*log(M)) for N elements to sort and M returned; O(N) unsorted",
		Syntax:     "key [BY pattern] [offset_count=LIMIT offset count] [GET pattern]... [order=ASC|DESC] [sorting=ALPHA]",
		Summary:    "SORT without STORE: allowed on read-only replicas and to read-only users."},
	// Coordinated failover (engine/cmd_failover.go, docs/replication.md).
	OpFailover: {Name: "failover", Arity: -1, Flags: Admin | NoScript | Stale, ACL: CatAdmin | CatSlow | CatDangerous,
		Group: "server", Since: "6.2.0", Complexity: "O(1)",
		Syntax:  "[target=TO host port:integer [FORCE]] [ABORT] [TIMEOUT milliseconds]",
		Summary: "Hand the primary role to a replica: pause writes, wait until it has every write, tell it to take over (PSYNC FAILOVER) and follow it."},
	// DEBUG: of Redis's subcommands only OBJECT key, which reads
	// (engine/cmd_debug.go). Its COMMAND DOCS are Redis 7.0's: the group
	// alone (a SYSCMD).
	OpDebug: {Name: "debug", Arity: -2, Flags: Admin | NoScript | Loading | Stale, ACL: CatAdmin | CatSlow | CatDangerous,
		Group: "server"},
}
