package redisconf

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Kind is the type of a directive's value, which decides how its arguments
// are checked and how Rewrite formats it.
type Kind int

const (
	KindString                  Kind = iota // one argument, any bytes; rewritten in double quotes
	KindBool                                // yes or no, any case
	KindInt                                 // a decimal integer
	KindMemory                              // bytes with memtoull's units: 1k=1000, 1kb=1024, m, mb, g, gb
	KindMemoryPercent                       // a memory value or a percentage (10%)
	KindOctal                               // an octal integer (unixsocketperm)
	KindEnum                                // one of Spec.Enum, any case (several with MultiArg)
	KindList                                // one or more arguments, taken as given (bind, replicaof...)
	KindSave                                // pairs of seconds and changes, or "" for none; accumulates
	KindClientOutputBufferLimit             // class hard soft seconds, repeated; accumulates per class
	KindSpecial                             // read by the loader itself: include, rename-command, user...
)

// Spec describes one directive.
type Spec struct {
	Name     string   // the directive, lower case
	Alias    string   // when Name is an old alias (slaveof), the primary name (replicaof)
	Kind     Kind     //
	Enum     []string // the names a KindEnum takes
	MultiArg bool     // a KindEnum that takes several names (shutdown-on-sigterm)
	Default  string   // Redis 7.0's default as CONFIG GET prints it (memory in bytes)
	// Goblin is goblin's setting name for this directive, empty when goblin
	// does not have it (a Redis-only directive).
	Goblin string
	// GoblinOnly marks goblin's own directives, which redis-server refuses.
	GoblinOnly bool
	// EmptyIsNull marks strings Redis stores as NULL when empty: CONFIG
	// REWRITE removes their lines rather than writing "".
	EmptyIsNull bool
	// AlwaysWrite marks directives CONFIG REWRITE writes even at their
	// default (save, dir, latency-tracking-info-percentiles).
	AlwaysWrite bool
}

// Supported tells whether goblin has this setting.
func (s Spec) Supported() bool { return s.Goblin != "" }

// goblinDirectives are goblin's own settings, named as goblin-server's flags.
var goblinDirectives = []Spec{
	{Name: "listen", Kind: KindList, Goblin: "listen", GoblinOnly: true},
	{Name: "metrics", Kind: KindString, Goblin: "metrics", GoblinOnly: true},
	{Name: "idle", Kind: KindEnum, Enum: []string{"spin", "yield", "backoff", "park", "doze"}, Goblin: "idle", GoblinOnly: true},
	{Name: "cpu", Kind: KindString, Goblin: "cpu", GoblinOnly: true},
	{Name: "client-output-limit", Kind: KindMemory, Goblin: "client-output-limit", GoblinOnly: true},
	{Name: "client-stall-timeout", Kind: KindString, Goblin: "client-stall-timeout", GoblinOnly: true},
	{Name: "client-input-limit", Kind: KindMemory, Goblin: "client-input-limit", GoblinOnly: true},
	{Name: "client-output-per-pass", Kind: KindMemory, Goblin: "client-output-per-pass", GoblinOnly: true},
	{Name: "socket-mode", Kind: KindOctal, Goblin: "socket-mode", GoblinOnly: true},
	{Name: "socket-check-every", Kind: KindInt, Goblin: "socket-check-every", GoblinOnly: true},
	{Name: "log-level", Kind: KindEnum, Enum: []string{"debug", "info", "warn", "error"}, Goblin: "log-level", GoblinOnly: true},
	{Name: "log-format", Kind: KindEnum, Enum: []string{"text", "json"}, Goblin: "log-format", GoblinOnly: true},
	{Name: "aeron-dir", Kind: KindString, Goblin: "aeron-dir", GoblinOnly: true},
	{Name: "cluster-node", Kind: KindString, Goblin: "cluster-node", GoblinOnly: true},
	{Name: "cluster-config", Kind: KindString, Goblin: "cluster-config", GoblinOnly: true},
	{Name: "bgsave-writer-priority", Kind: KindEnum, Enum: []string{"idle", "normal"}, Default: "idle", Goblin: "bgsave-writer-priority", GoblinOnly: true},
	{Name: "bgsave-loop-rest", Kind: KindEnum, Enum: []string{"always", "requests", "no"}, Default: "always", Goblin: "bgsave-loop-rest", GoblinOnly: true},
	{Name: "rdb-skip-unsupported", Kind: KindBool, Default: "no", Goblin: "rdb-skip-unsupported", GoblinOnly: true},
	// Replication over Aeron (docs/replication-aeron.md).
	{Name: "repl-aeron-channel", Kind: KindString, Goblin: "repl-aeron-channel", GoblinOnly: true},
	{Name: "repl-aeron-status-channel", Kind: KindString, Goblin: "repl-aeron-status-channel", GoblinOnly: true},
	{Name: "repl-aeron-stream-id", Kind: KindInt, Default: "1035", Goblin: "repl-aeron-stream-id", GoblinOnly: true},
	{Name: "replica-aeron-channel", Kind: KindString, Goblin: "replica-aeron-channel", GoblinOnly: true},
	{Name: "replica-aeron-status-channel", Kind: KindString, Goblin: "replica-aeron-status-channel", GoblinOnly: true},
	{Name: "replica-aeron-name", Kind: KindString, Goblin: "replica-aeron-name", GoblinOnly: true},
	{Name: "replica-forward-writes", Kind: KindBool, Default: "no", Goblin: "replica-forward-writes", GoblinOnly: true},
}

var specs = func() map[string]Spec {
	m := make(map[string]Spec, len(redisDirectives)+len(goblinDirectives))
	for _, t := range [][]Spec{redisDirectives, goblinDirectives} {
		for _, s := range t {
			if _, dup := m[s.Name]; dup {
				panic("redisconf: directive " + s.Name + " listed twice")
			}
			m[s.Name] = s
		}
	}
	return m
}()

// Lookup returns the directive name (any case) describes.
func Lookup(name string) (Spec, bool) {
	s, ok := specs[strings.ToLower(name)]
	return s, ok
}

// Specs returns every directive the package knows, sorted by name.
func Specs() []Spec {
	out := make([]Spec, 0, len(specs))
	for _, s := range specs {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ErrUnsupported is wrapped by the errors for Redis directives goblin does not have.
//
//lint:ignore ST1005 starts with the proper noun Redis
var ErrUnsupported = errors.New("Redis directive not supported by goblin")

// Report is what Check found in a list of directives.
type Report struct {
	// Supported are the directives goblin has, in file order, with aliases
	// resolved (slaveof reads as replicaof).
	Supported []Setting
	// Unsupported are the Redis directives goblin does not have, in file
	// order; each is an *Error wrapping ErrUnsupported.
	Unsupported Errors
	// All are every valid directive, supported or not, in file order.
	All []Setting
}

// Setting is a checked directive: its Spec (the primary one for an alias).
type Setting struct {
	Directive
	Spec Spec
}

// Err returns the unsupported directives as one error (nil if none): goblin
// refuses to start with them, never ignoring a line silently.
func (r *Report) Err() error {
	if len(r.Unsupported) == 0 {
		return nil
	}
	return r.Unsupported
}

// Warnings lists the unsupported directives one per line, for a migration
// check that accepts them (goblin-server --check-config).
func (r *Report) Warnings() []string {
	out := make([]string, len(r.Unsupported))
	for i, e := range r.Unsupported {
		out[i] = "warning: " + e.Error()
	}
	return out
}

// Values returns the effective value of every valid directive (All) by
// primary name, as Redis applies a file: the last line wins, except for the
// directives that accumulate (save, client-output-buffer-limit, listen,
// rename-command, user, loadmodule), whose lines' arguments are appended in
// order. A save "" line clears the save points read before it.
func (r *Report) Values() map[string][]string {
	m := make(map[string][]string)
	for _, s := range r.All {
		name := s.Spec.Name
		switch {
		case s.Spec.Kind == KindSave && len(s.Args) == 1 && s.Args[0] == "":
			m[name] = []string{}
		case accumulates(s.Spec):
			m[name] = append(m[name], s.Args...)
		default:
			m[name] = s.Args
		}
	}
	return m
}

func accumulates(s Spec) bool {
	switch s.Kind {
	case KindSave, KindClientOutputBufferLimit, KindSpecial:
		return true
	}
	return s.Name == "listen"
}

// Check checks every directive against the table: unknown directives, wrong
// argument counts and bad values are errors (all of them, returned as
// Errors); Redis directives goblin does not have go to Report.Unsupported.
func Check(dirs []Directive) (*Report, error) {
	r := &Report{}
	var errs Errors
	for _, d := range dirs {
		spec, ok := Lookup(d.Name)
		if !ok {
			errs = append(errs, lineErr(d, reasonBadDirective, nil))
			continue
		}
		if spec.Alias != "" {
			spec = specs[spec.Alias]
		}
		if reason := checkArgs(spec, d.Args); reason != "" {
			errs = append(errs, lineErr(d, reason, nil))
			continue
		}
		d.Args = splitMultiArg(spec, d.Args)
		r.All = append(r.All, Setting{Directive: d, Spec: spec})
		if !spec.Supported() {
			r.Unsupported = append(r.Unsupported, lineErr(d, ErrUnsupported.Error(), ErrUnsupported))
			continue
		}
		r.Supported = append(r.Supported, Setting{Directive: d, Spec: spec})
	}
	if len(errs) > 0 {
		return r, errs
	}
	return r, nil
}

func lineErr(d Directive, reason string, err error) *Error {
	return &Error{File: d.File, Line: d.Line, Text: d.Text, Reason: reason, Err: err}
}

// isMultiArg tells whether s takes several arguments on one line.
func isMultiArg(s Spec) bool {
	return s.MultiArg || s.Kind == KindList || s.Kind == KindSave || s.Kind == KindClientOutputBufferLimit
}

// splitMultiArg splits the single non-empty argument of a multi-argument
// directive as Redis does, so save "3600 1 300 100" reads as four arguments.
// checkArgs has checked that it splits.
func splitMultiArg(s Spec, args []string) []string {
	if isMultiArg(s) && len(args) == 1 && args[0] != "" {
		if split, err := SplitArgs(args[0]); err == nil {
			return split
		}
	}
	return args
}

// checkArgs returns why args are not a valid value for s, in Redis's words,
// or "" when they are.
func checkArgs(s Spec, args []string) string {
	multi := isMultiArg(s)
	if !multi && s.Kind != KindSpecial && len(args) != 1 {
		return "wrong number of arguments"
	}
	if multi && len(args) == 1 && args[0] != "" && s.Kind != KindSpecial {
		// Redis splits a single argument of a multi-argument directive, so
		// that save "3600 1 300 100" reads as four arguments.
		split, err := SplitArgs(args[0])
		if err != nil {
			return err.Error()
		}
		args = split
	}
	switch s.Kind {
	case KindBool:
		if !strings.EqualFold(args[0], "yes") && !strings.EqualFold(args[0], "no") {
			return "argument must be 'yes' or 'no'"
		}
	case KindInt:
		if _, ok := parseInt(args[0]); !ok {
			return "argument couldn't be parsed into an integer"
		}
	case KindOctal:
		if _, err := strconv.ParseUint(args[0], 8, 32); err != nil {
			return "argument couldn't be parsed into an integer"
		}
	case KindMemory:
		if _, err := ParseMemory(args[0]); err != nil {
			return "argument must be a memory value"
		}
	case KindMemoryPercent:
		if _, _, err := ParseMemoryPercent(args[0]); err != nil {
			return "argument must be a memory or percent value"
		}
	case KindEnum:
		for _, a := range args {
			if !hasFold(s.Enum, a) {
				return "argument(s) must be one of the following: " + strings.Join(s.Enum, ", ")
			}
		}
	case KindList:
		if len(args) == 0 {
			return "wrong number of arguments"
		}
	case KindSave:
		if len(args) == 1 && args[0] == "" {
			return ""
		}
		if len(args)%2 != 0 {
			return "Invalid save parameters"
		}
		for i, a := range args {
			v, err := strconv.ParseInt(a, 10, 64)
			if err != nil || (i%2 == 0 && v < 1) || (i%2 == 1 && v < 0) {
				return "Invalid save parameters"
			}
		}
	case KindClientOutputBufferLimit:
		if len(args)%4 != 0 || len(args) == 0 {
			return "Wrong number of arguments in buffer limit configuration."
		}
		for i := 0; i < len(args); i += 4 {
			switch strings.ToLower(args[i]) {
			case "normal", "replica", "slave", "pubsub":
			default:
				return "Invalid client class specified in buffer limit configuration."
			}
			_, e1 := ParseMemory(args[i+1])
			_, e2 := ParseMemory(args[i+2])
			sec, e3 := strconv.ParseInt(args[i+3], 10, 64)
			if e1 != nil || e2 != nil || e3 != nil || sec < 0 {
				return "Error in hard, soft or soft_seconds setting in buffer limit configuration."
			}
		}
	case KindSpecial:
		switch s.Name {
		case "include":
			if len(args) != 1 {
				return reasonBadDirective
			}
		case "rename-command":
			if len(args) != 2 {
				return reasonBadDirective
			}
		case "user", "loadmodule", "sentinel":
			if len(args) < 1 {
				return reasonBadDirective
			}
		}
	}
	return ""
}

// parseInt parses a decimal integer as Redis's string2ll: an optional minus
// and no leading zero, plus sign or blank ("0" alone, but not "-0" or "01").
func parseInt(s string) (int64, bool) {
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || digits[0] < '0' || digits[0] > '9' || (digits[0] == '0' && s != "0") {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

func hasFold(list []string, s string) bool {
	for _, e := range list {
		if strings.EqualFold(e, s) {
			return true
		}
	}
	return false
}

// ErrMemory is returned for a value ParseMemory refuses.
var ErrMemory = errors.New("argument must be a memory value")

// ParseMemory parses a byte count as Redis's memtoull: decimal digits and an
// optional unit, any case: b (or none) 1, k 1000, kb 1024, m 1000², mb
// 1024², g 1000³, gb 1024³. A sign, a space, a fraction or an overflow of
// 64 bits is an error. Like memtoull, an empty number ("", "kb") is 0.
func ParseMemory(s string) (uint64, error) {
	u := 0
	for u < len(s) && s[u] >= '0' && s[u] <= '9' {
		u++
	}
	var mul uint64
	switch strings.ToLower(s[u:]) {
	case "", "b":
		mul = 1
	case "k":
		mul = 1000
	case "kb":
		mul = 1024
	case "m":
		mul = 1000 * 1000
	case "mb":
		mul = 1024 * 1024
	case "g":
		mul = 1000 * 1000 * 1000
	case "gb":
		mul = 1024 * 1024 * 1024
	default:
		return 0, fmt.Errorf("%w: %q", ErrMemory, s)
	}
	if u == 0 {
		return 0, nil
	}
	v, err := strconv.ParseUint(s[:u], 10, 64)
	if err != nil || v > ^uint64(0)/mul {
		return 0, fmt.Errorf("%w: %q", ErrMemory, s)
	}
	return v * mul, nil
}

// ParseMemoryPercent parses a memory value or a percentage ("10%"), as
// Redis's maxmemory-clients takes them; percent tells which it was.
func ParseMemoryPercent(s string) (v uint64, percent bool, err error) {
	if v, err := ParseMemory(s); err == nil {
		return v, false, nil
	}
	if len(s) > 1 && s[len(s)-1] == '%' {
		if p, err := strconv.ParseInt(s[:len(s)-1], 10, 64); err == nil && p >= 0 {
			return uint64(p), true, nil
		}
	}
	return 0, false, fmt.Errorf("argument must be a memory or percent value: %q", s)
}

// FormatMemory writes a byte count as CONFIG REWRITE does: in gb, mb or kb
// when it is a whole multiple, else in bytes.
func FormatMemory(v uint64) string {
	const kb, mb, gb = 1 << 10, 1 << 20, 1 << 30
	switch {
	case v != 0 && v%gb == 0:
		return strconv.FormatUint(v/gb, 10) + "gb"
	case v != 0 && v%mb == 0:
		return strconv.FormatUint(v/mb, 10) + "mb"
	case v != 0 && v%kb == 0:
		return strconv.FormatUint(v/kb, 10) + "kb"
	}
	return strconv.FormatUint(v, 10)
}
