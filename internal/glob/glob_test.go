package glob

import (
	"testing"
)

// reference is the obviously correct matcher FuzzMatch holds Match to: a
// direct recursive reading of the rules in the package comment, with no
// backtracking limit and no shared code.
func reference(p, s []byte, fold bool) bool {
	if len(s) == 0 {
		return len(p) == 0
	}
	r := refMatcher{fold: fold, memo: map[[2]int]bool{}}
	return r.match(p, s)
}

// refMatcher remembers the answer for each pair of suffixes (a pattern
// suffix and a string suffix are named by their lengths), so runs of stars
// cost polynomial time.
type refMatcher struct {
	fold bool
	memo map[[2]int]bool
}

func (r *refMatcher) match(p, s []byte) bool {
	k := [2]int{len(p), len(s)}
	if v, ok := r.memo[k]; ok {
		return v
	}
	v := ref(r, p, s, r.fold)
	r.memo[k] = v
	return v
}

func ref(r *refMatcher, p, s []byte, fold bool) bool {
	if len(p) == 0 {
		return len(s) == 0
	}
	if p[0] == '*' {
		// The star takes nothing, or one more byte.
		return r.match(p[1:], s) || (len(s) > 0 && r.match(p, s[1:]))
	}
	if len(s) == 0 {
		return false
	}
	c := s[0]
	eq := func(a, b byte) bool {
		if fold && a >= 'A' && a <= 'Z' {
			a += 32
		}
		if fold && b >= 'A' && b <= 'Z' {
			b += 32
		}
		return a == b
	}
	switch {
	case p[0] == '?':
		return r.match(p[1:], s[1:])
	case p[0] == '\\' && len(p) > 1:
		return eq(p[1], c) && r.match(p[2:], s[1:])
	case p[0] != '[':
		return eq(p[0], c) && r.match(p[1:], s[1:])
	}
	// A class: find its members up to the first unescaped ']' (or the end).
	body := p[1:]
	negate := len(body) > 0 && body[0] == '^'
	if negate {
		body = body[1:]
	}
	in := false
	k := 0
	for k < len(body) && body[k] != ']' {
		switch {
		case body[k] == '\\' && k+1 < len(body):
			in = in || body[k+1] == c
			k += 2
		case k+2 < len(body) && body[k+1] == '-':
			lo, hi, x := int(int8(body[k])), int(int8(body[k+2])), int(int8(c))
			if lo > hi {
				lo, hi = hi, lo
			}
			if fold {
				for _, v := range []*int{&lo, &hi, &x} {
					if *v >= 'A' && *v <= 'Z' {
						*v += 32
					}
				}
			}
			in = in || (lo <= x && x <= hi)
			k += 3
		default:
			in = in || eq(body[k], c)
			k++
		}
	}
	rest := body[min(k+1, len(body)):]
	return in != negate && r.match(rest, s[1:])
}

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		p, s string
		want bool
	}{
		{"*", "anything", true}, {"*", "", false}, {"", "", true}, {"a*", "a", true},
		{"h?llo", "hello", true}, {"h?llo", "hllo", false}, {"h*llo", "heeeello", true},
		{"h[ae]llo", "hallo", true}, {"h[ae]llo", "hillo", false}, {"h[^e]llo", "hallo", true},
		{"h[^e]llo", "hello", false}, {"h[a-b]llo", "hbllo", true}, {"h[b-a]llo", "hallo", true},
		{"h\\*llo", "h*llo", true}, {"h\\*llo", "hello", false}, {"[]]", "]", false},
		{"[^]]", "x]", true}, {"[^]]", "x", false}, {"[^]", "x", true}, {"[abc", "b", true}, {"[abc", "bc", false}, {"[a-]x", "]", true},
		{"\\", "\\", true}, {"[\\]]", "]", true}, {"*a*b", "xaxxb", true}, {"*a*b", "xaxxbc", false},
		{"user:*:name", "user:42:name", true}, {"[a-\xff]", "\xff", true}, {"[a-\xff]", "b", false},
	} {
		if got := Match([]byte(c.p), []byte(c.s)); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.p, c.s, got, c.want)
		}
		if ref := reference([]byte(c.p), []byte(c.s), false); ref != c.want {
			t.Errorf("reference(%q, %q) = %v, want %v", c.p, c.s, ref, c.want)
		}
	}
	if !MatchFold([]byte("MAXMEMORY*"), []byte("maxmemory-policy")) || Match([]byte("MAX*"), []byte("max")) {
		t.Error("case folding")
	}
}

// TestMatchAllocs: matching allocates nothing.
func TestMatchAllocs(t *testing.T) {
	p, s := []byte("*a*[b-d]?\\x*"), []byte("zzazzczxzzz")
	if n := testing.AllocsPerRun(100, func() { Match(p, s) }); n != 0 {
		t.Fatalf("Match allocates %v times", n)
	}
}

// TestNoBlowUp: a pattern with many stars against a long non-matching
// string finishes at once (the backtracking is linear per star).
func TestNoBlowUp(t *testing.T) {
	p := []byte("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b")
	s := make([]byte, 10000)
	for i := range s {
		s[i] = 'a'
	}
	if Match(p, s) {
		t.Fatal("matched")
	}
}

// FuzzMatch holds Match and MatchFold to the reference matcher. Seeds in
// testdata/fuzz/FuzzMatch run in every go test.
func FuzzMatch(f *testing.F) {
	for _, s := range [][2]string{{"h[a-c]*llo", "hbxllo"}, {"[^]]", "]"}, {"*\\", "a\\"}, {"[a-", "-"},
		{"*?*", "ab"}, {"[\\", "\\"}, {"a[Z-a]", "a_"}, {"**a", "ba"}} {
		f.Add([]byte(s[0]), []byte(s[1]), false)
		f.Add([]byte(s[0]), []byte(s[1]), true)
	}
	f.Fuzz(func(t *testing.T, p, s []byte, fold bool) {
		stars := 0
		for _, c := range p {
			if c == '*' {
				stars++
			}
		}
		if stars > 64 || len(s) > 256 {
			return // keep each run short
		}
		if got, want := match(p, s, fold), reference(p, s, fold); got != want {
			t.Fatalf("match(%q, %q, fold %v) = %v, reference %v", p, s, fold, got, want)
		}
	})
}
