package store

import (
	"encoding/binary"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// FuzzStoreOps decodes the input as a stream of operations (GET, SET, DEL,
// EXPIRE, INCRBY, APPEND, GETRANGE, SETRANGE, GETDEL, RENAME...) on a small key
// set and runs them against both the store and the Go map model, with the invariant checker
// after every operation. The seed corpus in testdata/fuzz/FuzzStoreOps runs in every
// plain `go test`.
// longKeys are the longest key whose length the slot holds and two whose
// length is in the block (the shortest such, and a longer one).
var longKeys = [...]string{strings.Repeat("s", longKey-1), strings.Repeat("L", longKey), strings.Repeat("l", longKey+4321)}

func FuzzStoreOps(f *testing.F) {
	f.Add([]byte{0, 1, 5, 1, 1, 1, 2, 1})
	f.Add([]byte("\x01\x02\x10abcdefghijklmnop\x00\x02\x06\x02\x07\x02"))
	f.Add([]byte("\x08\x03\x05\x08\x03\xff\x00\x03\x09\x03\x03\x04\x0a\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h := newHarness(t, Options{MaxValueLen: 4096})
		keys := []string{"", "a", "key:000000000001", "k3", "a longer key that does not fit anywhere inline", "5", "k6", "k7",
			longKeys[0], longKeys[1], longKeys[2]}
		in := testkit.NewFuzzReader(data)
		next := in.Next
		for ops := 0; in.Len() > 0 && ops < 2000; ops++ {
			op, key := next(), keys[next()%byte(len(keys))]
			switch op % 18 {
			case 0:
				h.get(key)
			case 1, 2:
				n := int(next())
				if n > 200 {
					n = (n - 200) * 100 // up to 5500 bytes: dedicated arena blocks too
				}
				n = min(n, 4096)
				val := make([]byte, n)
				for i := range val {
					val[i] = next()
				}
				var o SetOptions
				flags := next()
				o.NX, o.XX, o.KeepTTL, o.Get = flags&1 != 0, flags&2 != 0, flags&4 != 0, flags&8 != 0
				if flags&16 != 0 {
					o.ExpireAt = h.now() + int64(next()) - 20
				}
				h.set(key, val, o)
			case 3:
				h.del(key)
			case 4:
				h.exists(key)
			case 5:
				h.expireAt(key, h.now()+int64(next())-20)
			case 6:
				h.persist(key)
			case 7:
				h.pttl(key)
			case 8:
				var b [2]byte
				b[0], b[1] = next(), next()
				h.incrBy(key, int64(int16(binary.LittleEndian.Uint16(b[:]))))
			case 9:
				h.set(key, strconv.AppendInt(nil, int64(next())<<32|int64(next())-1<<31, 10), SetOptions{})
			case 10:
				h.appendOp(key, []byte{next(), next()})
			case 11:
				h.clock.Advance(time.Duration(next()) * time.Millisecond)
			case 12:
				h.s.Tick(int(next()) + 1)
			case 13:
				h.strlen(key)
			case 14: // GETRANGE, offsets -64..63
				h.getRange(key, int64(int8(next()))/2, int64(int8(next()))/2)
			case 15: // SETRANGE at offsets up to 255
				off, n := int(next()), int(next()%16)
				val := make([]byte, n)
				for i := range val {
					val[i] = next()
				}
				h.setRange(key, off, val)
			case 16:
				h.getDel(key)
			case 17:
				h.rename(key, keys[next()%byte(len(keys))], next()&1 != 0)
			}
			h.check()
		}
		h.fullCompare()
	})
}
