package command

// Op is a command, or a subcommand such as CLIENT LIST. The values are the
// SBE schema's Op enum: an Op travels on the wire as itself (cluster mode's
// commands, RESP only, are not in the schema; proto/sbe's
// TestEnumsMatchSchema keeps the two in step).
type Op uint16

// NumOps bounds Op values; per-command arrays are [NumOps]T. 1024 leaves
// room for the RESP-only ranges handed out above 512 (collections 256-304 and 500-559, Pub/Sub 560-579,
// replication 580-609, LATENCY 610-639).
const NumOps = 1024

// Flags are a command's options. Each command reads its own bits; the
// names below say which command uses a bit for what, and several commands
// give one bit different meanings (the SBE schema's SetFlags set names the
// bits after SET and EXPIRE, their first users).
type Flags uint8

// SET and EXPIRE/PEXPIRE/EXPIREAT/PEXPIREAT options.
const (
	FlagNX      Flags = 1 << 0 // SET: only if the key does not exist; EXPIRE: only if it has no expiry
	FlagXX      Flags = 1 << 1 // SET: only if the key exists; EXPIRE: only if it has an expiry
	FlagKeepTTL Flags = 1 << 2 // SET: keep the key's time to live
	FlagGet     Flags = 1 << 3 // SET: reply with the old value
	FlagGT      Flags = 1 << 4 // EXPIRE: only if the new expiry is later
	FlagLT      Flags = 1 << 5 // EXPIRE: only if the new expiry is earlier
)

// HELLO's options.
const (
	FlagHelloAuth    Flags = 1 << 0 // AUTH user password given: user in Key, password in Value
	FlagHelloSetName Flags = 1 << 1 // SETNAME name given: name in Args[0]
)

// GETEX's option: its time was not an integer (GETEX answers nil for a
// missing key before it looks at the time, as Redis does).
const FlagBadTime Flags = 1 << 0

// COPY's and RESTORE's options.
const (
	FlagReplace Flags = 1 << 0 // COPY, RESTORE: overwrite an existing destination
	FlagDB      Flags = 1 << 1 // COPY: DB given, in Amount
	FlagCopy    Flags = 1 << 2 // MIGRATE: leave the keys here too (COPY)
	FlagIdle    Flags = 1 << 3 // RESTORE: IDLETIME given, its seconds in Amount
	FlagFreq    Flags = 1 << 4 // RESTORE: FREQ given, the counter in Amount
)

// SCAN's options.
const (
	FlagMatch Flags = 1 << 0 // MATCH pattern, in Value
	FlagType  Flags = 1 << 1 // TYPE name, in Args[0]
)

// BITCOUNT's and BITPOS's options.
const (
	FlagBit   Flags = 1 << 0 // the range is in bits (BIT), not bytes
	FlagStart Flags = 1 << 1 // a start is given (Amount)
	FlagEnd   Flags = 1 << 2 // an end is given (Amount2)
	FlagOne   Flags = 1 << 3 // BITPOS: look for a 1 bit
	// FlagBadRange is BITPOS's "the range was not readable": Redis answers
	// a missing key before it reads the range, so the decoder defers the
	// error (a syntax error, or with FlagBadInt a bad integer).
	FlagBadRange Flags = 1 << 4
	FlagBadInt   Flags = 1 << 5
)

// LCS's options.
const (
	FlagLen          Flags = 1 << 0 // LEN: the length only
	FlagIdx          Flags = 1 << 1 // IDX: the matching ranges
	FlagWithMatchLen Flags = 1 << 2 // WITHMATCHLEN: each range's length too
)

// CLIENT PAUSE's option: pause only writes (WRITE), not all commands.
const FlagPauseWrite Flags = 1 << 0

// CLIENT KILL's form: the old one, CLIENT KILL addr (in Value), which
// answers OK or an error; without it the filters are pairs in Args.
const FlagKillAddr Flags = 1 << 0

// CLIENT REPLY's modes, in Amount.
const (
	ReplyOn   = 0
	ReplyOff  = 1
	ReplySkip = 2
)

// Expiry says how Request.Expire is read.
type Expiry uint8

// The expiry kinds of SET (and of the commands that share its expiry
// options).
const (
	ExpiryNone Expiry = 0
	ExpiryEX   Expiry = 1 // relative, seconds
	ExpiryPX   Expiry = 2 // relative, milliseconds
	ExpiryEXAT Expiry = 3 // absolute unix time, seconds
	ExpiryPXAT Expiry = 4 // absolute unix time, milliseconds
	// ExpiryPersist is GETEX's PERSIST: remove the expiry (since schema
	// version 2).
	ExpiryPersist Expiry = 5
)

// Request is one command, the same value whichever protocol it arrived
// in. Byte slices point into the bytes the request was decoded from (or
// into the caller's values, for requests built by a client) and are valid
// only while the request is served. Which fields a command reads is part
// of its definition (docs/protocols.md lists them); fields a command does
// not read are zero.
type Request struct {
	CorrelationID uint64
	Op            Op
	Flags         Flags
	Expiry        Expiry
	Expire        int64 // the expiry time, read per Expiry
	// Amount is the command's integer argument: EXPIRE's seconds,
	// PEXPIRE's milliseconds, INCRBY/DECRBY's delta, SELECT's index, HELLO's
	// protocol version, GETRANGE's start, SCAN's cursor.
	Amount int64
	// Amount2 is a second integer argument: GETRANGE's end, SETBIT's bit,
	// SWAPDB's second index, SCAN's COUNT (0: the default).
	Amount2 int64
	Key     []byte
	Value   []byte
	// Args are further arguments: more keys after Key (DEL, EXISTS, MGET),
	// key/value pairs after Key/Value (MSET), INFO's sections, CONFIG GET's
	// patterns after Key, PING's message.
	Args [][]byte
	// Compact asks an SBE encoder for the 16-byte Ping message in place of
	// a Request; it is honoured only for a PING without a message. The SBE
	// decoder sets it when the message was a Ping, so the server can answer
	// with a Pong.
	Compact bool
	// Version is the SBE schema version the request was encoded with (0
	// for other protocols); the engine answers an older client in the
	// reply kinds that version knows.
	Version uint16
}

// Reset clears r for reuse, keeping Args' backing array.
func (r *Request) Reset() {
	// Field by field: a struct assignment compiles to a copy from a
	// zeroed temporary, measurably slower on the decode path.
	r.CorrelationID, r.Op, r.Flags, r.Expiry, r.Expire, r.Amount, r.Amount2 = 0, 0, 0, 0, 0, 0, 0
	r.Key, r.Value, r.Args = nil, nil, r.Args[:0]
	r.Compact, r.Version = false, 0
}
