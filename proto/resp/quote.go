package resp

// AppendQuoted appends s double-quoted the way Redis prints a string back
// (sdscatrepr: MONITOR's lines, CLIENT's fields) and redis-cli prints bulk
// replies: printable ASCII as is, \\ \" \n \r \t \a \b escaped, every other
// byte as \xHH. SplitArgs reads the result back.
func AppendQuoted(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for _, c := range s {
		switch c {
		case '\\', '"':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\a':
			dst = append(dst, '\\', 'a')
		case '\b':
			dst = append(dst, '\\', 'b')
		default:
			if c < 0x20 || c > 0x7e {
				dst = append(dst, '\\', 'x', hex[c>>4], hex[c&15])
			} else {
				dst = append(dst, c)
			}
		}
	}
	return append(dst, '"')
}
