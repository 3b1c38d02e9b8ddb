package command

import "strings"

// CommandFlags are what COMMAND INFO lists as a command's flags. The bits
// are in the order Redis lists them, so a reply walks them low to high.
type CommandFlags uint32

// The flags. Redis's hidden flags (may_replicate, sentinel, protected) are
// not modelled.
const (
	Write CommandFlags = 1 << iota
	Readonly
	DenyOOM
	Module
	Admin
	PubSub
	NoScript
	Blocking
	Loading
	Stale
	SkipMonitor
	SkipSlowlog
	Asking
	Fast
	NoAuthFlag
	NoMandatoryKeys
	NoAsyncLoading
	NoMulti
	MovableKeys
	AllowBusy
)

var commandFlagNames = [...]string{"write", "readonly", "denyoom", "module", "admin", "pubsub", "noscript",
	"blocking", "loading", "stale", "skip_monitor", "skip_slowlog", "asking", "fast", "no_auth",
	"no_mandatory_keys", "no_async_loading", "no_multi", "movablekeys", "allow_busy"}

// Names returns the flags' names in COMMAND INFO's order.
func (f CommandFlags) Names() []string { return bitNames(uint64(f), commandFlagNames[:]) }

// Categories are a command's ACL categories, in the order Redis lists them.
type Categories uint32

// The ACL categories.
const (
	CatKeyspace Categories = 1 << iota
	CatRead
	CatWrite
	CatSet
	CatSortedSet
	CatList
	CatHash
	CatString
	CatBitmap
	CatHyperLogLog
	CatGeo
	CatStream
	CatPubSub
	CatAdmin
	CatFast
	CatSlow
	CatBlocking
	CatDangerous
	CatConnection
	CatTransaction
	CatScripting
)

var categoryNames = [...]string{"@keyspace", "@read", "@write", "@set", "@sortedset", "@list", "@hash",
	"@string", "@bitmap", "@hyperloglog", "@geo", "@stream", "@pubsub", "@admin", "@fast", "@slow",
	"@blocking", "@dangerous", "@connection", "@transaction", "@scripting"}

// Names returns the categories' names ("@read"...) in COMMAND INFO's order.
func (c Categories) Names() []string { return bitNames(uint64(c), categoryNames[:]) }

// NumCategories is the number of ACL categories.
const NumCategories = len(categoryNames)

var aclCategoryNames = func() []string {
	out := make([]string, len(categoryNames))
	for i, n := range categoryNames {
		out[i] = n[1:]
	}
	return out
}()

// ACLCategories returns the categories' names without the '@' ("keyspace",
// "read"...), in ACL CAT's order: category 1<<i is ACLCategories()[i].
// The slice is shared: do not modify it.
func ACLCategories() []string { return aclCategoryNames }

// CategoryByName returns the category named name ("read" or "@read", any
// case).
func CategoryByName(name string) (Categories, bool) {
	name = strings.ToLower(strings.TrimPrefix(name, "@"))
	for i, n := range categoryNames {
		if n[1:] == name {
			return 1 << i, true
		}
	}
	return 0, false
}

// KeyFlags describe what a command does with the keys a key spec finds,
// in the order COMMAND INFO lists them.
type KeyFlags uint16

// The key-spec flags.
const (
	KeyRO KeyFlags = 1 << iota
	KeyRW
	KeyOW
	KeyRM
	KeyAccess
	KeyUpdate
	KeyInsert
	KeyDelete
	KeyNotKey
	KeyIncomplete
	KeyVariableFlags
)

var keyFlagNames = [...]string{"RO", "RW", "OW", "RM", "access", "update", "insert", "delete", "not_key",
	"incomplete", "variable_flags"}

// Names returns the flags' names in COMMAND INFO's order.
func (f KeyFlags) Names() []string { return bitNames(uint64(f), keyFlagNames[:]) }

func bitNames(bits uint64, names []string) []string {
	var out []string
	for i, n := range names {
		if bits&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// KeySpec locates some of a command's keys in its Redis argument vector
// (argv[0] is the command name; for a subcommand argv[1] is its name), in
// Redis 7's terms. The search begins at argument Index ("index" begin
// search) and finds keys one of two ways:
//   - "range" (KeyNum false): up to LastKey relative to Index (a negative
//     LastKey counts from the end, -1 being the last argument), every
//     KeyStep arguments; Limit, when LastKey is negative, keeps only
//     1/Limit of the remaining arguments (0 and 1 keep all);
//   - "keynum" (KeyNum true): the argument KeyNumIdx after Index holds the
//     number of keys, which begin FirstKey after Index, every KeyStep
//     arguments (ZUNION numkeys key [key ...]);
//   - "unknown" (Unknown true): neither the start nor the keys can be
//     told from the argument positions (SORT's BY and GET keys come from
//     the sorted values, its STORE key may be anywhere); Index and the
//     rest are unused, and the command's own key finder (SortKeys) says
//     where its keys are.
//
// Redis's "keyword" form (for XREAD...) is not needed yet.
type KeySpec struct {
	Flags   KeyFlags
	Index   int
	LastKey int
	KeyStep int
	Limit   int

	KeyNum    bool
	KeyNumIdx int
	FirstKey  int

	Unknown bool
	// NotInRequest marks an unknown spec whose keys a Request never
	// holds (SORT's BY and GET keys, named by the stored values): the
	// request's keys take their flags from the other specs (ReqKeyFlags).
	NotInRequest bool
	// Notes is COMMAND INFO's "notes" of the spec, if any.
	Notes string
}

// Positions appends the argv indexes of the keys ks finds in an argument
// vector of argc words, or returns ok false when argc does not reach the
// keys ks describes, or a keynum spec's count is not a non-negative
// integer (Redis's "invalid arguments" for COMMAND GETKEYS). word returns
// argument i; only a keynum spec calls it, for its count.
func (ks *KeySpec) Positions(dst []int, argc int, word func(i int) []byte) ([]int, bool) {
	first, last := ks.Index, 0
	switch {
	case ks.Unknown:
		return dst, false
	case ks.KeyNum:
		at := first + ks.KeyNumIdx
		if at >= argc {
			return dst, false
		}
		n, ok := parseCount(word(at))
		if !ok {
			return dst, false
		}
		first += ks.FirstKey
		last = first + (n-1)*max(ks.KeyStep, 1)
		if n == 0 {
			return dst, true
		}
	case ks.LastKey >= 0:
		last = first + ks.LastKey
	case ks.Limit == 0:
		last = argc + ks.LastKey
	default:
		last = first + (argc-first)/ks.Limit + ks.LastKey
	}
	if first >= argc || last >= argc || last < first {
		return dst, false
	}
	for i := first; i <= last; i += max(ks.KeyStep, 1) {
		dst = append(dst, i)
	}
	return dst, true
}

// parseCount reads a keynum spec's count: a non-negative decimal integer
// below 2^31 (no sign, no leading zeros but "0").
func parseCount(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 10 || (b[0] == '0' && len(b) > 1) {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n < 1<<31
}

// Spec describes one command.
type Spec struct {
	// Name is the command's lower-case name; a subcommand's is
	// "container|sub" ("client|list").
	Name string
	// Arity is Redis's: n means exactly n words, the name (and a
	// subcommand's name) included; -n means at least n.
	Arity int
	Flags CommandFlags
	ACL   Categories
	// Tips are COMMAND INFO's command tips, separated by spaces.
	Tips string
	Keys []KeySpec
	// ReqKeys says where a decoded Request holds the keys: Key first, then
	// Args[ReqKeys.From], Args[ReqKeys.From+ReqKeys.Step], ... (From -1:
	// none after Key). Commands without Keys have none.
	ReqKeys ArgRange
	// Counted limits ReqKeys, for a keynum command, to as many keys as the
	// request's count of keys (Request.Amount, its numkeys argument) says:
	// Amount-1 when Counted is 1 (Key is the first counted key: ZUNION
	// numkeys key...), Amount when it is 2 (Key comes before them:
	// ZUNIONSTORE destination numkeys key...); 3 ends them before the last
	// of Args (BLPOP key... timeout); 4 makes them the one key
	// Args[Amount-1], none when Amount is 0 (SORT's STORE destination,
	// found by SortKeys).
	Counted int8
	// Group, Since and Complexity are COMMAND DOCS's fields.
	Group      string
	Since      string
	Complexity string
	// Syntax is the arguments after the name, in the notation of
	// ParseSyntax ("key value [condition=NX|XX]"); it renders as the
	// usage line and feeds COMMAND DOCS's argument list.
	Syntax string
	// Summary is one line of goblin's own words on what the command does.
	Summary string
	// Container is a subcommand's container (CLIENT for CLIENT LIST);
	// OpNone for a top-level command.
	Container Op
	// Dispatch marks a container whose name alone is not a command: the
	// next word selects a subcommand.
	Dispatch bool

	op Op
}

// ArgRange is a run of Args indexes: From, From+Step, ... to the end.
type ArgRange struct{ From, Step int8 }

// NoArgs is the ArgRange of commands with at most one key.
var NoArgs = ArgRange{-1, 0}

// FirstArg is the ArgRange of commands whose second and last key is
// Args[0], followed by other arguments (SMOVE, LMOVE): the step is past
// any argument count those commands take.
var FirstArg = ArgRange{0, 127}

// Op returns the Op s describes (its index in the table).
func (s *Spec) Op() Op { return s.op }

// Legacy returns COMMAND INFO's first key, last key and step, derived from
// the key specs as Redis derives them: one index/range spec is used as it
// is; several are merged when each has step 1 and begins right after the
// previous one ends. Commands without keys give 0, 0, 0.
func (s *Spec) Legacy() (first, last, step int) {
	switch len(s.Keys) {
	case 0:
		return 0, 0, 0
	case 1:
		k := &s.Keys[0]
		if k.KeyNum || k.Unknown { // Redis leaves keynum specs out of the legacy triple
			return 0, 0, 0
		}
		last = k.LastKey
		if last >= 0 {
			last += k.Index
		}
		return k.Index, last, k.KeyStep
	}
	first = -1
	var lastU uint64 // Redis compares last keys unsigned, so -1 (to the end) wins
	prev := uint64(0)
	for i := range s.Keys {
		k := &s.Keys[i]
		if k.KeyNum || k.Unknown || k.KeyStep != 1 || (prev != 0 && prev != uint64(k.Index-1)) {
			continue
		}
		if first < 0 || k.Index < first {
			first = k.Index
		}
		abs := k.LastKey
		if abs >= 0 {
			abs += k.Index
		}
		lastU = max(lastU, uint64(int64(abs)))
		prev = lastU
	}
	if first < 0 {
		return 0, 0, 0
	}
	return first, int(int64(lastU)), 1
}

// KeyPositions appends the argv indexes of every key in args (as
// COMMAND GETKEYS reports them, spec by spec), or returns ok false when
// args is too short for the command's key specs.
func (s *Spec) KeyPositions(dst []int, argc int, word func(i int) []byte) ([]int, bool) {
	for i := range s.Keys {
		var ok bool
		if dst, ok = s.Keys[i].Positions(dst, argc, word); !ok {
			return dst, false
		}
	}
	return dst, true
}

// EachKey calls fn with every key r holds, in order (see Spec.ReqKeys).
func (r *Request) EachKey(fn func(key []byte)) {
	s := Lookup(r.Op)
	if s == nil || len(s.Keys) == 0 {
		return
	}
	fn(r.Key)
	from, end, step := s.ArgKeys(r)
	for i := from; i < end; i += step {
		fn(r.Args[i])
	}
}

// ArgKeys returns where r's keys after Key are: Args[from], Args[from+step],
// ... before Args[end] (see ReqKeys).
func (s *Spec) ArgKeys(r *Request) (from, end, step int) {
	if s.ReqKeys.From < 0 {
		return 0, 0, 1
	}
	from, end, step = int(s.ReqKeys.From), len(r.Args), int(max(s.ReqKeys.Step, 1))
	switch s.Counted {
	case 1:
		end = min(end, from+int(r.Amount)-1)
	case 2:
		end = min(end, from+int(r.Amount))
	case 3:
		end--
	case 4:
		if r.Amount <= 0 || int(r.Amount) > len(r.Args) {
			return 0, 0, 1
		}
		from, end = int(r.Amount)-1, int(r.Amount)
	}
	return from, max(end, from), step
}

// ReqKeyFlags returns the key-spec flags of a request's key i (Key is 0,
// then the keys ArgKeys finds): key spec i's, the last spec's for the
// rest, skipping the specs whose keys a request never holds
// (NotInRequest: SORT's STORE key takes the STORE spec's flags, not the
// BY/GET spec's before it).
func (s *Spec) ReqKeyFlags(i int) KeyFlags {
	last := KeyFlags(0)
	for j := range s.Keys {
		if s.Keys[j].NotInRequest {
			continue
		}
		last = s.Keys[j].Flags
		if i == 0 {
			break
		}
		i--
	}
	return last
}
