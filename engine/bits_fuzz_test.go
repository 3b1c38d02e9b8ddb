package engine

import (
	"strconv"
	"testing"

	"github.com/goblin-kv/goblin/internal/testkit"

	"github.com/goblin-kv/goblin/proto"
)

// The model FuzzBits holds the engine to: values as plain byte slices,
// bits numbered from the most significant bit of byte 0 (Redis's order),
// ranges resolved as Redis documents them. It shares no code with the
// engine, the store or package bitmap.

// modelSpan resolves GETRANGE's and BITCOUNT's start and end (negative:
// from the end) over n units into the inclusive span [lo, hi]; ok is false
// for an empty one. It states Redis's rule directly (store.Range computes
// the same arithmetic step by step, as the server runs it): each end
// counts from the end when negative, the span is clamped to [0, n-1], and
// two negative ends the wrong way round are empty before any clamping.
func modelSpan(n, start, end int64) (lo, hi int64, ok bool) {
	resolve := func(x int64) int64 {
		if x < 0 {
			return x + n
		}
		return x
	}
	lo, hi = max(resolve(start), 0), min(max(resolve(end), 0), n-1)
	wrongWay := start < 0 && end < 0 && start > end
	return lo, hi, !wrongWay && lo <= hi
}

func modelBit(v []byte, i int64) int {
	if i/8 >= int64(len(v)) {
		return 0
	}
	return int(v[i/8]>>(7-i%8)) & 1
}

// FuzzBits runs SETRANGE, GETRANGE, APPEND, SETBIT, GETBIT, BITOP,
// BITCOUNT and GET on three keys through the engine and through the model,
// and requires the same reply to each. Seeds in testdata/fuzz/FuzzBits
// run in every go test.
func FuzzBits(f *testing.F) {
	f.Add([]byte("\x00\x00\x05\x03abc\x01\x00\xfe\x02\x07\x00"))
	f.Add([]byte("\x03\x00\x07\x01\x03\x01\x09\x01\x05\x00\x02\x01\x00\x07\x02\x06\x02\x01\x00\x01"))
	f.Add([]byte("\x02\x01\x04\xff\x0f\xf0\x00\x05\x03\x01\x02\x00\x06\x01\x81\x10\x01\x04\x00\x20"))
	f.Add([]byte("\x00\x02\x3f\x01z\x06\x02\x00\x00\x00\x01\x02\xf0\x08\x05\x02\x00\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, _ := newEngine(t, Options{})
		s := NewSession(proto.RESP, nil)
		model := map[string][]byte{}
		keys := []string{"a", "b", "c"}
		in := testkit.NewFuzzReader(data)
		next := in.Next
		bytesOf := func(n int) []byte {
			v := make([]byte, n)
			for i := range v {
				v[i] = next()
			}
			return v
		}
		itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
		bulk := func(v []byte) string { return "$" + string(v) }
		for ops := 0; in.Len() > 0 && ops < 200; ops++ {
			op, key := next(), keys[next()%3]
			var args []string
			var want string
			switch op % 8 {
			case 0: // SETRANGE key offset value
				off, val := int64(next()%64), bytesOf(int(next()%8))
				args = []string{"SETRANGE", key, itoa(off), string(val)}
				v, ok := model[key]
				if len(val) > 0 {
					for int64(len(v)) < off+int64(len(val)) {
						v = append(v, 0)
					}
					copy(v[off:], val)
					model[key], ok = v, true
				}
				want = ":" + itoa(int64(len(v)))
				_ = ok
			case 1: // GETRANGE key start end
				start, end := int64(int8(next()))/4, int64(int8(next()))/4
				args = []string{"GETRANGE", key, itoa(start), itoa(end)}
				v := model[key]
				want = "$"
				if lo, hi, ok := modelSpan(int64(len(v)), start, end); ok {
					want = bulk(v[lo : hi+1])
				}
			case 2: // APPEND key value
				val := bytesOf(int(next() % 4))
				args = []string{"APPEND", key, string(val)}
				model[key] = append(append([]byte{}, model[key]...), val...)
				want = ":" + itoa(int64(len(model[key])))
			case 3: // SETBIT key offset bit
				off, bit := int64(next())*2, int(next()&1)
				args = []string{"SETBIT", key, itoa(off), itoa(int64(bit))}
				v := model[key]
				want = ":" + itoa(int64(modelBit(v, off)))
				for int64(len(v)) <= off/8 {
					v = append(v, 0)
				}
				v[off/8] = v[off/8]&^(1<<(7-off%8)) | byte(bit)<<(7-off%8)
				model[key] = v
			case 4: // GETBIT key offset
				off := int64(next()) * 3
				args = []string{"GETBIT", key, itoa(off)}
				want = ":" + itoa(int64(modelBit(model[key], off)))
			case 5: // BITOP op dest src...
				kind := []string{"AND", "OR", "XOR", "NOT"}[next()%4]
				srcs := []string{keys[next()%3]}
				if kind != "NOT" {
					for n := next() % 3; n > 0; n-- {
						srcs = append(srcs, keys[next()%3])
					}
				}
				args = append([]string{"BITOP", kind, key}, srcs...)
				longest := 0
				for _, k := range srcs {
					longest = max(longest, len(model[k]))
				}
				res := make([]byte, longest)
				for i := range res {
					at := func(k string) byte {
						if i < len(model[k]) {
							return model[k][i]
						}
						return 0
					}
					acc := at(srcs[0])
					for _, k := range srcs[1:] {
						switch kind {
						case "AND":
							acc &= at(k)
						case "OR":
							acc |= at(k)
						case "XOR":
							acc ^= at(k)
						}
					}
					if kind == "NOT" {
						acc = ^acc
					}
					res[i] = acc
				}
				if longest == 0 {
					delete(model, key)
				} else {
					model[key] = res
				}
				want = ":" + itoa(int64(longest))
			case 6: // BITCOUNT key [start end [BYTE|BIT]]
				args = []string{"BITCOUNT", key}
				v := model[key]
				lo, hi, ok, unit := int64(0), int64(len(v))*8-1, len(v) > 0, int64(8)
				if m := next(); m%3 != 0 {
					start, end := int64(int8(next()))/4, int64(int8(next()))/4
					args = append(args, itoa(start), itoa(end))
					n := int64(len(v))
					if m%3 == 2 {
						args, n, unit = append(args, "BIT"), n*8, 1
					}
					lo, hi, ok = modelSpan(n, start, end)
					lo, hi = lo*unit, hi*unit+unit-1
				}
				count := 0
				for i := lo; ok && i <= hi; i++ {
					count += modelBit(v, i)
				}
				want = ":" + itoa(int64(count))
			case 7: // GET key
				args = []string{"GET", key}
				want = "nil"
				if v, ok := model[key]; ok {
					want = bulk(v)
				}
			}
			if got := do(t, e, s, args...); got != want {
				t.Fatalf("%q = %q, model %q", args, got, want)
			}
		}
	})
}
