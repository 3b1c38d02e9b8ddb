package command

import "strconv"

// Kind is the shape of a reply or of one of its items. The values are the
// SBE schema's Kind enum.
type Kind uint8

// The kinds. Simple through Error exist since schema version 0; the others
// since version 2 (an SBE client of an older version gets their RESP2 form,
// see Downgrade).
const (
	Simple   Kind = 0  // status text in Value: OK, PONG
	Bulk     Kind = 1  // bytes in Value
	Nil      Kind = 2  // no value: a missing key, an unmet condition
	Integer  Kind = 3  // number in Integer
	Array    Kind = 4  // Integer elements follow (the root's elements are Items)
	Error    Kind = 5  // Status says which; text in Value
	Map      Kind = 6  // Integer key/value pairs follow, key first
	Set      Kind = 7  // Integer elements follow
	Double   Kind = 8  // decimal text in Value, as Redis formats it ("inf", "-inf", "nan")
	Boolean  Kind = 9  // Integer 1 (true) or 0
	Verbatim Kind = 10 // text in Value (the "txt" format)
	NilArray Kind = 11 // the null array: RESP2 *-1 (EXEC after a touched WATCH)
)

// Aggregate reports whether items of kind k are followed by elements.
func (k Kind) Aggregate() bool { return k == Array || k == Map || k == Set }

// Elements is how many items follow an aggregate item whose Integer is n:
// n, or 2n for a map.
func Elements(k Kind, n int64) int64 {
	if k == Map {
		return 2 * n
	}
	return n
}

// String names the kind as the schema does, but for Map, Double and
// Boolean: "map", "double" and "boolean", words the schema cannot use
// (keywords in languages SBE generates for), so it says keyValueMap,
// doubleText and booleanValue. proto/sbe's TestEnumsMatchSchema checks both.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

var kindNames = [...]string{"simple", "bulk", "absent", "integer", "array", "failure", "map", "set", "double", "boolean", "verbatim", "absentArray"}

// Status is a reply's outcome: OK, or which error. The values are the SBE
// schema's Status enum; an error's text is in the reply's Value, worded as
// Redis 7 words it.
type Status uint8

// The statuses.
const (
	OK                 Status = 0
	Err                Status = 1  // generic error
	Syntax             Status = 2  // syntax error, bad option
	WrongArgs          Status = 3  // wrong number of arguments
	NotInteger         Status = 4  // value is not an integer or out of range
	Overflow           Status = 5  // increment or decrement would overflow
	OOM                Status = 6  // memory limit reached
	KeyTooLong         Status = 7  // key longer than the server's limit
	ValueTooLong       Status = 8  // value longer than the server's limit
	UnknownCommand     Status = 9  // unknown command or subcommand
	NoAuth             Status = 10 // authentication required
	WrongPass          Status = 11 // wrong user or password
	Protocol           Status = 12 // malformed request; the connection closes
	InvalidExpire      Status = 13 // expire time out of range
	UnsupportedVersion Status = 14 // SBE message of a version the server cannot read
	ExecAbort          Status = 15 // EXEC of a transaction with a queueing error (since version 2)
	BusyKey            Status = 16 // RESTORE target exists (since version 2)
	NoProto            Status = 17 // HELLO with a protocol version goblin does not speak (since version 2)
	NotFloat           Status = 18 // value is not a valid float (since version 2)
	NoSuchKey          Status = 19 // RENAME, MOVE... of a missing key (since version 2)
	OutOfRange         Status = 20 // offset, index or DB number out of range (since version 2)
)

// String names the status as the schema does.
func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "status(" + strconv.Itoa(int(s)) + ")"
}

var statusNames = [...]string{"ok", "err", "syntax", "wrongArgs", "notInteger", "overflow", "oom", "keyTooLong",
	"valueTooLong", "unknownCommand", "noAuth", "wrongPass", "protocol", "invalidExpire", "unsupportedVersion",
	"execAbort", "busyKey", "noProto", "notFloat", "noSuchKey", "outOfRange"}

// Item is one element of an aggregate reply.
type Item struct {
	Kind    Kind
	Integer int64
	Value   []byte
}

// Reply is the answer to one request. Value and Items[i].Value point into
// buffers owned by whoever built or decoded the reply.
type Reply struct {
	CorrelationID uint64
	Status        Status
	Kind          Kind
	Integer       int64
	Value         []byte
	// Items are the elements of an aggregate root, flattened in pre-order.
	Items []Item
	// Compact asks an SBE encoder for the 16-byte Pong message in place of
	// a Reply; it is honoured only for the simple reply PONG. An SBE
	// decoder sets it when the message was a Pong.
	Compact bool
}

// Reset clears r for reuse, keeping Items' backing array.
func (r *Reply) Reset() {
	*r = Reply{Items: r.Items[:0]}
}

// IsPong reports whether r is the simple reply PONG with status OK.
func (r *Reply) IsPong() bool {
	return r.Status == OK && r.Kind == Simple && string(r.Value) == "PONG"
}

// Downgrade rewrites r in place into the kinds a RESP2 client (or an SBE
// client of schema version 1 or older) knows: maps become arrays of twice
// as many elements, sets arrays, doubles and verbatim strings bulk strings,
// booleans integers, and NilArray Nil. The item count does not change, so
// it allocates nothing.
func (r *Reply) Downgrade() {
	r.Kind, r.Integer = downgrade(r.Kind, r.Integer)
	for i := range r.Items {
		it := &r.Items[i]
		it.Kind, it.Integer = downgrade(it.Kind, it.Integer)
	}
}

func downgrade(k Kind, n int64) (Kind, int64) {
	switch k {
	case Map:
		return Array, 2 * n
	case Set:
		return Array, n
	case Double, Verbatim:
		return Bulk, n
	case Boolean:
		return Integer, n
	case NilArray:
		return Nil, n
	}
	return k, n
}

// Walk checks that items, read in pre-order starting at an aggregate of
// kind k and count n, are exactly complete: every aggregate's elements
// present and nothing left over. It returns false for a malformed list (a
// decoder's check of what it read).
func Walk(k Kind, n int64, items []Item) bool {
	if !k.Aggregate() {
		return len(items) == 0
	}
	pending := Elements(k, n)
	for i := range items {
		if pending <= 0 {
			return false
		}
		pending--
		it := &items[i]
		if it.Kind.Aggregate() {
			if it.Integer < 0 {
				return false
			}
			pending += Elements(it.Kind, it.Integer)
		}
	}
	return pending == 0
}
