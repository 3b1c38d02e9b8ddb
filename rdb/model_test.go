package rdb

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The model: one set of keys covering every kind and every encoding the
// Encoder chooses between (and so every form Redis 7.0 holds in memory
// under its default limits), used by the unit, golden and live tests.

type modelKey struct {
	db     int
	key    string
	expiry int64 // NoExpiry or absolute ms
	v      Value
}

// farExpiry is 2100-01-01, so golden files stay valid; pastExpiry is long
// gone, so loaders drop the key.
const (
	farExpiry  = 4102444800000
	pastExpiry = 1000000000000
)

func strs(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

func seq(prefix string, n, pad int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		s := prefix + strconv.Itoa(i)
		if len(s) < pad {
			s += strings.Repeat("x", pad-len(s))
		}
		out[i] = []byte(s)
	}
	return out
}

func ints(n int, from, step int64) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(strconv.FormatInt(from+int64(i)*step, 10))
	}
	return out
}

func pairs(fields, values [][]byte) [][]byte {
	out := make([][]byte, 0, 2*len(fields))
	for i := range fields {
		out = append(out, fields[i], values[i])
	}
	return out
}

func scoresOf(n int, f func(i int) float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func binaryString(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

func model() []modelKey {
	str := func(s string) Value { return Value{Kind: KindString, Str: []byte(s)} }
	list := func(items [][]byte) Value { return Value{Kind: KindList, Items: items} }
	set := func(items [][]byte) Value { return Value{Kind: KindSet, Items: items} }
	hash := func(items [][]byte) Value { return Value{Kind: KindHash, Items: items} }
	zset := func(items [][]byte, sc []float64) Value { return Value{Kind: KindZSet, Items: items, Scores: sc} }
	m := []modelKey{
		// strings: int8, int16, int32, too big for int32, not canonical
		// integers, LZF, too short for LZF, incompressible, empty, binary
		{0, "s:int8", NoExpiry, str("-7")},
		{0, "s:int16", NoExpiry, str("12345")},
		{0, "s:int32", NoExpiry, str("-2147483648")},
		{0, "s:int64", NoExpiry, str("12345678901")},
		{0, "s:lead0", NoExpiry, str("007")},
		{0, "s:plus", NoExpiry, str("+5")},
		{0, "s:lzf", NoExpiry, str(strings.Repeat("a", 40))},
		{0, "s:short", NoExpiry, str("hello")},
		{0, "s:noise", NoExpiry, Value{Kind: KindString, Str: binaryString(300)}},
		{0, "s:empty", NoExpiry, str("")},
		{0, "s:long", NoExpiry, str(strings.Repeat("goblin-rdb ", 500))},
		{0, "s:ttl", farExpiry, str("expires in 2100")},
		{0, "s:expired", pastExpiry, str("gone")},
		{0, "12", NoExpiry, str("integer key")},
		// lists: one listpack node with every integer width, many nodes,
		// a node holding one element larger than the node size
		{0, "l:small", NoExpiry, list(strs("a", "1", "-5000", "127", "-4096", "32767", "-8388608", "2147483647", "9223372036854775807", "-9223372036854775808", "3.14", ""))},
		{0, "l:large", NoExpiry, list(seq("element-", 300, 40))},
		{0, "l:huge", farExpiry, list([][]byte{[]byte("x"), bytes.Repeat([]byte("H"), 10000), []byte("y")})},
		// sets: intsets of each width, plain sets
		{0, "set:int16", NoExpiry, set(strs("3", "1", "2"))},
		{0, "set:int32", NoExpiry, set(strs("70000", "-1", "5"))},
		{0, "set:int64", NoExpiry, set(strs("1099511627776", "-3"))},
		{0, "set:strings", NoExpiry, set(strs("x", "y", "12"))},
		{0, "set:manyints", NoExpiry, set(ints(600, -300, 1))},
		// hashes: listpack, too many fields, a value too long
		{0, "h:small", NoExpiry, hash(strs("f1", "v1", "f2", "123", "neg", "-100000"))},
		{0, "h:many", NoExpiry, hash(pairs(seq("field", 600, 0), seq("value", 600, 0)))},
		{0, "h:longvalue", NoExpiry, hash(strs("f", strings.Repeat("v", 100), "g", "1"))},
		// zsets: listpack (integer and text scores, infinities, ties), too
		// many members, a member too long
		{0, "z:small", NoExpiry, zset(strs("m1", "m2", "m3", "m4", "m5", "tie-b", "tie-a", "neg"),
			[]float64{1, 2.5, math.Inf(-1), 1e20, 0.1, 7, 7, -3})},
		{0, "z:many", NoExpiry, zset(seq("member", 200, 0), scoresOf(200, func(i int) float64 { return float64(i) / 3 }))},
		{0, "z:longmember", NoExpiry, zset([][]byte{bytes.Repeat([]byte("m"), 100), []byte("n")}, []float64{1.5, math.Inf(1)})},
		// another database
		{3, "s:db3", NoExpiry, str("in db 3")},
		{3, "l:db3", farExpiry, list(strs("only", "in", "three"))},
	}
	return m
}

// modelDBs groups the model by database, in order.
func modelDBs(m []modelKey) (dbs []int, byDB map[int][]modelKey) {
	byDB = map[int][]modelKey{}
	for _, k := range m {
		if _, ok := byDB[k.db]; !ok {
			dbs = append(dbs, k.db)
		}
		byDB[k.db] = append(byDB[k.db], k)
	}
	return dbs, byDB
}

// writeModel encodes m as an RDB file.
func writeModel(tb testing.TB, m []modelKey, opts EncoderOptions) []byte {
	tb.Helper()
	var buf bytes.Buffer
	e := NewEncoder(&buf, opts)
	if err := e.WriteHeader(); err != nil {
		tb.Fatal(err)
	}
	dbs, byDB := modelDBs(m)
	for _, db := range dbs {
		var exp uint64
		for _, k := range byDB[db] {
			if k.expiry != NoExpiry {
				exp++
			}
		}
		if err := e.SelectDB(db, uint64(len(byDB[db])), exp); err != nil {
			tb.Fatal(err)
		}
		for _, k := range byDB[db] {
			if err := e.Write([]byte(k.key), &k.v, k.expiry); err != nil {
				tb.Fatal(err)
			}
		}
	}
	if err := e.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// canon renders a value in an order-independent text form for
// comparison: sets and hashes sorted, zsets by member.
func canon(v *Value) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:", v.Kind)
	switch v.Kind {
	case KindString:
		fmt.Fprintf(&b, "%q", v.Str)
	case KindList:
		for _, it := range v.Items {
			fmt.Fprintf(&b, "%q,", it)
		}
	case KindSet:
		ss := make([]string, len(v.Items))
		for i, it := range v.Items {
			ss[i] = string(it)
		}
		slices.Sort(ss)
		fmt.Fprintf(&b, "%q", ss)
	case KindHash:
		ss := make([]string, 0, len(v.Items)/2)
		for i := 0; i+1 < len(v.Items); i += 2 {
			ss = append(ss, strconv.Quote(string(v.Items[i]))+"="+strconv.Quote(string(v.Items[i+1])))
		}
		slices.Sort(ss)
		fmt.Fprintf(&b, "%s", ss)
	case KindZSet:
		ss := make([]string, len(v.Items))
		for i, it := range v.Items {
			ss[i] = strconv.Quote(string(it)) + "=" + strconv.FormatFloat(v.Scores[i], 'g', -1, 64)
		}
		slices.Sort(ss)
		fmt.Fprintf(&b, "%s", ss)
	}
	return b.String()
}

// modelMap is the model as db → key → canonical value and expiry.
func modelMap(m []modelKey, dropExpired bool) map[string]string {
	out := map[string]string{}
	for _, k := range m {
		if dropExpired && k.expiry != NoExpiry && k.expiry < pastExpiry+1 {
			continue
		}
		out[fmt.Sprintf("%d/%s", k.db, k.key)] = fmt.Sprintf("exp=%d %s", k.expiry, canon(&k.v))
	}
	return out
}

// decodeAll decodes an RDB file into the same shape as modelMap.
func decodeAll(tb testing.TB, data []byte, opts DecoderOptions) (map[string]string, map[string]byte, *Decoder) {
	tb.Helper()
	d := NewDecoder(bytes.NewReader(data), opts)
	out := map[string]string{}
	types := map[string]byte{}
	err := d.Decode(func(e *Entry) error {
		id := fmt.Sprintf("%d/%s", e.DB, e.Key)
		if _, dup := out[id]; dup {
			return fmt.Errorf("duplicate key %s", id)
		}
		out[id] = fmt.Sprintf("exp=%d %s", e.Expiry, canon(&e.Value))
		types[id] = e.Type
		return nil
	})
	if err != nil {
		tb.Fatalf("decode: %v", err)
	}
	return out, types, d
}

func diffMaps(tb testing.TB, what string, got, want map[string]string) {
	tb.Helper()
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			tb.Errorf("%s: key %s missing", what, k)
		} else if g != w {
			tb.Errorf("%s: key %s:\n got  %.300s\n want %.300s", what, k, g, w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			tb.Errorf("%s: unexpected key %s", what, k)
		}
	}
}

func inf(sign int) float64 { return math.Inf(sign) }
