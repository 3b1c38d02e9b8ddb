package command

// SORT's key specs, as Redis 7.0 declares them: the sorted key, then the
// keys its BY and GET patterns name (known only from the sorted values),
// then, for SORT, the STORE destination (which may be anywhere among the
// options). The last two are "unknown" specs: SortKeys finds SORT's keys.
var sortKeySpecs = []KeySpec{
	{Flags: KeyRO | KeyAccess, Index: 1, LastKey: 0, KeyStep: 1},
	{Flags: KeyRO | KeyAccess, Unknown: true, NotInRequest: true, Notes: sortPatternNotes},
}

const (
	sortPatternNotes = "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort"
	sortStoreNotes   = "For the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array"
)

// SortKeys returns the argv index of SORT's STORE destination, 0 when
// there is none, found as Redis's sortGetKeys finds it: every word after
// the key is an option, LIMIT skips two words, GET and BY one, and the
// last STORE with a word after it wins. The scan is not SORT's parser
// (which may then refuse the command): it only says which key the
// command would write, for routing and ACL checks. argv[0] is the name.
func SortKeys(argv [][]byte) int {
	store := 0
	for i := 2; i < len(argv); i++ {
		switch {
		case EqualFold(argv[i], "limit"):
			i += 2
		case EqualFold(argv[i], "get"), EqualFold(argv[i], "by"):
			i++
		case EqualFold(argv[i], "store") && i+1 < len(argv):
			store = i + 1
		}
	}
	return store
}

// sortArgKeySpecs points SORT's arguments at its key specs as Redis's
// COMMAND DOCS does: the BY and GET patterns at the BY/GET spec (1), the
// STORE destination at the STORE spec (2).
func sortArgKeySpecs(args []Arg) {
	for i := range args {
		switch {
		case args[i].Type == "pattern":
			args[i].KeySpec = 1
		case args[i].Name == "destination":
			args[i].KeySpec = 2
		}
	}
}
