package resp

import "strconv"

// AppendSimpleString appends a simple string reply: +s\r\n. s must not
// contain CR or LF.
func AppendSimpleString(b []byte, s string) []byte {
	b = append(b, '+')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// AppendOK appends +OK\r\n.
func AppendOK(b []byte) []byte { return append(b, "+OK\r\n"...) }

// AppendError appends an error reply: -s\r\n. s starts with the error code,
// e.g. "ERR syntax error" or "NOPROTO unsupported protocol version". CR and
// LF in s are replaced by spaces, as Redis does, so the reply stays one line.
func AppendError(b []byte, s string) []byte {
	b = append(b, '-')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		b = append(b, c)
	}
	return append(b, '\r', '\n')
}

// AppendInt appends an integer reply: :n\r\n.
func AppendInt(b []byte, n int64) []byte {
	b = append(b, ':')
	b = strconv.AppendInt(b, n, 10)
	return append(b, '\r', '\n')
}

// AppendBulk appends a bulk string reply: $len\r\nv\r\n.
func AppendBulk(b, v []byte) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(v)), 10)
	b = append(b, '\r', '\n')
	b = append(b, v...)
	return append(b, '\r', '\n')
}

// AppendBulkString is AppendBulk for a string.
func AppendBulkString(b []byte, s string) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// AppendBulkInt appends n formatted in decimal as a bulk string.
func AppendBulkInt(b []byte, n int64) []byte {
	var tmp [20]byte
	return AppendBulk(b, strconv.AppendInt(tmp[:0], n, 10))
}

// AppendNull appends the RESP2 null bulk string: $-1\r\n.
func AppendNull(b []byte) []byte { return append(b, "$-1\r\n"...) }

// AppendNullArray appends the RESP2 null array: *-1\r\n.
func AppendNullArray(b []byte) []byte { return append(b, "*-1\r\n"...) }

// AppendArray appends an array header for n elements, which the caller
// appends next.
func AppendArray(b []byte, n int) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}
