// Package glob matches byte strings against Redis's glob patterns, the
// ones KEYS, SCAN MATCH, CONFIG GET and COMMAND LIST take:
//
//   - any run of bytes
//     ?       any one byte
//     [abc]   one of the bytes listed; [^abc] one byte not listed
//     [a-z]   one byte in a range (either order: [z-a] is [a-z])
//     \x      the byte x itself, also inside [ ]
//
// The quirks are Redis's, so that a pattern selects the same keys on goblin
// and on Redis: a class is closed by the first ] (so [] never matches and
// [^] matches any byte); a class left open runs to the end of the pattern;
// in [a-] the ] is a range end, not the class's end; range ends compare
// as signed chars, as C does on x86 (so [a-\xff] is [\xff-a]); and an empty
// string matches only the empty pattern (KEYS and SCAN treat the pattern
// "*" as "everything" before matching, so an empty key is still listed by
// KEYS *).
//
// Match runs in O(len(pattern) × len(s)) time (one backtracking point, the
// last star) and allocates nothing.
package glob

// Match reports whether s matches pattern, byte for byte.
func Match(pattern, s []byte) bool { return match(pattern, s, false) }

// MatchFold is Match ignoring ASCII case, as CONFIG GET matches parameter
// names (escaped bytes inside a class still compare exactly, as in Redis).
func MatchFold(pattern, s []byte) bool { return match(pattern, s, true) }

// MatchString is Match for strings.
func MatchString(pattern, s string) bool {
	return match([]byte(pattern), []byte(s), false)
}

func match(p, s []byte, fold bool) bool {
	if len(s) == 0 {
		return len(p) == 0
	}
	pi, si := 0, 0
	star, starS := -1, 0 // the last star's pattern index (after it) and where its match ended
	for si < len(s) {
		if pi < len(p) && p[pi] == '*' {
			for pi < len(p) && p[pi] == '*' {
				pi++
			}
			if pi == len(p) {
				return true
			}
			star, starS = pi, si
			continue
		}
		if pi < len(p) {
			if n, ok := one(p[pi:], s[si], fold); ok {
				pi += n
				si++
				continue
			}
		}
		if star < 0 {
			return false
		}
		// Let the last star take one more byte and try the rest again.
		starS++
		pi, si = star, starS
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// one matches the single-byte pattern element at the start of p (not a
// star) against c and returns how many pattern bytes it took.
func one(p []byte, c byte, fold bool) (int, bool) {
	switch p[0] {
	case '?':
		return 1, true
	case '[':
		return class(p, c, fold)
	case '\\':
		if len(p) >= 2 {
			return 2, same(p[1], c, fold)
		}
	}
	return 1, same(p[0], c, fold)
}

// class matches a [...] element.
func class(p []byte, c byte, fold bool) (int, bool) {
	i := 1
	not := i < len(p) && p[i] == '^'
	if not {
		i++
	}
	matched := false
	for {
		if i < len(p) && p[i] == '\\' && len(p)-i >= 2 {
			i++
			if p[i] == c {
				matched = true
			}
		} else if i < len(p) && p[i] == ']' {
			break
		} else if i >= len(p) {
			i-- // an open class ends with the pattern
			break
		} else if len(p)-i >= 3 && p[i+1] == '-' {
			lo, hi, x := int(int8(p[i])), int(int8(p[i+2])), int(int8(c))
			if lo > hi {
				lo, hi = hi, lo
			}
			if fold {
				lo, hi, x = lowerInt(lo), lowerInt(hi), lowerInt(x)
			}
			if x >= lo && x <= hi {
				matched = true
			}
			i += 2
		} else if same(p[i], c, fold) {
			matched = true
		}
		i++
	}
	return i + 1, matched != not
}

func same(a, b byte, fold bool) bool {
	if fold {
		return lower(a) == lower(b)
	}
	return a == b
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func lowerInt(c int) int {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
