package store

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

// mentry is the reference model's value: a plain Go map entry.
type mentry struct {
	val []byte
	exp int64 // unix ms, 0 = none
}

// harness runs the same operations on a Store and on a map and fails on any
// difference.
type harness struct {
	t     testing.TB
	s     *Store
	clock *FakeClock
	m     map[string]mentry
	buf   []byte
	ooms  int // writes refused with ErrOOM (the model is left unchanged)
}

// refused reports whether err is an ErrOOM the harness accepts (a capped store).
func (h *harness) refused(err error) bool {
	if err != nil && errors.Is(err, ErrOOM) && h.s.o.MaxMemory > 0 {
		h.ooms++
		return true
	}
	return false
}

func newHarness(t testing.TB, o Options) *harness {
	clock := NewFakeClock(1_700_000_000_000)
	o.Clock = clock
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, s: s, clock: clock, m: make(map[string]mentry)}
}

func (h *harness) now() int64 { return h.clock.NowMillis() }

// live returns the model's entry for key, dropping it when expired.
func (h *harness) live(key string) (mentry, bool) {
	e, ok := h.m[key]
	if ok && e.exp != 0 && e.exp <= h.now() {
		delete(h.m, key)
		return mentry{}, false
	}
	return e, ok
}

func (h *harness) fail(format string, args ...any) {
	h.t.Helper()
	h.t.Fatalf(format, args...)
}

func (h *harness) get(key string) {
	got, found := h.s.Get(h.buf[:0], []byte(key))
	h.buf = got
	e, ok := h.live(key)
	if found != ok || (ok && !bytes.Equal(got, e.val)) {
		h.fail("GET %q = %q, %v; model %q, %v", key, got, found, e.val, ok)
	}
}

func (h *harness) set(key string, val []byte, o SetOptions) {
	old, hadOld, applied, err := h.s.Set(h.buf[:0], []byte(key), val, o)
	h.buf = old
	if h.refused(err) {
		h.live(key) // the store may have dropped the key lazily if it had expired
		return
	}
	if err != nil {
		h.fail("SET %q: %v", key, err)
	}
	e, ok := h.live(key)
	if hadOld != ok {
		h.fail("SET %q %+v: hadOld %v, model %v", key, o, hadOld, ok)
	}
	if o.Get && ok && !bytes.Equal(old, e.val) {
		h.fail("SET %q GET: old %q, model %q", key, old, e.val)
	}
	want := !(o.NX && ok) && !(o.XX && !ok)
	if applied != want {
		h.fail("SET %q %+v: applied %v, model %v", key, o, applied, want)
	}
	if !want {
		return
	}
	exp := o.ExpireAt
	if exp == 0 && o.KeepTTL && ok {
		exp = e.exp
	}
	if exp != 0 && exp <= h.now() {
		delete(h.m, key)
		return
	}
	h.m[key] = mentry{val: append([]byte(nil), val...), exp: exp}
}

func (h *harness) del(key string) {
	got := h.s.Del([]byte(key))
	_, ok := h.live(key)
	delete(h.m, key)
	if got != ok {
		h.fail("DEL %q = %v, model %v", key, got, ok)
	}
}

func (h *harness) exists(key string) {
	got := h.s.Exists([]byte(key))
	if _, ok := h.live(key); got != ok {
		h.fail("EXISTS %q = %v, model %v", key, got, ok)
	}
}

func (h *harness) expireAt(key string, at int64) {
	got := h.s.ExpireAt([]byte(key), at)
	e, ok := h.live(key)
	if got != ok {
		h.fail("EXPIREAT %q = %v, model %v", key, got, ok)
	}
	if ok {
		if at <= h.now() {
			delete(h.m, key)
		} else {
			e.exp = at
			h.m[key] = e
		}
	}
}

func (h *harness) persist(key string) {
	got := h.s.Persist([]byte(key))
	e, ok := h.live(key)
	want := ok && e.exp != 0
	if got != want {
		h.fail("PERSIST %q = %v, model %v", key, got, want)
	}
	if want {
		e.exp = 0
		h.m[key] = e
	}
}

func (h *harness) pttl(key string) {
	got := h.s.PTTL([]byte(key))
	e, ok := h.live(key)
	want := int64(-2)
	if ok {
		want = -1
		if e.exp != 0 {
			want = e.exp - h.now()
		}
	}
	if got != want {
		h.fail("PTTL %q = %d, model %d", key, got, want)
	}
}

func (h *harness) incrBy(key string, d int64) {
	got, err := h.s.IncrBy([]byte(key), d)
	e, ok := h.live(key)
	if h.refused(err) {
		return
	}
	var cur int64
	if ok {
		n, perr := strconv.ParseInt(string(e.val), 10, 64)
		if perr != nil || strconv.FormatInt(n, 10) != string(e.val) {
			if !errors.Is(err, ErrNotInteger) {
				h.fail("INCRBY %q (value %q) err %v, want ErrNotInteger", key, e.val, err)
			}
			return
		}
		cur = n
	}
	if (d > 0 && cur > maxInt64-d) || (d < 0 && cur < minInt64-d) {
		if !errors.Is(err, ErrOverflow) {
			h.fail("INCRBY %q %d (value %d) err %v, want ErrOverflow", key, d, cur, err)
		}
		return
	}
	if err != nil || got != cur+d {
		h.fail("INCRBY %q %d = %d, %v; model %d", key, d, got, err, cur+d)
	}
	e.val = strconv.AppendInt(nil, cur+d, 10)
	h.m[key] = e
}

func (h *harness) appendOp(key string, val []byte) {
	n, err := h.s.Append([]byte(key), val)
	if h.refused(err) {
		h.live(key)
		return
	}
	if err != nil {
		h.fail("APPEND %q: %v", key, err)
	}
	e, _ := h.live(key)
	e.val = append(append([]byte(nil), e.val...), val...)
	h.m[key] = e
	if n != len(e.val) {
		h.fail("APPEND %q = %d, model %d", key, n, len(e.val))
	}
}

func (h *harness) strlen(key string) {
	got := h.s.StrLen([]byte(key))
	e, _ := h.live(key)
	if got != len(e.val) {
		h.fail("STRLEN %q = %d, model %d", key, got, len(e.val))
	}
}

// modelRange is Redis's GETRANGE arithmetic, written out again: start and
// end inclusive, negative from the end, clamped.
func modelRange(v []byte, start, end int64) []byte {
	n := int64(len(v))
	if start < 0 && end < 0 && start > end {
		return nil
	}
	if start < 0 {
		start = n + start
	}
	if end < 0 {
		end = n + end
	}
	if start < 0 {
		start = 0
	}
	if end < 0 {
		end = 0
	}
	if end >= n {
		end = n - 1
	}
	if start > end || n == 0 {
		return nil
	}
	return v[start : end+1]
}

func (h *harness) getRange(key string, start, end int64) {
	got := h.s.GetRange(h.buf[:0], []byte(key), start, end)
	h.buf = got
	e, _ := h.live(key)
	if want := modelRange(e.val, start, end); !bytes.Equal(got, want) {
		h.fail("GETRANGE %q %d %d = %q, model %q (value %q)", key, start, end, got, want, e.val)
	}
}

func (h *harness) setRange(key string, off int, val []byte) {
	n, err := h.s.SetRange([]byte(key), off, val)
	if h.refused(err) {
		h.live(key)
		return
	}
	if err != nil {
		h.fail("SETRANGE %q %d: %v", key, off, err)
	}
	e, ok := h.live(key)
	if len(val) > 0 {
		v := append([]byte(nil), e.val...)
		for len(v) < off+len(val) {
			v = append(v, 0)
		}
		copy(v[off:], val)
		e.val, ok = v, true
		h.m[key] = e
	}
	if n != len(e.val) {
		h.fail("SETRANGE %q %d %q = %d, model %d (exists %v)", key, off, val, n, len(e.val), ok)
	}
}

func (h *harness) getDel(key string) {
	got, found := h.s.GetDel(h.buf[:0], []byte(key))
	h.buf = got
	e, ok := h.live(key)
	if found != ok || (ok && !bytes.Equal(got, e.val)) {
		h.fail("GETDEL %q = %q, %v; model %q, %v", key, got, found, e.val, ok)
	}
	delete(h.m, key)
}

func (h *harness) rename(src, dst string, nx bool) {
	res, err := h.s.Rename([]byte(src), []byte(dst), nx)
	if h.refused(err) {
		h.live(src)
		h.live(dst)
		return
	}
	if err != nil {
		h.fail("RENAME %q %q: %v", src, dst, err)
	}
	e, ok := h.live(src)
	taken := false
	if ok { // the store looks at dst only when src exists (and may then drop it lazily)
		_, taken = h.live(dst)
	}
	want := Renamed
	switch {
	case !ok:
		want = NoSuchKey
	case nx && (taken || src == dst):
		want = DestTaken
	default:
		delete(h.m, src)
		h.m[dst] = e
	}
	if res != want {
		h.fail("RENAME %q %q nx %v = %d, model %d", src, dst, nx, res, want)
	}
}

func (h *harness) random() {
	got, ok := h.s.Random(h.buf[:0])
	h.buf = got
	alive := 0
	for _, e := range h.m { // not h.live: the store may not have reclaimed expired keys either
		if e.exp == 0 || e.exp > h.now() {
			alive++
		}
	}
	if ok != (alive > 0) {
		h.fail("RANDOMKEY found %v, model has %d live keys", ok, alive)
	}
	if _, live := h.live(string(got)); ok && !live {
		h.fail("RANDOMKEY %q is not a live key", got)
	}
}

// checkLen compares DBSIZE: the store may still count keys whose TTL passed.
func (h *harness) checkLen() {
	total, alive := len(h.m), 0
	for _, e := range h.m {
		if e.exp == 0 || e.exp > h.now() {
			alive++
		}
	}
	if n := h.s.Len(); n < alive || n > total {
		h.fail("Len %d, model has %d live of %d", n, alive, total)
	}
}

func (h *harness) check() {
	h.t.Helper()
	if err := h.s.Check(); err != nil {
		h.fail("%v", err)
	}
	h.checkLen()
}

// fullCompare checks every model key reads back and a full Scan reports exactly the
// model's live keys.
func (h *harness) fullCompare() {
	for k := range h.m {
		h.get(k)
	}
	seen := make(map[string]bool)
	var cur uint64
	for {
		cur = h.s.Scan(cur, 50, func(k []byte) { seen[string(k)] = true })
		if cur == 0 {
			break
		}
	}
	for k := range h.m {
		if _, ok := h.live(k); ok && !seen[k] {
			h.fail("Scan missed %q", k)
		}
	}
	for k := range seen {
		if _, ok := h.live(k); !ok {
			h.fail("Scan reported %q, absent from the model", k)
		}
	}
}

// randomValue draws value shapes that exercise every layout: empty, inline (<= 5),
// the 16-byte benchmark size, tails of many classes, dedicated arena blocks, and
// integers (canonical and not).
func randomValue(rng *rand.Rand) []byte {
	switch rng.IntN(10) {
	case 0:
		return strconv.AppendInt(nil, rng.Int64N(1<<20)-1<<19, 10)
	case 1:
		return strconv.AppendInt(nil, int64(rng.Uint64()), 10)
	case 2:
		return []byte([]string{"007", "-0", "+1", " 1", "9223372036854775808", "-9223372036854775808", "abc", "1e3"}[rng.IntN(8)])
	case 3:
		return make([]byte, 9000+rng.IntN(3000))
	}
	n := []int{0, 1, 5, 6, 7, 11, 16, 40, 100, 700}[rng.IntN(10)]
	if rng.IntN(2) == 0 {
		n = rng.IntN(64)
	}
	v := make([]byte, n)
	for i := range v {
		v[i] = byte('a' + rng.IntN(26))
	}
	return v
}

// runModel performs ops random operations on keys drawn from nkeys names.
func runModel(t testing.TB, seed uint64, ops, nkeys int, checkEvery int) *harness {
	return runModelOpts(t, Options{MaxValueLen: 1 << 20}, seed, ops, nkeys, checkEvery)
}

func runModelOpts(t testing.TB, o Options, seed uint64, ops, nkeys int, checkEvery int) *harness {
	h := newHarness(t, o)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	keys := make([]string, nkeys)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d-%s", i, bytes.Repeat([]byte{'x'}, rng.IntN(40)))
		switch i {
		case 0:
			keys[i] = "" // the empty key is a key too
		case 1, 2, 3:
			// Keys at and past the slot's 16-bit length, whose length
			// lives in the block (longKey), and the longest short one.
			keys[i] = fmt.Sprintf("k%d-%s", i, bytes.Repeat([]byte{'L'}, longKey-4+i+rng.IntN(2)*rng.IntN(5000)))
		}
	}
	for i := 0; i < ops; i++ {
		key := keys[rng.IntN(len(keys))]
		switch op := rng.IntN(110); {
		case op < 25:
			h.get(key)
		case op < 50:
			var o SetOptions
			switch rng.IntN(8) {
			case 0:
				o.NX = true
			case 1:
				o.XX = true
			case 2:
				o.KeepTTL = true
			}
			o.Get = rng.IntN(3) == 0
			if rng.IntN(3) == 0 {
				o.ExpireAt = h.now() + rng.Int64N(2000) - 100
			}
			h.set(key, randomValue(rng), o)
		case op < 58:
			h.del(key)
		case op < 62:
			h.exists(key)
		case op < 67:
			h.expireAt(key, h.now()+rng.Int64N(3000)-200)
		case op < 70:
			h.persist(key)
		case op < 74:
			h.pttl(key)
		case op < 82:
			d := rng.Int64N(200) - 100
			if rng.IntN(50) == 0 {
				d = int64(rng.Uint64())
			}
			h.incrBy(key, d)
		case op < 85:
			v := randomValue(rng)
			if len(v) > 100 {
				v = v[:100]
			}
			h.appendOp(key, v)
		case op < 87:
			h.strlen(key)
		case op < 95:
			h.clock.Advance(time.Duration(rng.IntN(40)) * time.Millisecond)
		case op < 99:
			h.s.Tick(1 + rng.IntN(200))
		case op < 100:
			if rng.IntN(500) == 0 {
				h.s.Flush()
				clear(h.m)
			}
		case op < 103:
			h.getRange(key, rng.Int64N(40)-20, rng.Int64N(40)-20)
		case op < 105:
			v := randomValue(rng)
			h.setRange(key, rng.IntN(30), v[:min(len(v), 20)])
		case op < 106:
			h.getDel(key)
		case op < 109:
			h.rename(key, keys[rng.IntN(len(keys))], rng.IntN(2) == 0)
		default:
			h.random()
		}
		if i%checkEvery == checkEvery-1 {
			h.check()
		}
	}
	h.check()
	h.fullCompare()
	return h
}

// TestModelRandomOps: millions of random operations (a few hundred thousand under
// the race detector) against a Go map, with expiry on a fake clock and the invariant
// checker run throughout.
func TestModelRandomOps(t *testing.T) {
	runs := []struct {
		seed       uint64
		ops, nkeys int
		checkEvery int
	}{
		{1, 1_000_000, 2000, 50_000},
		{2, 600_000, 50, 5_000},       // few keys: heavy overwrite, collisions in runs
		{3, 800_000, 30_000, 200_000}, // more keys than fit: index resizes
	}
	total := 0
	for _, r := range runs {
		ops := r.ops
		if raceEnabled || testing.Short() {
			ops /= 5
		}
		total += ops
		t.Run(fmt.Sprintf("seed%d_keys%d", r.seed, r.nkeys), func(t *testing.T) {
			t.Parallel()
			runModel(t, r.seed, ops, r.nkeys, r.checkEvery)
		})
	}
	t.Logf("%d operations in total", total)
}

// TestModelNoEvictionAtCap: the same random operations on a store capped far below
// what they want, under noeviction: refused writes (ErrOOM) change nothing, every
// accepted one matches the model, and nothing already stored is lost.
func TestModelNoEvictionAtCap(t *testing.T) {
	ops := 300_000
	if raceEnabled || testing.Short() {
		ops = 60_000
	}
	h := runModelOpts(t, Options{MaxValueLen: 1 << 20, MaxMemory: 256 << 10}, 7, ops, 5000, 20_000)
	var st Stats
	h.s.Stats(&st)
	if h.ooms == 0 || st.OOMRejects == 0 || st.Evicted != 0 {
		t.Fatalf("the cap was never reached: %d refusals, stats %+v", h.ooms, st)
	}
	t.Logf("%d writes refused, used %d of %d bytes", h.ooms, st.UsedMemory, st.MaxMemory)
}
