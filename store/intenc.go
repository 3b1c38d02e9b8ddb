package store

// encodeInt writes n as the fewest little-endian two's-complement bytes that sign-
// extend back to n, and returns how many.
func encodeInt(b *[8]byte, n int64) int {
	k := 1
	for k < 8 && (n>>(8*k-1) != 0 && n>>(8*k-1) != -1) {
		k++
	}
	u := uint64(n)
	for i := 0; i < k; i++ {
		b[i] = byte(u >> (8 * i))
	}
	return k
}

// decodeInt sign-extends 1..8 little-endian bytes.
func decodeInt(b []byte) int64 {
	var u uint64
	for i := len(b) - 1; i >= 0; i-- {
		u = u<<8 | uint64(b[i])
	}
	sh := uint(64 - 8*len(b))
	return int64(u<<sh) >> sh
}

// parseCanonicalInt parses b when it is exactly what strconv.FormatInt would print
// (no sign but '-', no leading zeros, no "-0") and fits an int64. Such values are
// stored as integers: GET prints them back byte for byte.
func parseCanonicalInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	neg := b[0] == '-'
	d := b
	if neg {
		d = b[1:]
		if len(d) == 0 {
			return 0, false
		}
	}
	if d[0] < '0' || d[0] > '9' || (d[0] == '0' && (len(d) > 1 || neg)) {
		return 0, false
	}
	var u uint64
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
		if u > (1<<63)/10 { // u*10 + 9 could pass 1<<63, or wrap round 1<<64
			return 0, false
		}
		u = u*10 + uint64(c-'0')
		if u > 1<<63 {
			return 0, false
		}
	}
	if neg {
		return -int64(u), true // u == 1<<63 gives minInt64
	}
	if u > maxInt64 {
		return 0, false
	}
	return int64(u), true
}
