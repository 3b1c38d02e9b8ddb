package store

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
)

type imageEntry struct {
	val string
	exp int64
}

// image reads the whole store as a cut would hand it over.
func image(t *testing.T, s *Store) map[string]imageEntry {
	t.Helper()
	m := map[string]imageEntry{}
	c, err := s.NewCut(func(e *Entry) { m[string(e.Key)] = imageEntry{string(e.Value), e.ExpireAt} })
	if err != nil {
		t.Fatal(err)
	}
	for !c.Step(1000) {
	}
	c.Close()
	return m
}

// TestCutIsPointInTime begins a cut, then interleaves every kind of write
// (overwrite, INCR, APPEND, expiry changes, deletion, expiry by time,
// eviction-free renames, new keys, a flush) with small walk steps, and
// checks the keys handed over are exactly the store as it was when the cut
// began: each once, with its value and expiry of that moment.
func TestCutIsPointInTime(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(strconv.Itoa(int(seed)), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			s, clock := newStore(t, Options{})
			key := func() []byte { return []byte("k" + strconv.Itoa(rng.IntN(3000))) }
			for range 2000 {
				var o SetOptions
				if rng.IntN(4) == 0 {
					o.ExpireAt = clock.NowMillis() + int64(1+rng.IntN(5000))
				}
				val := strconv.Itoa(rng.IntN(1000))
				if rng.IntN(2) == 0 {
					val = fmt.Sprintf("v%0*d", rng.IntN(60), rng.IntN(1000))
				}
				if _, _, _, err := s.Set(nil, key(), []byte(val), o); err != nil {
					t.Fatal(err)
				}
			}
			for range 300 { // some deleted keys leave free slots a new key may take
				s.Del(key())
			}
			want := image(t, s)

			got := map[string]imageEntry{}
			c, err := s.NewCut(func(e *Entry) {
				if _, dup := got[string(e.Key)]; dup {
					t.Fatalf("key %q handed over twice", e.Key)
				}
				got[string(e.Key)] = imageEntry{string(e.Value), e.ExpireAt}
			})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.NewCut(func(*Entry) {}); err == nil {
				t.Fatal("a second cut began while one was in progress")
			}
			for !c.Done() {
				for range rng.IntN(20) {
					k := key()
					switch rng.IntN(10) {
					case 0, 1:
						s.Set(nil, k, []byte("new"+strconv.Itoa(rng.IntN(100))), SetOptions{})
					case 2:
						s.IncrBy(k, 1)
					case 3:
						s.Append(k, []byte("+"))
					case 4:
						s.ExpireAt(k, clock.NowMillis()+int64(rng.IntN(10000)))
					case 5:
						s.Persist(k)
					case 6:
						s.Del(k)
					case 7:
						s.Rename(k, key(), rng.IntN(2) == 0)
					case 8:
						clock.Advance(time.Duration(rng.IntN(50)) * time.Millisecond)
						s.Get(nil, k) // may expire it
						s.Tick(64)    // active expiry, compaction
					case 9:
						if rng.IntN(200) == 0 {
							s.Flush()
						} else {
							s.Set(nil, []byte("fresh"+strconv.Itoa(rng.IntN(1e6))), []byte("x"), SetOptions{})
						}
					}
				}
				c.Step(1 + rng.IntN(40))
			}
			c.Close()
			if !maps.Equal(got, want) {
				for k, v := range want {
					if g, ok := got[k]; !ok || g != v {
						t.Errorf("key %q: image %+v, handed over %+v (present %v)", k, v, g, ok)
					}
				}
				for k := range got {
					if _, ok := want[k]; !ok {
						t.Errorf("key %q handed over but not in the image", k)
					}
				}
				t.FailNow()
			}
			mustCheck(t, s)
			if s.cut != nil {
				t.Fatal("Close left the cut attached")
			}
		})
	}
}

// TestCutVersionState measures what a cut costs per key: the store's bytes
// per key with no cut (the figure docs/persistence.md quotes) and the
// bitmap a cut adds while it runs. Under -race (ten times slower per Set)
// and -short it counts 100,000 keys: the bitmap's bytes per key are the
// same, and the plain run keeps the million.
func TestCutVersionState(t *testing.T) {
	n := 1_000_000
	if testing.Short() || testkit.RaceEnabled {
		n = 100_000
	}
	if v := os.Getenv("CUT_KEYS"); v != "" { // CUT_KEYS=10000000: the 10 M keys
		var err error
		if n, err = strconv.Atoi(v); err != nil || n <= 0 {
			t.Fatalf("CUT_KEYS=%q: want a positive count", v)
		}
	}
	s, _ := newStore(t, Options{})
	var k [16]byte
	for i := range n {
		copy(k[:], fmt.Sprintf("key:%012d", i))
		if _, _, _, err := s.Set(nil, k[:], k[:], SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var st Stats
	s.Stats(&st)
	c, err := s.NewCut(func(*Entry) {})
	if err != nil {
		t.Fatal(err)
	}
	extra := c.VersionBytes()
	c.Close()
	perKey := float64(st.UsedMemory) / float64(n)
	t.Logf("%d keys of 16 B + 16 B: %.2f bytes/key at rest (no version state); a cut adds %d bytes = %.3f bytes/key while it runs",
		n, perKey, extra, float64(extra)/float64(n))
	if got := float64(extra) / float64(n); got > 0.2 {
		t.Fatalf("a cut's version state is %.3f bytes/key, want 1 bit per slot", got)
	}
}

// TestCutHandsOverCollectionsAsTheyWere: a cut hands a hash, a set and a
// list over with the items they held when it began, whether the walk
// reaches them first or a write (HSET, SADD, push, pop, delete) comes
// first; a collection made after the cut began is not handed over.
func TestCutHandsOverCollectionsAsTheyWere(t *testing.T) {
	b := func(ss ...string) [][]byte {
		out := make([][]byte, len(ss))
		for i, s := range ss {
			out[i] = []byte(s)
		}
		return out
	}
	for _, writeFirst := range []bool{false, true} {
		s, _ := newStore(t, Options{})
		for i := range 50 { // strings around the collections, so the walk takes several steps
			if _, _, _, err := s.Set(nil, fmt.Appendf(nil, "s%02d", i), []byte("v"), SetOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.HSet([]byte("h"), b("f1", "v1", "f2", "v2"), false); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SAdd([]byte("set"), b("a", "b", "7")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Push([]byte("l"), b("x", "y", "z"), false, true); err != nil {
			t.Fatal(err)
		}
		for i, m := range []string{"z1", "z2"} {
			if _, _, err := s.ZAdd([]byte("zs"), float64(i+1), []byte(m), 0); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 200 { // a skiplist
			if _, _, err := s.ZAdd([]byte("zbig"), float64(i), fmt.Appendf(nil, "m%03d", i), 0); err != nil {
				t.Fatal(err)
			}
		}
		got := map[string]string{}
		c, err := s.NewCut(func(e *Entry) {
			if e.Type == TypeString {
				return
			}
			items := make([]string, len(e.Coll.Items))
			for i, it := range e.Coll.Items {
				items[i] = string(it)
			}
			if e.Type != TypeList && e.Type != TypeZSet {
				sort.Strings(items)
			}
			for i, sc := range e.Coll.Scores {
				items[i] += fmt.Sprint(":", sc)
			}
			if e.Type == TypeZSet && len(items) > 3 {
				items = append(items[:2], fmt.Sprint(len(items)))
			}
			got[string(e.Key)] = e.Type.String() + " " + strings.Join(items, ",")
		})
		if err != nil {
			t.Fatal(err)
		}
		if writeFirst {
			if _, err := s.HSet([]byte("h"), b("f1", "changed", "f3", "v3"), false); err != nil {
				t.Fatal(err)
			}
			if _, err := s.SRem([]byte("set"), b("a")); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Pop(nil, []byte("l"), true); err != nil {
				t.Fatal(err)
			}
			if _, err := s.SAdd([]byte("new"), b("n")); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.ZAdd([]byte("zs"), 9, []byte("z1"), 0); err != nil {
				t.Fatal(err)
			}
			if _, err := s.ZRem([]byte("zbig"), b("m000", "m001")); err != nil {
				t.Fatal(err)
			}
		}
		for !c.Step(7) {
		}
		c.Close()
		want := map[string]string{"h": "hash f1,f2,v1,v2", "set": "set 7,a,b", "l": "list x,y,z",
			"zs": "zset z1:1,z2:2", "zbig": "zset m000:0,m001:1,200"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("writes first %v: the cut handed over %v, want %v", writeFirst, got, want)
		}
	}
}
