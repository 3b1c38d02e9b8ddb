package engine

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestLongDoubleIntegerPath checks add's integer shortcut against the
// big.Float arithmetic it skips.
func TestLongDoubleIntegerPath(t *testing.T) {
	var ld longDouble
	r := rand.New(rand.NewPCG(1, 2))
	nums := []string{"0", "-0", "1", "-1", "007", "-007", "999999999999999999", "-999999999999999999", "123456789012345678"}
	for range 2000 {
		n := r.Int64N(2_000_000_000_000_000_000) - 1_000_000_000_000_000_000
		if r.IntN(2) == 0 {
			n >>= r.IntN(60)
		}
		nums = append(nums, strconv.FormatInt(n, 10))
	}
	for i, a := range nums {
		b := nums[(i*7+3)%len(nums)]
		fast, nf1, of1 := ld.add(nil, []byte(a), []byte(b))
		slow, nf2, of2 := ld.addBig(nil, []byte(a), []byte(b))
		if string(fast) != string(slow) || nf1 != nf2 || of1 != of2 {
			t.Fatalf("%s + %s: shortcut %q, big.Float %q", a, b, fast, slow)
		}
	}
}
