package store

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// collModel is the reference for TestCollectionModel: per key, its type
// and contents as plain Go values.
type collModel struct {
	hashes map[string]map[string]string
	sets   map[string]map[string]bool
	lists  map[string][]string
	exp    map[string]int64
}

// TestCollectionModel runs random hash, set, list and keyspace operations
// (conversions across every threshold, deletes of large collections,
// overwrites by strings, renames, expiry) on a Store and on a model, with
// arena compaction and lazy free running between them, and compares
// contents, encodings' invariants (Check) and types after every step.
func TestCollectionModel(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) { runCollectionModel(t, seed, 3000) })
	}
}

func runCollectionModel(t *testing.T, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, seed*7))
	clock := NewFakeClock(1_700_000_000_000)
	s, err := New(Options{Clock: clock, Limits: Limits{HashMaxListpackEntries: 16, HashMaxListpackValue: 8, SetMaxIntsetEntries: 16, ListMaxListpackSize: -2}})
	if err != nil {
		t.Fatal(err)
	}
	m := collModel{map[string]map[string]string{}, map[string]map[string]bool{}, map[string][]string{}, map[string]int64{}}
	keys := []string{"a", "b", "c", "d", "e"}
	val := func() string {
		switch rng.IntN(4) {
		case 0:
			return strconv.Itoa(rng.IntN(40) - 20)
		case 1:
			return strings.Repeat("v", rng.IntN(12))
		case 2:
			return strconv.Itoa(rng.IntN(1 << 20))
		}
		return "f" + strconv.Itoa(rng.IntN(30))
	}
	drop := func(k string) {
		delete(m.hashes, k)
		delete(m.sets, k)
		delete(m.lists, k)
		delete(m.exp, k)
	}
	wrong := func(k string, want Type) bool {
		tp := TypeNone
		switch {
		case m.hashes[k] != nil:
			tp = TypeHash
		case m.sets[k] != nil:
			tp = TypeSet
		case m.lists[k] != nil:
			tp = TypeList
		}
		if got := s.TypeOf([]byte(k)); got != tp {
			t.Fatalf("TYPE %s = %v, model %v", k, got, tp)
		}
		return tp != TypeNone && tp != want
	}
	checkErr := func(op string, err error, wantWrong bool) {
		t.Helper()
		if wantWrong != errors.Is(err, ErrWrongType) || (err != nil && !wantWrong) {
			t.Fatalf("%s: err %v, want wrong type %v", op, err, wantWrong)
		}
	}
	for step := 0; step < steps; step++ {
		k := keys[rng.IntN(len(keys))]
		kb := []byte(k)
		switch op := rng.IntN(14); op {
		case 0, 1: // HSET of up to 8 pairs
			var pairs [][]byte
			for n := rng.IntN(8) + 1; n > 0; n-- {
				pairs = append(pairs, []byte(val()), []byte(val()))
			}
			w := wrong(k, TypeHash)
			_, err := s.HSet(kb, pairs, false)
			checkErr("HSET", err, w)
			if !w {
				if m.hashes[k] == nil {
					m.hashes[k] = map[string]string{}
				}
				for i := 0; i < len(pairs); i += 2 {
					m.hashes[k][string(pairs[i])] = string(pairs[i+1])
				}
			}
		case 2: // HDEL
			f := [][]byte{[]byte(val()), []byte(val())}
			w := wrong(k, TypeHash)
			_, err := s.HDel(kb, f)
			checkErr("HDEL", err, w)
			if !w && m.hashes[k] != nil {
				delete(m.hashes[k], string(f[0]))
				delete(m.hashes[k], string(f[1]))
				if len(m.hashes[k]) == 0 {
					drop(k)
				}
			}
		case 3, 4: // SADD
			var ms [][]byte
			for n := rng.IntN(8) + 1; n > 0; n-- {
				ms = append(ms, []byte(val()))
			}
			w := wrong(k, TypeSet)
			_, err := s.SAdd(kb, ms)
			checkErr("SADD", err, w)
			if !w {
				if m.sets[k] == nil {
					m.sets[k] = map[string]bool{}
				}
				for _, x := range ms {
					m.sets[k][string(x)] = true
				}
			}
		case 5: // SREM or SPOP
			w := wrong(k, TypeSet)
			if rng.IntN(2) == 0 {
				x := []byte(val())
				_, err := s.SRem(kb, [][]byte{x})
				checkErr("SREM", err, w)
				if !w && m.sets[k] != nil {
					delete(m.sets[k], string(x))
				}
			} else {
				v, found, err := s.SPop(nil, kb, rng.Uint64())
				checkErr("SPOP", err, w)
				if !w && found != (m.sets[k] != nil) {
					t.Fatalf("SPOP %s found %v", k, found)
				}
				if found {
					if !m.sets[k][string(v)] {
						t.Fatalf("SPOP %s gave %q, not a member", k, v)
					}
					delete(m.sets[k], string(v))
				}
			}
			if !w && m.sets[k] != nil && len(m.sets[k]) == 0 {
				drop(k)
			}
		case 6, 7: // LPUSH/RPUSH, many at once now and then
			var vs [][]byte
			for n := rng.IntN(4) + 1 + rng.IntN(2)*rng.IntN(300); n > 0; n-- {
				vs = append(vs, []byte(val()))
			}
			front := rng.IntN(2) == 0
			w := wrong(k, TypeList)
			_, err := s.Push(kb, vs, front, true)
			checkErr("PUSH", err, w)
			if !w {
				for _, v := range vs {
					if front {
						m.lists[k] = append([]string{string(v)}, m.lists[k]...)
					} else {
						m.lists[k] = append(m.lists[k], string(v))
					}
				}
			}
		case 8: // LPOP/RPOP, LTRIM, LSET, LINSERT
			w := wrong(k, TypeList)
			l := m.lists[k]
			switch rng.IntN(4) {
			case 0:
				front := rng.IntN(2) == 0
				v, found, err := s.Pop(nil, kb, front)
				checkErr("POP", err, w)
				if found != (!w && len(l) > 0) {
					t.Fatalf("POP %s found %v", k, found)
				}
				if found {
					want := l[len(l)-1]
					if front {
						want, m.lists[k] = l[0], l[1:]
					} else {
						m.lists[k] = l[:len(l)-1]
					}
					if string(v) != want {
						t.Fatalf("POP %s = %q, model %q", k, v, want)
					}
				}
			case 1:
				a, b := rng.IntN(10)-3, rng.IntN(10)-3
				checkErr("LTRIM", s.LTrim(kb, a, b), w)
				if !w && l != nil {
					n := len(l)
					if a < 0 {
						a = max(a+n, 0)
					}
					if b < 0 {
						b += n
					}
					b = min(b, n-1)
					if a > b || a >= n {
						m.lists[k] = nil
					} else {
						m.lists[k] = append([]string(nil), l[a:b+1]...)
					}
				}
			case 2:
				if !w && len(l) > 0 {
					i := rng.IntN(len(l))
					v := val()
					if err := s.LSet(kb, i, []byte(v)); err != nil {
						t.Fatal(err)
					}
					l[i] = v
				}
			case 3:
				if !w && len(l) > 0 {
					i := rng.IntN(len(l) + 1)
					v := val()
					if err := s.LInsert(kb, i, []byte(v)); err != nil {
						t.Fatal(err)
					}
					m.lists[k] = slices.Insert(l, i, v)
				}
			}
			if l, ok := m.lists[k]; !w && ok && len(l) == 0 {
				drop(k) // the store deleted the emptied list, and its expiry
			}
		case 9: // DEL (large collections go to the lazy free queue)
			s.Del(kb)
			drop(k)
		case 10: // SET over whatever is there
			if _, _, _, err := s.Set(nil, kb, []byte("str"), SetOptions{}); err != nil {
				t.Fatal(err)
			}
			drop(k)
			s.Del(kb) // keep the model to collections
		case 11: // RENAME
			k2 := keys[rng.IntN(len(keys))]
			res, err := s.Rename(kb, []byte(k2), false)
			if err != nil {
				t.Fatal(err)
			}
			if res == Renamed && k != k2 {
				h, st, l, e := m.hashes[k], m.sets[k], m.lists[k], m.exp[k]
				drop(k2)
				drop(k)
				m.hashes[k2], m.sets[k2], m.lists[k2] = h, st, l
				if h == nil {
					delete(m.hashes, k2)
				}
				if st == nil {
					delete(m.sets, k2)
				}
				if l == nil {
					delete(m.lists, k2)
				}
				if e != 0 {
					m.exp[k2] = e
				}
			}
		case 12: // EXPIRE, then maybe let it pass
			if s.ExpireAt(kb, clock.NowMillis()+int64(rng.IntN(50)+1)) {
				m.exp[k] = clock.NowMillis() + 1 // refreshed below from the store
				m.exp[k] = s.ExpireTime(kb)
			}
			if rng.IntN(3) == 0 {
				clock.Advance(30 * time.Millisecond)
				for kk, at := range m.exp {
					if at <= clock.NowMillis() {
						drop(kk)
						s.Exists([]byte(kk)) // lazy expiry
					}
				}
			}
		case 13: // background work: compaction moves blocks, lazy free frees them
			s.Tick(rng.IntN(400) + 1)
		}
		compareColl(t, s, &m, keys, step)
	}
	for s.LazyFreePending() > 0 {
		s.Tick(100)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

func compareColl(t *testing.T, s *Store, m *collModel, keys []string, step int) {
	t.Helper()
	if err := s.Check(); err != nil {
		t.Fatalf("step %d: %v", step, err)
	}
	for _, k := range keys {
		kb := []byte(k)
		want := TypeNone
		switch {
		case m.hashes[k] != nil:
			want = TypeHash
		case m.sets[k] != nil:
			want = TypeSet
		case m.lists[k] != nil:
			want = TypeList
		}
		if got := s.TypeOf(kb); got != want {
			t.Fatalf("step %d: TYPE %s = %v, model %v", step, k, got, want)
		}
		if h := m.hashes[k]; h != nil {
			got := map[string]string{}
			if _, err := s.HRange(kb, func(f, v []byte) bool { got[string(f)] = string(v); return true }); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(h) {
				t.Fatalf("step %d: hash %s = %v, model %v", step, k, got, h)
			}
		}
		if st := m.sets[k]; st != nil {
			got := map[string]bool{}
			if _, err := s.SRange(kb, func(x []byte) bool { got[string(x)] = true; return true }); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(st) {
				t.Fatalf("step %d: set %s = %v, model %v", step, k, got, st)
			}
		}
		if l := m.lists[k]; l != nil {
			var got []string
			if _, err := s.LRange(kb, 0, -1, func(v []byte) bool { got = append(got, string(v)); return true }); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, l) {
				t.Fatalf("step %d: list %s = %v, model %v", step, k, got, l)
			}
		}
	}
}

// TestDeleteLargeCollectionIsIncremental: DEL of a hash of 100 000 fields
// returns at once, leaves the work to Tick, and Tick frees no more blocks
// than its budget allows.
func TestDeleteLargeCollectionIsIncremental(t *testing.T) {
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	var pairs [][]byte
	for i := 0; i < 100_000; i++ {
		pairs = append(pairs, []byte("field"+strconv.Itoa(i)), []byte("v"))
	}
	if _, err := s.HSet([]byte("big"), pairs, false); err != nil {
		t.Fatal(err)
	}
	var before, after Stats
	s.Stats(&before)
	if !s.Del([]byte("big")) {
		t.Fatal("DEL big found nothing")
	}
	s.Stats(&after)
	if s.LazyFreePending() != 1 || after.ArenaLive < before.ArenaLive/2 {
		t.Fatalf("after DEL: %d pending, arena live %d of %d: the hash was freed in the call", s.LazyFreePending(), after.ArenaLive, before.ArenaLive)
	}
	ticks := 0
	for s.LazyFreePending() > 0 {
		s.Tick(64)
		if ticks++; ticks > 100_000 {
			t.Fatal("lazy free never finished")
		}
	}
	// Tick(64) frees at most 64*LazyFreeBlocks blocks: the 100 000 entries
	// take at least that many ticks.
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

// FuzzCollectionModel drives TestCollectionModel's random operations from
// fuzzed seeds: any sequence must keep the store equal to the model and
// Check clean.
func FuzzCollectionModel(f *testing.F) {
	for _, s := range []uint64{1, 2, 3, 42, 1 << 40} {
		f.Add(s, uint16(400))
	}
	f.Fuzz(func(t *testing.T, seed uint64, steps uint16) {
		runCollectionModel(t, seed, int(steps%800))
	})
}

// TestEvictionOfCollections: under maxmemory with allkeys-lru, collection
// writes make room by evicting keys, collections among them, and the
// store stays consistent; with noeviction they are refused with ErrOOM.
func TestEvictionOfCollections(t *testing.T) {
	s, err := New(Options{MaxMemory: 2 << 20, Eviction: AllKeysLRU})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4000; i++ {
		k := []byte("h" + strconv.Itoa(i))
		var pairs [][]byte
		for f := 0; f < 20; f++ {
			pairs = append(pairs, []byte("field"+strconv.Itoa(f)), []byte("value-of-some-length"))
		}
		if _, err := s.HSet(k, pairs, false); err != nil {
			t.Fatalf("HSET %s: %v", k, err)
		}
		if _, err := s.Push([]byte("l"+strconv.Itoa(i)), pairs, false, true); err != nil {
			t.Fatalf("RPUSH: %v", err)
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
	for i := 0; i < 4000 && refused == nil; i++ {
		_, refused = s.SAdd([]byte("set"+strconv.Itoa(i)), [][]byte{[]byte("a-member-of-a-set"), []byte("another one")})
	}
	if !errors.Is(refused, ErrOOM) {
		t.Fatalf("SADD past the cap with noeviction: %v", refused)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}
