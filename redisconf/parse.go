package redisconf

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// DefaultMaxIncludeDepth is how deep include directives may nest before Parse
// gives up. Redis has no such guard (a file that includes itself recurses
// until the stack runs out); goblin refuses with an error instead.
const DefaultMaxIncludeDepth = 16

// ErrIncludeDepth is wrapped by the error for include directives nested deeper
// than the limit (a file including itself, directly or not).
var ErrIncludeDepth = errors.New("include nested too deeply")

// Directive is one configuration line: its lower-cased name, its arguments
// after SplitArgs, and where it was read.
type Directive struct {
	Name string   // lower-cased, as Redis compares directive names
	Args []string // the arguments after the name
	File string   // the file it was read from, as named to Parse or in include
	Line int      // 1-based line number in File
	Text string   // the line with surrounding blanks trimmed, as Redis quotes it
}

// Error is a configuration error at one line. Error() names the file and line
// and quotes the line as Redis does (">>> 'line'") before the reason.
type Error struct {
	File   string
	Line   int    // 0 when the error belongs to no line (a file that cannot be read)
	Text   string // the trimmed line
	Reason string // Redis's wording where it has one
	Err    error  // the sentinel or cause, if any, for errors.Is
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Reason)
	}
	return fmt.Sprintf("%s:%d: >>> '%s' %s", e.File, e.Line, e.Text, e.Reason)
}

func (e *Error) Unwrap() error { return e.Err }

// Errors is every error found in a file, in file order. Parse stops at the
// first syntax error (as Redis does); Check reports them all.
type Errors []*Error

func (es Errors) Error() string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap lets errors.Is and errors.As look at each error.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// Parser reads configuration files. Its zero value works.
type Parser struct {
	// MaxIncludeDepth bounds include nesting; 0 means DefaultMaxIncludeDepth.
	MaxIncludeDepth int
	// ReadFile reads one file; nil means os.ReadFile. Relative names (the
	// file given and those of include) are opened relative to the process's
	// working directory, as Redis opens them, not to the including file.
	ReadFile func(name string) ([]byte, error)
}

// ParseFile reads a configuration file with the zero Parser.
func ParseFile(name string) ([]Directive, error) {
	var p Parser
	return p.ParseFile(name)
}

// ParseFile reads the file name and every file it includes, and returns their
// directives in the order Redis applies them: an include directive is replaced
// by the directives of the files it names. The include directives themselves
// are not returned.
func (p *Parser) ParseFile(name string) ([]Directive, error) {
	data, err := p.read(name)
	if err != nil {
		return nil, &Error{File: name, Reason: fmt.Sprintf("Fatal error, can't open config file '%s': %v", name, errText(err)), Err: err}
	}
	return p.parse(name, data, 0, nil)
}

// Parse reads the configuration text data; name is used in errors and in
// Directive.File. Included files are read from disk.
func (p *Parser) Parse(name string, data []byte) ([]Directive, error) {
	return p.parse(name, data, 0, nil)
}

func (p *Parser) read(name string) ([]byte, error) {
	if p.ReadFile != nil {
		return p.ReadFile(name)
	}
	return os.ReadFile(name)
}

// errText is strerror's text for a file error, without Go's "open NAME:" prefix.
func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		s := pe.Err.Error()
		if s != "" {
			return strings.ToUpper(s[:1]) + s[1:]
		}
	}
	return err.Error()
}

func (p *Parser) parse(name string, data []byte, depth int, out []Directive) ([]Directive, error) {
	maxDepth := p.MaxIncludeDepth
	if maxDepth <= 0 {
		maxDepth = DefaultMaxIncludeDepth
	}
	for i, raw := range strings.Split(string(data), "\n") {
		line := strings.Trim(raw, " \t\r\n")
		if line == "" || line[0] == '#' {
			continue
		}
		args, err := SplitArgs(line)
		if err != nil {
			return out, &Error{File: name, Line: i + 1, Text: line, Reason: err.Error(), Err: err}
		}
		if len(args) == 0 {
			continue
		}
		d := Directive{Name: strings.ToLower(args[0]), Args: args[1:], File: name, Line: i + 1, Text: line}
		if d.Name != "include" {
			out = append(out, d)
			continue
		}
		if len(d.Args) != 1 {
			return out, &Error{File: name, Line: d.Line, Text: line, Reason: reasonBadDirective}
		}
		if depth+1 > maxDepth {
			return out, &Error{File: name, Line: d.Line, Text: line,
				Reason: fmt.Sprintf("%v (more than %d levels; does a file include itself?)", ErrIncludeDepth, maxDepth), Err: ErrIncludeDepth}
		}
		files := []string{d.Args[0]}
		if strings.ContainsAny(d.Args[0], "*?[") {
			// Redis globs a pattern and goes on quietly when nothing matches,
			// so that an empty conf.d directory may be included.
			files, err = filepath.Glob(d.Args[0])
			if err != nil {
				return out, &Error{File: name, Line: d.Line, Text: line, Reason: fmt.Sprintf("bad include pattern: %v", err), Err: err}
			}
		}
		for _, f := range files {
			data, err := p.read(f)
			if err != nil {
				return out, &Error{File: name, Line: d.Line, Text: line,
					Reason: fmt.Sprintf("Fatal error, can't open config file '%s': %s", f, errText(err)), Err: err}
			}
			if out, err = p.parse(f, data, depth+1, out); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// reasonBadDirective is Redis's message for an unknown directive, or a known
// special one (include, rename-command...) with the wrong argument count.
const reasonBadDirective = "Bad directive or wrong number of arguments"
