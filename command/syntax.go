package command

import (
	"fmt"
	"strings"
)

// Arg is one argument of a command's syntax, as COMMAND DOCS describes it.
type Arg struct {
	Name string
	// Type is one of string, integer, double, key, pattern, unix-time,
	// pure-token, oneof (one of Args) and block (all of Args, in order).
	Type  string
	Token string // the word that introduces the argument, if any
	// KeySpec is, for a key, the index of the key spec that finds it.
	KeySpec       int
	Optional      bool
	Multiple      bool // may be repeated
	MultipleToken bool // repeated with its token each time
	Args          []Arg
}

// argTypes gives the type of the argument names that are not strings.
var argTypes = map[string]string{
	"key": "key", "source": "key", "destination": "key", "destkey": "key", "newkey": "key",
	"key1": "key", "key2": "key", "pattern": "pattern",
	"seconds": "integer", "milliseconds": "integer", "increment": "integer", "decrement": "integer",
	"index": "integer", "count": "integer", "offset": "integer", "start": "integer", "end": "integer",
	"numreplicas": "integer", "timeout": "integer", "protover": "integer", "cursor": "integer",
	"db": "integer", "destination-db": "integer", "value-int": "integer", "client-id": "integer",
	"samples": "integer", "len": "integer", "unix-time-seconds": "unix-time",
	"unix-time-milliseconds": "unix-time", "ttl": "integer", "bit": "integer", "min-match-len": "integer",
	"index1": "integer", "index2": "integer", "maxage": "integer", "numkeys": "integer",
}

// docTypes are the argument types COMMAND DOCS knows; a colon before any
// other word is part of the name.
var docTypes = map[string]bool{
	"string": true, "integer": true, "double": true, "key": true, "pattern": true,
	"unix-time": true, "pure-token": true, "oneof": true, "block": true,
}

// ParseSyntax reads the notation of Spec.Syntax: words separated by
// spaces; an upper-case word is a literal token; a lower-case word is an
// argument whose type comes from its name (key, pattern, seconds... see
// argTypes) or follows a colon ("increment:double"); [ ] encloses optional
// parts and ( ) required groups, either holding alternatives separated by
// | and optionally named by a "name=" prefix; a "..." suffix repeats the
// item before it. A token followed by one argument is that argument's
// token ("EX seconds"); followed by several it introduces a block. A named
// group of one argument stays a block ("(pattern=pattern)...", as Redis
// describes PSUBSCRIBE's).
func ParseSyntax(s string) ([]Arg, error) {
	p := syntaxParser{src: s}
	args, err := p.seq(false)
	if err == nil && p.pos < len(p.src) {
		err = fmt.Errorf("unexpected %q", p.src[p.pos:])
	}
	if err != nil {
		return nil, fmt.Errorf("request: syntax %q at %d: %w", s, p.pos, err)
	}
	keys := 0
	numberKeys(args, &keys)
	return args, nil
}

func numberKeys(args []Arg, n *int) {
	for i := range args {
		if args[i].Type == "key" {
			args[i].KeySpec = *n
			*n++
		}
		numberKeys(args[i].Args, n)
	}
}

type syntaxParser struct {
	src string
	pos int
}

func (p *syntaxParser) skipSpace() {
	for p.pos < len(p.src) && p.src[p.pos] == ' ' {
		p.pos++
	}
}

func (p *syntaxParser) peek() byte {
	p.skipSpace()
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

// seq parses items up to ], ), | or the end (inGroup: inside brackets).
func (p *syntaxParser) seq(inGroup bool) ([]Arg, error) {
	var items []Arg
	for {
		switch p.peek() {
		case 0, ']', ')', '|':
			return joinTokens(items, inGroup), nil
		}
		a, err := p.item()
		if err != nil {
			return nil, err
		}
		items = append(items, a)
	}
}

// joinTokens turns a literal token followed by a single argument into one
// argument with that token.
func joinTokens(items []Arg, inGroup bool) []Arg {
	if inGroup && len(items) >= 3 && items[0].Type == "pure-token" && !items[0].Multiple && plainThenFlags(items[1:]) {
		return items // "LIMIT offset count", "TO host port [FORCE]": a block the token introduces (see group)
	}
	var out []Arg
	for i := 0; i < len(items); i++ {
		a := items[i]
		if a.Type == "pure-token" && !a.Multiple && i+1 < len(items) && items[i+1].Token == "" &&
			items[i+1].Type != "pure-token" && items[i+1].Type != "oneof" && items[i+1].Type != "block" {
			b := items[i+1]
			b.Token = a.Token
			out = append(out, b)
			i++
			continue
		}
		out = append(out, a)
	}
	return out
}

func (p *syntaxParser) item() (Arg, error) {
	var a Arg
	switch c := p.peek(); c {
	case '[', '(':
		p.pos++
		name := ""
		if i := strings.IndexAny(p.src[p.pos:], "=[]()| "); i > 0 && p.src[p.pos+i] == '=' {
			name = p.src[p.pos : p.pos+i]
			p.pos += i + 1
		}
		var alts [][]Arg
		for {
			s, err := p.seq(true)
			if err != nil {
				return a, err
			}
			alts = append(alts, s)
			if p.peek() != '|' {
				break
			}
			p.pos++
		}
		closer := byte(']')
		if c == '(' {
			closer = ')'
		}
		if p.peek() != closer {
			return a, fmt.Errorf("missing %c", closer)
		}
		p.pos++
		a = group(name, alts)
		a.Optional = c == '['
	default:
		start := p.pos
		for p.pos < len(p.src) && !strings.ContainsRune(" []()|", rune(p.src[p.pos])) &&
			!strings.HasPrefix(p.src[p.pos:], "...") {
			p.pos++
		}
		w := p.src[start:p.pos]
		if w == "" {
			return a, fmt.Errorf("empty word")
		}
		a = word(w)
	}
	if strings.HasPrefix(p.src[p.pos:], "...") {
		p.pos += 3
		a.Multiple = true
		if a.Token != "" && a.Type != "pure-token" {
			a.MultipleToken = true
		}
	}
	return a, nil
}

// word turns one word into an argument: TOKEN, name or name:type.
func word(w string) Arg {
	if strings.ToUpper(w) == w && strings.ToLower(w) != w {
		return Arg{Name: strings.ToLower(w), Type: "pure-token", Token: w}
	}
	name, typ, ok := strings.Cut(w, ":")
	if ok && !docTypes[typ] { // "ip:port" is one name, as Redis's CLIENT KILL has it
		name, ok = w, false
	}
	if !ok {
		typ = argTypes[name]
		if typ == "" {
			typ = "string"
		}
	}
	return Arg{Name: name, Type: typ}
}

// allPlain reports whether every item is an argument without a token.
func allPlain(items []Arg) bool {
	for _, a := range items {
		if a.Token != "" || a.Type == "pure-token" || a.Type == "oneof" || a.Type == "block" {
			return false
		}
	}
	return true
}

// plainThenFlags reports whether items are at least two arguments
// without a token, then only optional pure tokens (FAILOVER's "TO host
// port [FORCE]").
func plainThenFlags(items []Arg) bool {
	n := 0
	for n < len(items) && allPlain(items[n:n+1]) {
		n++
	}
	for _, a := range items[n:] {
		if a.Type != "pure-token" || !a.Optional {
			return false
		}
	}
	return n >= 2
}

// group makes one argument of a bracketed group's alternatives; a token
// before a group of alternatives ("AGGREGATE (SUM|MIN|MAX)") is that
// oneof's token.
func group(name string, alts [][]Arg) Arg {
	one := func(items []Arg) Arg {
		if len(items) == 1 {
			return items[0]
		}
		if len(items) == 2 && items[0].Type == "pure-token" && items[1].Type == "oneof" && items[1].Token == "" {
			o := items[1]
			o.Token = items[0].Token
			return o
		}
		b := Arg{Type: "block", Args: items}
		if items[0].Type == "pure-token" && !allTokens(items) {
			b.Token, b.Name, b.Args = items[0].Token, items[0].Name, items[1:]
		}
		return b
	}
	var a Arg
	switch {
	case len(alts) == 1 && len(alts[0]) == 1 && name != "" && alts[0][0].Type != "pure-token":
		a = Arg{Type: "block", Args: alts[0]} // "(pattern=pattern)": a named block of one argument
	case len(alts) == 1:
		a = one(alts[0])
	default:
		a = Arg{Type: "oneof"}
		for _, alt := range alts {
			a.Args = append(a.Args, one(alt))
		}
	}
	if name != "" {
		a.Name = name
	} else if a.Name == "" {
		a.Name = a.Args[0].Name
	}
	return a
}

// allTokens reports whether items are all literal tokens (REPLICAOF's NO
// ONE): a block of them has no token of its own.
func allTokens(items []Arg) bool {
	for _, a := range items {
		if a.Type != "pure-token" {
			return false
		}
	}
	return true
}

// Usage renders args as a usage line: "key value [NX|XX] [GET]".
func Usage(args []Arg) string {
	var b strings.Builder
	for i := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		usageOf(&b, &args[i], true)
	}
	return b.String()
}

func usageOf(b *strings.Builder, a *Arg, top bool) {
	if a.Optional && top {
		b.WriteByte('[')
		defer b.WriteByte(']')
	}
	one := func() {
		switch a.Type {
		case "pure-token":
			b.WriteString(a.Token)
		case "oneof":
			paren := (!a.Optional && top) || a.Token != ""
			if a.Token != "" {
				b.WriteString(a.Token)
				b.WriteByte(' ')
			}
			if paren {
				b.WriteByte('(')
			}
			for i := range a.Args {
				if i > 0 {
					b.WriteByte('|')
				}
				usageOf(b, &a.Args[i], true)
			}
			if paren {
				b.WriteByte(')')
			}
		case "block":
			if a.Token != "" {
				b.WriteString(a.Token)
				b.WriteByte(' ')
			}
			for i := range a.Args {
				if i > 0 {
					b.WriteByte(' ')
				}
				usageOf(b, &a.Args[i], true)
			}
		default:
			if a.Token != "" {
				b.WriteString(a.Token)
				b.WriteByte(' ')
			}
			b.WriteString(a.Name)
		}
	}
	one()
	if a.Multiple {
		b.WriteString(" [")
		if a.MultipleToken || a.Type == "pure-token" || a.Type == "block" || a.Token == "" {
			one()
		} else {
			b.WriteString(a.Name)
		}
		b.WriteString(" ...]")
	}
}
