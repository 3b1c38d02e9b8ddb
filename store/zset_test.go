package store

import (
	"bytes"
	"cmp"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/rdb"
	"github.com/goblin-kv/goblin/store/collection"
)

type zmember struct {
	m  string
	sc float64
}

// zsorted is a model set in Redis's order.
func zsorted(set map[string]float64) []zmember {
	var out []zmember
	for m, sc := range set {
		out = append(out, zmember{m, sc})
	}
	slices.SortFunc(out, func(a, b zmember) int {
		if c := cmp.Compare(a.sc, b.sc); c != 0 {
			return c
		}
		return strings.Compare(a.m, b.m)
	})
	return out
}

// TestZSetModel runs random sorted-set and keyspace operations (ZADD with
// every flag, ZREM, rank removals, score and lex counts, pops by rank,
// conversions past both thresholds, DEL of large sets, RENAME, expiry,
// export and import) on a Store and on a model, with compaction and lazy
// free between them, and compares order, scores, ranks and Check after
// every step.
func TestZSetModel(t *testing.T) {
	steps := 2500
	if raceEnabled {
		steps = 800 // the checks after every step are slow under the race detector (CI runs this); go test without -race does 2500
	}
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) { runZSetModel(t, seed, steps) })
	}
}

func runZSetModel(t *testing.T, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, seed*13))
	clock := NewFakeClock(1_700_000_000_000)
	lim := DefaultLimits
	lim.ZSetMaxListpackEntries, lim.ZSetMaxListpackValue = 8, 6
	s, err := New(Options{Clock: clock, Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	model := map[string]map[string]float64{}
	exp := map[string]int64{}
	keys := []string{"a", "b", "c", "d"}
	member := func() string {
		switch rng.IntN(4) {
		case 0:
			return strconv.Itoa(rng.IntN(60) - 20)
		case 1:
			return strings.Repeat("m", rng.IntN(9))
		case 2:
			return strconv.Itoa(rng.IntN(1 << 30))
		}
		return "x" + strconv.Itoa(rng.IntN(40))
	}
	score := func() float64 {
		switch rng.IntN(8) {
		case 0:
			return math.Inf(1 - 2*rng.IntN(2))
		case 1:
			return math.Copysign(0, -1)
		case 2:
			return rng.Float64()*1e6 - 5e5
		case 3:
			return 1e17
		}
		return float64(rng.IntN(10))
	}
	bound := func() collection.ZBound {
		switch rng.IntN(3) {
		case 0:
			return collection.ZBound{Kind: collection.ZByScore, Score: score(), OrEqual: rng.IntN(2) == 0}
		case 1:
			return collection.ZBound{Kind: collection.ZByLex, Member: []byte(member()), OrEqual: rng.IntN(2) == 0, Inf: int8(rng.IntN(5)/4) * int8(1-2*rng.IntN(2))}
		}
		return collection.ZBound{Kind: collection.ZByKey, Score: score(), Member: []byte(member())}
	}
	drop := func(k string) {
		delete(model, k)
		delete(exp, k)
	}
	for step := 0; step < steps; step++ {
		k := keys[rng.IntN(len(keys))]
		kb := []byte(k)
		set := model[k]
		switch op := rng.IntN(12); op {
		case 0, 1, 2: // ZADD, many at once now and then
			flags := [...]uint8{0, 0, 0, ZAddNX, ZAddXX, ZAddGT, ZAddLT, ZAddXX | ZAddGT, ZAddIncr}[rng.IntN(9)]
			for n := 1 + rng.IntN(2)*rng.IntN(150); n > 0; n-- {
				m, sc := member(), score()
				out, got, err := s.ZAdd(kb, sc, []byte(m), flags)
				cur, had := set[m]
				want := sc
				if flags&ZAddIncr != 0 && had {
					want = cur + sc
				}
				if math.IsNaN(want) {
					if !errors.Is(err, ErrNaNScore) {
						t.Fatalf("step %d: ZADD INCR %s to NaN: %v", step, m, err)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				ok := !(had && flags&ZAddNX != 0) && !(!had && flags&ZAddXX != 0) &&
					!(had && flags&ZAddGT != 0 && want <= cur) && !(had && flags&ZAddLT != 0 && want >= cur)
				switch {
				case !ok && out != ZAddNop:
					t.Fatalf("step %d: ZADD %s %v flags %d: %d, want refused", step, m, sc, flags, out)
				case ok && !had && out != ZAddAdded:
					t.Fatalf("step %d: ZADD %s: %d, want added", step, m, out)
				case ok && had && (want == cur) != (out == ZAddSame):
					t.Fatalf("step %d: ZADD %s %v over %v: %d", step, m, want, cur, out)
				}
				if ok {
					if set == nil {
						set = map[string]float64{}
						model[k] = set
					}
					if !had || want != cur {
						set[m] = want
					}
					if got != set[m] && !(got == 0 && set[m] == 0) {
						t.Fatalf("step %d: ZADD %s returned %v, model %v", step, m, got, set[m])
					}
				}
			}
		case 3: // ZREM
			ms := [][]byte{[]byte(member()), []byte(member())}
			n, err := s.ZRem(kb, ms)
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			for i, m := range ms {
				if _, ok := set[string(m)]; ok && (i == 0 || string(ms[0]) != string(m)) {
					delete(set, string(m))
					want++
				}
			}
			if n != want {
				t.Fatalf("step %d: ZREM %s = %d, model %d", step, k, n, want)
			}
		case 4: // ZREMRANGE by rank (pops from either end among them)
			if len(set) == 0 {
				break
			}
			a := rng.IntN(len(set))
			b := a + rng.IntN(len(set)-a)
			n, err := s.ZRemRange(kb, a, b)
			if err != nil || n != b-a+1 {
				t.Fatalf("step %d: ZREMRANGE %s %d %d = %d %v", step, k, a, b, n, err)
			}
			for _, z := range zsorted(set)[a : b+1] {
				delete(set, z.m)
			}
		case 5: // counts before bounds, and ranks
			b := bound()
			n, err := s.ZCount(kb, &b)
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			if b.Kind != collection.ZByLex { // lex bounds assume equal scores: checked on such sets below
				for _, z := range zsorted(set) {
					if !b.Before(z.sc, []byte(z.m)) {
						break
					}
					want++
				}
				if n != want {
					t.Fatalf("step %d: ZCount %s %+v = %d, model %d", step, k, b, n, want)
				}
			}
			for i, z := range zsorted(set) {
				if r, _, ok, _ := s.ZRank(kb, []byte(z.m)); !ok || r != i {
					t.Fatalf("step %d: ZRANK %s %q = %d %v, model %d", step, k, z.m, r, ok, i)
				}
			}
		case 6: // a reverse range walk
			if len(set) == 0 {
				break
			}
			a := rng.IntN(len(set))
			b := a + rng.IntN(len(set)-a)
			var got []zmember
			_ = s.ZRange(kb, a, b, true, func(m []byte, sc float64) bool {
				got = append(got, zmember{string(m), sc})
				return true
			})
			want := slices.Clone(zsorted(set)[a : b+1])
			slices.Reverse(want)
			if !zequal(got, want) {
				t.Fatalf("step %d: ZRANGE %s %d %d REV = %v, model %v", step, k, a, b, got, want)
			}
		case 7: // DEL, or export and import under another name
			if rng.IntN(2) == 0 {
				s.Del(kb)
				drop(k)
				break
			}
			var v rdb.Value
			if _, _, ok := s.ExportCollection(kb, &v, nil); !ok {
				break
			}
			k2 := keys[rng.IntN(len(keys))]
			s.Del([]byte(k2))
			drop(k2)
			if err := s.ImportCollection([]byte(k2), &v, 0); err != nil {
				t.Fatalf("step %d: import %s as %s: %v", step, k, k2, err)
			}
			model[k2] = map[string]float64{}
			for i, m := range v.Items {
				model[k2][string(m)] = v.Scores[i]
			}
		case 8: // RENAME
			k2 := keys[rng.IntN(len(keys))]
			res, err := s.Rename(kb, []byte(k2), false)
			if err != nil {
				t.Fatal(err)
			}
			if res == Renamed && k != k2 {
				e := exp[k]
				drop(k2)
				model[k2] = set
				delete(model, k)
				delete(exp, k)
				if e != 0 {
					exp[k2] = e
				}
			}
		case 9: // EXPIRE, then maybe let it pass
			if s.ExpireAt(kb, clock.NowMillis()+int64(rng.IntN(50)+1)) {
				exp[k] = s.ExpireTime(kb)
			}
			if rng.IntN(3) == 0 {
				clock.Advance(30 * time.Millisecond)
				for kk, at := range exp {
					if at <= clock.NowMillis() {
						drop(kk)
						s.Exists([]byte(kk))
					}
				}
			}
		case 10: // a lex range on a set of equal scores
			lk := []byte("lex")
			if rng.IntN(4) == 0 {
				s.Del(lk)
			}
			for n := rng.IntN(20); n > 0; n-- {
				if _, _, err := s.ZAdd(lk, 0, []byte(member()), 0); err != nil {
					t.Fatal(err)
				}
			}
			var all []string
			_ = s.ZRange(lk, 0, max(0, zcard(s, lk)-1), false, func(m []byte, _ float64) bool {
				all = append(all, string(m))
				return true
			})
			b := bound()
			b.Kind = collection.ZByLex
			n, _ := s.ZCount(lk, &b)
			want := 0
			for _, m := range all {
				if b.Before(0, []byte(m)) {
					want++
				}
			}
			if n != want || !slices.IsSorted(all) {
				t.Fatalf("step %d: lex count %+v = %d, model %d over %q", step, b, n, want, all)
			}
		case 11: // background work: compaction moves blocks, lazy free frees them
			s.Tick(rng.IntN(400) + 1)
		}
		if set := model[k]; set != nil && len(set) == 0 {
			drop(k) // the store deleted the emptied set, and its expiry
		}
		compareZSets(t, s, model, keys, step)
	}
	for s.LazyFreePending() > 0 {
		s.Tick(100)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

func zcard(s *Store, k []byte) int {
	n, _ := s.ZCard(k)
	return n
}

// zequal compares members and scores; -0 equals 0, as a listpack keeps
// -0 as "0" (d2string), which Redis does too.
func zequal(a, b []zmember) bool {
	return slices.EqualFunc(a, b, func(x, y zmember) bool { return x.m == y.m && x.sc == y.sc })
}

func compareZSets(t *testing.T, s *Store, model map[string]map[string]float64, keys []string, step int) {
	t.Helper()
	if err := s.Check(); err != nil {
		t.Fatalf("step %d: %v", step, err)
	}
	for _, k := range keys {
		kb := []byte(k)
		set := model[k]
		want := TypeNone
		if set != nil {
			want = TypeZSet
		}
		if got := s.TypeOf(kb); got != want {
			t.Fatalf("step %d: TYPE %s = %v, model %v", step, k, got, want)
		}
		if set == nil {
			continue
		}
		var got []zmember
		_ = s.ZRange(kb, 0, len(set)-1, false, func(m []byte, sc float64) bool {
			got = append(got, zmember{string(m), sc})
			return true
		})
		if w := zsorted(set); !zequal(got, w) {
			t.Fatalf("step %d: zset %s = %v, model %v", step, k, got, w)
		}
		for m, sc := range set {
			if g, ok, _ := s.ZScore(kb, []byte(m)); !ok || g != sc {
				t.Fatalf("step %d: ZSCORE %s %q = %v %v, model %v", step, k, m, g, ok, sc)
			}
		}
		if enc := s.EncodingOf(kb); len(set) > 8 && enc != EncodingSkiplist {
			t.Fatalf("step %d: %s of %d members is %v", step, k, len(set), enc)
		}
	}
}

// FuzzZSetModel drives TestZSetModel's random operations from fuzzed seeds.
func FuzzZSetModel(f *testing.F) {
	for _, s := range []uint64{1, 2, 3, 42, 1 << 40} {
		f.Add(s, uint16(300))
	}
	f.Fuzz(func(t *testing.T, seed uint64, steps uint16) {
		runZSetModel(t, seed, int(steps%600))
	})
}

// TestZKeyOrder: zkeys sort by bytes as Redis orders elements (score, then
// member bytes, a prefix first; -0 with 0).
func TestZKeyOrder(t *testing.T) {
	scores := []float64{math.Inf(-1), -1e300, -2.5, -1, math.Copysign(0, -1), 0, 5e-324, 1, 2.5, 1e17, math.Inf(1)}
	members := []string{"", "a", "ab", "b", "\xff"}
	for _, s1 := range scores {
		for _, s2 := range scores {
			for _, m1 := range members {
				for _, m2 := range members {
					k1 := collection.AppendZKey(nil, s1, []byte(m1))
					k2 := collection.AppendZKey(nil, s2, []byte(m2))
					want := cmp.Compare(s1, s2)
					if want == 0 {
						want = strings.Compare(m1, m2)
					}
					if got := bytes.Compare(k1, k2); got != want {
						t.Fatalf("(%v,%q) vs (%v,%q): bytes %d, order %d", s1, m1, s2, m2, got, want)
					}
					if got := collection.ZKeyScore(k1); got != s1 {
						t.Fatalf("ZKeyScore of %v = %v", s1, got)
					}
				}
			}
		}
	}
}

// TestDeleteLargeZSetIsIncremental: DEL of a sorted set of 100 000 members
// returns at once and leaves its index and order to Tick's lazy free.
func TestDeleteLargeZSetIsIncremental(t *testing.T) {
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100_000; i++ {
		if _, _, err := s.ZAdd([]byte("big"), float64(i%1000), []byte("member"+strconv.Itoa(i)), 0); err != nil {
			t.Fatal(err)
		}
	}
	if enc := s.EncodingOf([]byte("big")); enc != EncodingSkiplist {
		t.Fatalf("big is %v", enc)
	}
	var before, after Stats
	s.Stats(&before)
	if !s.Del([]byte("big")) {
		t.Fatal("DEL big found nothing")
	}
	s.Stats(&after)
	if s.LazyFreePending() != 1 || after.ArenaLive < before.ArenaLive/2 {
		t.Fatalf("after DEL: %d pending, arena live %d of %d: the set was freed in the call", s.LazyFreePending(), after.ArenaLive, before.ArenaLive)
	}
	ticks := 0
	for s.LazyFreePending() > 0 {
		s.Tick(64)
		if ticks++; ticks > 100_000 {
			t.Fatal("lazy free never finished")
		}
	}
	if min := 100_000 / (64 * LazyFreeBlocks); ticks < min {
		t.Fatalf("freed in %d ticks, fewer than %d: not spread out", ticks, min)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	if s.Collections() != 0 {
		t.Fatalf("%d collections left", s.Collections())
	}
}

// TestEvictionOfZSets: under maxmemory with allkeys-lru, sorted-set writes
// of both encodings make room by evicting keys, sorted sets among them;
// with noeviction a ZADD past the cap is refused with ErrOOM, and a new
// key it had made for the member is not left empty.
func TestEvictionOfZSets(t *testing.T) {
	s, err := New(Options{MaxMemory: 2 << 20, Eviction: AllKeysLRU})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3000; i++ {
		n := 20
		if i%50 == 0 {
			n = 300 // a skiplist now and then
		}
		for m := 0; m < n; m++ {
			if _, _, err := s.ZAdd([]byte("z"+strconv.Itoa(i)), float64(m), []byte("member-of-some-length-"+strconv.Itoa(m)), 0); err != nil {
				t.Fatalf("ZADD: %v", err)
			}
		}
		s.Tick(256)
	}
	var st Stats
	s.Stats(&st)
	if st.Evicted == 0 || st.UsedMemory > 3<<20 {
		t.Fatalf("evicted %d keys, used %d bytes of a 2 MiB cap", st.Evicted, st.UsedMemory)
	}
	for s.LazyFreePending() > 0 {
		s.Tick(1000)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	if err := s.SetEviction(NoEviction); err != nil {
		t.Fatal(err)
	}
	var refused error
	i := 0
	for ; i < 100000 && refused == nil; i++ {
		_, _, refused = s.ZAdd([]byte("new"+strconv.Itoa(i)), 1, []byte("a-member-of-a-sorted-set"), 0)
	}
	if !errors.Is(refused, ErrOOM) {
		t.Fatalf("ZADD past the cap with noeviction: %v", refused)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestZSetCompaction: arena compaction moves the blocks of sorted sets of
// both encodings (a listpack blob; a skiplist's index entries and table,
// whose owner ids carry zsetIndexBit, and its order's nodes), and every
// set reads back the same, with Check clean.
func TestZSetCompaction(t *testing.T) {
	s, _ := newStore(t, Options{})
	sets := 40
	for i := 0; i < 30_000; i++ {
		k := []byte("z" + strconv.Itoa(i%sets))
		if _, _, err := s.ZAdd(k, float64(i%97), []byte("member:"+strconv.Itoa(i)), 0); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 30_000; i++ { // holes among the index entries
		if i%5 != 0 {
			if _, err := s.ZRem([]byte("z"+strconv.Itoa(i%sets)), [][]byte{[]byte("member:" + strconv.Itoa(i))}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := 0; i < 20; i++ { // listpacks among them
		if _, _, err := s.ZAdd([]byte("small"+strconv.Itoa(i)), float64(i), []byte("m"), 0); err != nil {
			t.Fatal(err)
		}
		s.Set(nil, []byte("junk-small:"+strconv.Itoa(i)), []byte("v"), SetOptions{})
	}
	read := func() map[string][]zmember {
		out := map[string][]zmember{}
		for i := 0; i < sets; i++ {
			k := []byte("z" + strconv.Itoa(i))
			n, _ := s.ZCard(k)
			_ = s.ZRange(k, 0, n-1, false, func(m []byte, sc float64) bool {
				out[string(k)] = append(out[string(k)], zmember{string(m), sc})
				return true
			})
		}
		return out
	}
	want := read()
	for i := 0; i < 20; i++ {
		s.Del([]byte("junk-small:" + strconv.Itoa(i)))
	}
	var before, after Stats
	s.Stats(&before)
	for ticks := 0; s.Tick(64) > 0; ticks++ {
		if ticks%2000 == 0 {
			mustCheck(t, s)
		}
	}
	s.Stats(&after)
	if after.ArenaMoves == before.ArenaMoves {
		t.Fatalf("no block moved: before %+v after %+v", before, after)
	}
	got := read()
	for k, w := range want {
		if !zequal(got[k], w) {
			t.Fatalf("%s after compaction differs (%d members, want %d)", k, len(got[k]), len(w))
		}
		for _, z := range w {
			if sc, ok, _ := s.ZScore([]byte(k), []byte(z.m)); !ok || sc != z.sc {
				t.Fatalf("ZSCORE %s %s after compaction: %v %v", k, z.m, sc, ok)
			}
		}
	}
	mustCheck(t, s)
	t.Logf("%d moves", after.ArenaMoves-before.ArenaMoves)
}

// BenchmarkZRemRange: ZREMRANGEBYRANK of the middle half of a 100 000-member
// skiplist (the set is rebuilt, untimed, for each run).
func BenchmarkZRemRange(b *testing.B) {
	s, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s.Del([]byte("z"))
		for s.LazyFreePending() > 0 {
			s.Tick(1 << 20)
		}
		for j := 0; j < 100_000; j++ {
			if _, _, err := s.ZAdd([]byte("z"), float64(j), []byte("member:"+strconv.Itoa(j)), 0); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		if n, err := s.ZRemRange([]byte("z"), 25_000, 74_999); err != nil || n != 50_000 {
			b.Fatal(n, err)
		}
	}
}

// BenchmarkZAddAppend: ZADD of a new highest score into a 100 000-member
// skiplist, as a time series or a rate limiter's window adds (found from
// the tail node), and of a score in the middle (found by walking nodes).
func BenchmarkZAddAppend(b *testing.B) {
	for _, where := range []string{"highest", "middle"} {
		b.Run(where, func(b *testing.B) {
			s, err := New(Options{})
			if err != nil {
				b.Fatal(err)
			}
			for j := 0; j < 100_000; j++ {
				if _, _, err := s.ZAdd([]byte("z"), float64(j), []byte("member:"+strconv.Itoa(j)), 0); err != nil {
					b.Fatal(err)
				}
			}
			m := make([]byte, 0, 32)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				sc := float64(100_000 + i)
				if where == "middle" {
					sc = 50_000.5
				}
				m = strconv.AppendInt(append(m[:0], "new:"...), int64(i), 10)
				if _, _, err := s.ZAdd([]byte("z"), sc, m, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkZSetLarge: on a sorted set of 1,000,000 members (scores spread
// at random), ZADD of a new member at a random place, ZRANK of a member
// and ZRANGE of ten members by rank, at random depths: the operations
// the counted node index makes O(log n).
func BenchmarkZSetLarge(b *testing.B) {
	const n = 1_000_000
	s, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	m := make([]byte, 0, 32)
	for j := 0; j < n; j++ {
		m = strconv.AppendInt(append(m[:0], "member:"...), int64(j), 10)
		if _, _, err := s.ZAdd([]byte("z"), float64(rng.IntN(1<<30)), m, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("zadd", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			m = strconv.AppendInt(append(m[:0], "new:"...), int64(i), 10)
			if _, _, err := s.ZAdd([]byte("z"), float64(rng.IntN(1<<30)), m, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("zrank", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m = strconv.AppendInt(append(m[:0], "member:"...), int64(rng.IntN(n)), 10)
			if _, _, found, err := s.ZRank([]byte("z"), m); !found || err != nil {
				b.Fatal(found, err)
			}
		}
	})
	b.Run("zrange", func(b *testing.B) {
		b.ReportAllocs()
		got := 0
		for b.Loop() {
			start := rng.IntN(n - 10)
			if err := s.ZRange([]byte("z"), start, start+9, false, func([]byte, float64) bool { got++; return true }); err != nil {
				b.Fatal(err)
			}
		}
		if got == 0 {
			b.Fatal("ZRange returned nothing")
		}
	})
}
