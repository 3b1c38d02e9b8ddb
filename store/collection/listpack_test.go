package collection

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The bytes redis-server 7.0 stores for small hashes and sorted sets (DUMP
// payloads, docs/store.md), rebuilt by appending the same entries in order.
func TestListpackGoldenRedisBytes(t *testing.T) {
	for _, c := range []struct {
		name  string
		elems []string
		want  string
	}{
		{"empty", nil, "07000000 0000 FF"},
		{"hash f1:v1 f2:123", []string{"f1", "v1", "f2", "123"}, "15000000 0400 826631 03 827631 03 826632 03 7B01 FF"},
		{"zset m1:1 m2:2.5", []string{"m1", "1", "m2", "2.5"}, "16000000 0400 826D31 03 0101 826D32 03 83322E35 04 FF"},
	} {
		lp := NewListpack(nil)
		for _, e := range c.elems {
			lp = lp.Append([]byte(e))
		}
		if want := unhex(t, c.want); !bytes.Equal(lp, want) {
			t.Errorf("%s: got % x, want % x", c.name, []byte(lp), want)
		}
		if err := ValidateListpack(lp, true, nil); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// Each integer and string encoding at its boundaries: the entry written, its
// size and its value read back.
func TestListpackEncodings(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // entry bytes, backlen included
	}{
		{"0", "00 01"},
		{"127", "7F 01"},
		{"128", "C080 02"},
		{"-1", "DFFF 02"},
		{"-4096", "D000 02"},
		{"4095", "CFFF 02"},
		{"4096", "F10010 03"},
		{"-32768", "F10080 03"},
		{"32768", "F2008000 04"},
		{"-8388609", "F3FFFF7FFF 05"},
		{"2147483648", "F40000008000000000 09"},
		{"-9223372036854775808", "F40000000000000080 09"},
		{"9223372036854775808", "93" + hex.EncodeToString([]byte("9223372036854775808")) + "14"}, // overflow: a string
		{"007", "83303037 04"}, // leading zero: a string
		{"-0", "822D30 03"},    // "-0": a string
		{"+1", "822B31 03"},    // '+': a string
		{"", "80 01"},          // empty string
	} {
		lp := NewListpack(nil).Append([]byte(c.in))
		want := unhex(t, c.want)
		if got := lp[lpHeaderSize : len(lp)-1]; !bytes.Equal(got, want) {
			t.Errorf("%q: entry % x, want % x", c.in, got, want)
		}
		if got := lp.AppendValue(nil, lp.First()); string(got) != c.in {
			t.Errorf("%q: read back %q", c.in, got)
		}
	}
	// String length boundaries: 6-bit (63), 12-bit (64, 4095), 32-bit (4096), and
	// the backlen boundaries at entry sizes 127/128 and 16382/16383.
	for _, n := range []int{63, 64, 125, 126, 127, 4095, 4096, 16377, 16378, 70000} {
		s := bytes.Repeat([]byte{'x'}, n)
		lp := NewListpack(nil).Append(s).Append([]byte("tail"))
		if err := ValidateListpack(lp, true, nil); err != nil {
			t.Fatalf("len %d: %v", n, err)
		}
		enc := encodedSize(lp[lpHeaderSize:])
		if got := lp.Next(lp.First()) - lpHeaderSize; got != enc+backlenSize(enc) {
			t.Errorf("len %d: entry size %d", n, got)
		}
		if p := lp.Prev(lp.Last()); p != lpHeaderSize {
			t.Errorf("len %d: Prev(Last) = %d", n, p)
		}
		if got, _, _ := lp.Get(lp.First()); !bytes.Equal(got, s) {
			t.Errorf("len %d: read back %d bytes", n, len(got))
		}
	}
}

func TestBacklenThresholds(t *testing.T) {
	for _, c := range []struct{ l, n int }{{127, 1}, {128, 2}, {16382, 2}, {16383, 3}, {2097150, 3}, {2097151, 4}, {268435454, 4}, {268435455, 5}} {
		b := appendBacklen(nil, c.l)
		if len(b) != c.n || backlenSize(c.l) != c.n {
			t.Errorf("backlen(%d): %d bytes, want %d", c.l, len(b), c.n)
		}
		if l, n := decodeBacklen(b, len(b)-1); l != c.l || n != c.n {
			t.Errorf("backlen(%d) decodes as %d (%d bytes)", c.l, l, n)
		}
	}
}

// lpModel checks a listpack against a slice of strings after every operation.
func checkListpack(t testing.TB, lp Listpack, model []string) {
	t.Helper()
	if err := ValidateListpack(lp, true, nil); err != nil {
		t.Fatalf("invalid: %v", err)
	}
	if lp.Len() != len(model) {
		t.Fatalf("Len %d, model %d", lp.Len(), len(model))
	}
	i := 0
	for p := lp.First(); p >= 0; p = lp.Next(p) {
		if got := lp.AppendValue(nil, p); string(got) != model[i] {
			t.Fatalf("entry %d: %q, model %q", i, got, model[i])
		}
		i++
	}
	for p := lp.Last(); p >= 0; p = lp.Prev(p) {
		i--
		if !lp.Equal(p, []byte(model[i])) {
			t.Fatalf("backwards entry %d differs from %q", i, model[i])
		}
	}
}

func randElem(r *rand.Rand) string {
	switch r.IntN(6) {
	case 0:
		return strconv.FormatInt(r.Int64N(256)-128, 10)
	case 1:
		return strconv.FormatInt(int64(r.Uint64()), 10)
	case 2:
		return strconv.FormatInt(r.Int64N(1<<25)-1<<24, 10)
	case 3:
		return strings.Repeat("y", r.IntN(5000))
	case 4:
		return "0" + strconv.Itoa(r.IntN(100))
	}
	return strings.Repeat(string(rune('a'+r.IntN(26))), r.IntN(70))
}

// Random inserts, deletes, replaces and seeks against a []string model,
// validating the whole listpack after each.
func TestListpackModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	lp := NewListpack(nil)
	var model []string
	for op := 0; op < 20000; op++ {
		n := len(model)
		switch k := r.IntN(10); {
		case k < 4 || n == 0:
			e := randElem(r)
			i := r.IntN(n + 1)
			p := len(lp) - 1
			if i < n {
				p = lp.Seek(i)
			}
			lp = lp.InsertBefore(p, []byte(e))
			model = append(model[:i], append([]string{e}, model[i:]...)...)
		case k < 6:
			i := r.IntN(n)
			lp = lp.Delete(lp.Seek(i - n)) // negative index: from the end
			model = append(model[:i], model[i+1:]...)
		case k < 8:
			i := r.IntN(n)
			e := randElem(r)
			lp = lp.Replace(lp.Seek(i), []byte(e))
			model[i] = e
		case k < 9:
			i, c := r.IntN(n), r.IntN(4)
			lp = lp.DeleteRange(lp.Seek(i), c)
			model = append(model[:i], model[min(i+c, n):]...)
		default:
			i := r.IntN(n)
			if p := lp.Find(lp.First(), []byte(model[i]), 0); p < 0 || !lp.Equal(p, []byte(model[i])) {
				t.Fatalf("Find(%q) = %d", model[i], p)
			}
		}
		if op%50 == 0 || len(model) < 20 {
			checkListpack(t, lp, model)
		}
		if len(model) > 300 {
			lp = NewListpack(lp[:0])
			model = model[:0]
		}
	}
	checkListpack(t, lp, model)
}

// Past 65534 entries the header count becomes "unknown" (0xFFFF) and stays so
// until Len recounts below it, as in Redis.
func TestListpackUnknownCount(t *testing.T) {
	lp := NewListpack(nil)
	for i := 0; i < 65536; i++ {
		lp = lp.AppendInt(int64(i % 100))
	}
	if h := lp[4:6]; h[0] != 0xFF || h[1] != 0xFF {
		t.Fatalf("header count % x, want ff ff", h)
	}
	lp = lp.DeleteRange(lp.First(), 10)
	if h := lp[4:6]; h[0] != 0xFF || h[1] != 0xFF {
		t.Fatalf("after delete: header count % x, want ff ff", h)
	}
	if n := lp.Len(); n != 65526 {
		t.Fatalf("Len %d", n)
	}
	if h := int(lp[4]) | int(lp[5])<<8; h != 65526 {
		t.Fatalf("Len did not store the count back: %d", h)
	}
	if err := ValidateListpack(lp, true, nil); err != nil {
		t.Fatal(err)
	}
}

// Inserting a value that aliases the listpack itself (LSET k 0 with an element
// read from the same list) must not read shifted bytes.
func TestListpackInsertAliased(t *testing.T) {
	lp := make(Listpack, 0, 256)
	lp = NewListpack(lp).Append([]byte("hello")).Append([]byte("world"))
	s, _, _ := lp.Get(lp.Last())
	lp = lp.Prepend(s)
	checkListpack(t, lp, []string{"world", "hello", "world"})
	s, _, _ = lp.Get(lp.First())
	lp = lp.Replace(lp.Last(), s)
	checkListpack(t, lp, []string{"world", "hello", "world"})
}

func TestValidateListpackRejects(t *testing.T) {
	good := NewListpack(nil).Append([]byte("abc")).AppendInt(1000)
	for _, c := range []struct {
		name string
		b    []byte
		deep bool
		want error
	}{
		{"short", []byte{6, 0, 0, 0, 0, 0}, false, ErrListpackHeader},
		{"total", append([]byte{9}, good[1:]...), false, ErrListpackHeader},
		{"no terminator", append(append([]byte{}, good[:len(good)-1]...), 0xFE), false, ErrListpackHeader},
		{"bad tag", unhex(t, "09000000 0100 F5 01 FF"), true, ErrListpackEntry},
		{"bad backlen", unhex(t, "09000000 0100 05 02 FF"), true, ErrListpackEntry},
		{"past end", unhex(t, "09000000 0100 85 01 FF"), true, ErrListpackEntry},
		{"count", unhex(t, "09000000 0200 05 01 FF"), true, ErrListpackCount},
		{"32-bit string past end", unhex(t, "0D000000 0100 F0 FFFFFF7F 01 FF"), true, ErrListpackEntry},
	} {
		if err := ValidateListpack(c.b, c.deep, nil); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	// The shallow check passes what only the deep one catches.
	if err := ValidateListpack(unhex(t, "09000000 0200 05 01 FF"), false, nil); err != nil {
		t.Errorf("shallow: %v", err)
	}
}

func TestListpackAllocs(t *testing.T) {
	buf := make(Listpack, 0, 1<<16)
	lp := NewListpack(buf)
	field := []byte("field:12345")
	if n := testing.AllocsPerRun(1000, func() {
		lp = lp.Append(field).AppendInt(42)
		lp = lp.Delete(lp.First())
		lp = lp.Delete(lp.First())
		_ = lp.Find(lp.First(), field, 1)
	}); n != 0 {
		t.Fatalf("%v allocations per run", n)
	}
}

func FuzzValidateListpack(f *testing.F) {
	f.Add([]byte(NewListpack(nil).Append([]byte("f1")).Append([]byte("v1")).AppendInt(-5000)))
	f.Add(unhex(f, "09000000 0100 F5 01 FF"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if ValidateListpack(b, true, nil) != nil {
			return
		}
		// A blob that passes deep validation is safe to walk both ways and to edit.
		lp := Listpack(b)
		n := 0
		for p := lp.First(); p >= 0; p = lp.Next(p) {
			_ = lp.AppendValue(nil, p)
			n++
		}
		for p := lp.Last(); p >= 0; p = lp.Prev(p) {
			n--
		}
		if n != 0 {
			t.Fatalf("forward and backward walks disagree by %d", n)
		}
		if p := lp.First(); p >= 0 {
			lp2 := Listpack(append([]byte(nil), b...)).Delete(p)
			if err := ValidateListpack(lp2, true, nil); err != nil {
				t.Fatalf("after Delete: %v", err)
			}
		}
	})
}

// FuzzListpackOps decodes the input as operations and checks them against a model.
func FuzzListpackOps(f *testing.F) {
	f.Add([]byte{0, 'a', 1, 0, 2, 3})
	f.Add([]byte{0, 200, 0, 7, 3, 1, 2, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		lp := NewListpack(nil)
		var model []string
		for len(data) >= 2 {
			op, arg := data[0], data[1]
			data = data[2:]
			n := len(model)
			switch op % 4 {
			case 0:
				e := strconv.Itoa(int(arg) - 100)
				if arg&1 == 0 {
					e = strings.Repeat("s", int(arg))
				}
				i := int(arg) % (n + 1)
				p := len(lp) - 1
				if i < n {
					p = lp.Seek(i)
				}
				lp = lp.InsertBefore(p, []byte(e))
				model = append(model[:i], append([]string{e}, model[i:]...)...)
			case 1:
				if n > 0 {
					i := int(arg) % n
					lp = lp.Delete(lp.Seek(i))
					model = append(model[:i], model[i+1:]...)
				}
			case 2:
				if n > 0 {
					i := int(arg) % n
					e := strconv.Itoa(int(arg) * 1000)
					lp = lp.Replace(lp.Seek(i), []byte(e))
					model[i] = e
				}
			case 3:
				if n > 0 {
					i, c := int(arg)%n, int(arg)%3
					lp = lp.DeleteRange(lp.Seek(i), c)
					model = append(model[:i], model[min(i+c, n):]...)
				}
			}
			checkListpack(t, lp, model)
		}
	})
}
