package resp

import "strconv"

// RESP3 reply encoders, for clients that switched protocol with HELLO 3.
// Redis sends these types only to such clients; a RESP2 client gets each
// one's RESP2 form (see package command's Downgrade).

// AppendMap appends a map header for n key/value pairs, which the caller
// appends next: %n\r\n.
func AppendMap(b []byte, n int) []byte { return appendHeader(b, '%', n) }

// AppendSet appends a set header for n elements: ~n\r\n.
func AppendSet(b []byte, n int) []byte { return appendHeader(b, '~', n) }

// AppendNull3 appends RESP3's null: _\r\n.
func AppendNull3(b []byte) []byte { return append(b, "_\r\n"...) }

// AppendBool appends a boolean: #t\r\n or #f\r\n.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, "#t\r\n"...)
	}
	return append(b, "#f\r\n"...)
}

// AppendDouble appends a double whose decimal text is text (as Redis
// formats it: "1.5", "inf", "-inf", "nan"): ,text\r\n.
func AppendDouble(b, text []byte) []byte {
	b = append(b, ',')
	b = append(b, text...)
	return append(b, '\r', '\n')
}

// AppendVerbatim appends a verbatim string of format "txt": =len\r\ntxt:v\r\n.
func AppendVerbatim(b, v []byte) []byte {
	b = append(b, '=')
	b = strconv.AppendInt(b, int64(len(v)+4), 10)
	b = append(b, "\r\ntxt:"...)
	b = append(b, v...)
	return append(b, '\r', '\n')
}

func appendHeader(b []byte, c byte, n int) []byte {
	b = append(b, c)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

// AppendPush appends a push header for n elements: >n\r\n (pub/sub
// messages and other out-of-band data for a RESP3 client).
func AppendPush(b []byte, n int) []byte { return appendHeader(b, '>', n) }
