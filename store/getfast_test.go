package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestGetFastMatchesGeneral holds Get, whose usual case is served inline,
// to getSlow, the general lookup it falls back to: for keys of every
// length around the fast path's 8 to 16 bytes, values of every length
// around its 6 to 21 (integers, a TTL, an expired key, a collection, a
// missing key), dst with and without room, CLIENT NO-TOUCH, an index
// resize under way and an LFU policy, the same reply, the same hit and
// miss counts, and the same access record and CLOCK bits on the key.
func TestGetFastMatchesGeneral(t *testing.T) {
	for _, tc := range []struct {
		name    string
		o       Options
		noTouch bool
		resize  bool
		random  bool // the LFU counter's increments are random
	}{
		{name: "lru"},
		{name: "notouch", noTouch: true},
		{name: "resizing", resize: true},
		{name: "lfu", o: Options{Eviction: AllKeysLFU, MaxMemory: 1 << 30}, random: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fast, fc := newStore(t, tc.o)
			slow, sc := newStore(t, tc.o)
			var keys [][]byte
			for _, s := range []*Store{fast, slow} {
				s.SetNoTouch(tc.noTouch)
				keys = fillGetCases(t, s)
				if tc.resize {
					for i := 0; s.ix.old == nil; i++ {
						mustSet(t, s, fmt.Sprintf("grow:%d", i), "v")
					}
				}
			}
			if tc.resize && (fast.ix.old == nil || slow.ix.old == nil) {
				t.Fatal("no index resize under way")
			}
			if !tc.resize && fast.ix.old != nil {
				t.Fatal("an index resize still under way: every Get would take getSlow")
			}
			if !tc.resize && !tc.random && !pastHome(fast, keys) {
				t.Fatal("no 8- to 16-byte key found past its home slot: getProbe untested")
			}
			// Some keys expire; every key is read at a later LRU second.
			fc.Advance(2 * time.Second)
			sc.Advance(2 * time.Second)
			fast.SetLRUClock(fc.NowMillis())
			slow.SetLRUClock(sc.NowMillis())
			for _, key := range keys {
				// Ample room first (a slow read touches the key too), then
				// every room from 22 down: each value length meets its room
				// check's edge, exactly enough and one byte short.
				for _, room := range getRooms {
					fd, sd := make([]byte, 3, 3+room), make([]byte, 3, 3+room)
					copy(fd, "abc")
					copy(sd, "abc")
					fv, ff := fast.Get(fd, key)
					sv, sf := slow.getSlow(sd, key)
					if ff != sf || !bytes.Equal(fv, sv) {
						t.Fatalf("key %q room %d: Get %q %v, getSlow %q %v", key, room, fv, ff, sv, sf)
					}
					var fs, ss Stats
					fast.Stats(&fs)
					slow.Stats(&ss)
					if fs.Hits != ss.Hits || fs.Misses != ss.Misses || fs.Expired != ss.Expired || fs.Keys != ss.Keys {
						t.Fatalf("key %q room %d: Get's stats %+v, getSlow's %+v", key, room, fs, ss)
					}
					_, fsl := fast.lookup(key)
					_, ssl := slow.lookup(key)
					if (fsl == nil) != (ssl == nil) || fsl != nil && !tc.random && (fsl.atime != ssl.atime || fsl.meta != ssl.meta) {
						t.Fatalf("key %q room %d: slots differ: %+v, %+v", key, room, fsl, ssl)
					}
				}
			}
		})
	}
}

// getRooms are the capacities past dst's length TestGetFastMatchesGeneral
// reads with.
var getRooms = func() []int {
	r := []int{64}
	for i := 22; i >= 0; i-- {
		r = append(r, i)
	}
	return r
}()

// fillGetCases fills s with the keys TestGetFastMatchesGeneral reads and
// returns them, with keys that are not there.
func fillGetCases(t *testing.T, s *Store) [][]byte {
	t.Helper()
	var keys [][]byte
	for kl := 1; kl <= 20; kl++ {
		base := strings.Repeat("k", kl)
		for vl := 0; vl <= 24; vl++ {
			prefix := fmt.Sprintf("%d:", vl)
			key := prefix + base[min(len(prefix), kl):] // kl bytes, or the prefix
			mustSet(t, s, key, strings.Repeat("v", vl))
			keys = append(keys, []byte(key))
		}
		keys = append(keys, []byte(strings.Repeat("m", kl))) // missing
		for _, v := range []string{"7", "123456789012", "-42"} {
			key := fmt.Sprintf("i%s:%s", v, base)
			mustSet(t, s, key, v)
			keys = append(keys, []byte(key))
		}
		for _, ms := range []int64{1000, 60_000} { // expired by the read, and not
			key := fmt.Sprintf("ttl%d:%s", ms, base)
			if _, _, _, err := s.Set(nil, []byte(key), []byte("0123456789abcdef"), SetOptions{ExpireAt: s.o.Clock.NowMillis() + ms}); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, []byte(key))
		}
		for _, v := range []string{"abcdefghij", "abcdefghijklmnopqrstu"} { // tagMod: built by APPEND
			key := fmt.Sprintf("a%d:%s", len(v), base)
			mustSet(t, s, key, v[:3])
			if _, err := s.Append([]byte(key), []byte(v[3:])); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, []byte(key))
		}
		key := "h:" + base
		if _, err := s.HSet([]byte(key), [][]byte{[]byte("f"), []byte("v")}, false); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, []byte(key))
	}
	return keys
}

func mustSet(t *testing.T, s *Store, key, val string) {
	t.Helper()
	if _, _, _, err := s.Set(nil, []byte(key), []byte(val), SetOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestPutFastMatchesGeneral holds Put, whose usual case is written
// inline, to putSlow: over keys of every length around the fast path's 8
// to 16 bytes holding strings, integers, values with a TTL and
// collections, new values of every length around its 6 to 21 bytes (and
// integers, and strings that start like one), under a snapshot's cut and
// under an LFU policy, the same values read back, the same modification
// count, keys and access records.
func TestPutFastMatchesGeneral(t *testing.T) {
	for _, tc := range []struct {
		name   string
		o      Options
		cut    bool
		random bool // the LFU counter's increments are random
	}{
		{name: "lru"},
		{name: "cut", cut: true},
		{name: "lfu", o: Options{Eviction: AllKeysLFU, MaxMemory: 1 << 30}, random: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fast, fc := newStore(t, tc.o)
			slow, sc := newStore(t, tc.o)
			var keys [][]byte
			var emitted [2][]string // the cuts' entries, as the writes hand them over
			for i, s := range []*Store{fast, slow} {
				keys = fillGetCases(t, s)
				if tc.cut {
					c, err := s.NewCut(func(e *Entry) { emitted[i] = append(emitted[i], string(e.Key)+"="+string(e.Value)) })
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(c.Close)
				}
			}
			fc.Advance(2 * time.Second)
			sc.Advance(2 * time.Second)
			fast.SetLRUClock(fc.NowMillis())
			slow.SetLRUClock(sc.NowMillis())
			vals := []string{"12345678901234", "-5", "0", "1abcdefghij", "-abcdefghij"}
			const letters = "abcdefghijklmnopqrstuvwxyz"
			for vl := 0; vl <= 24; vl++ {
				vals = append(vals, letters[:vl])
			}
			for _, key := range keys {
				for _, v := range vals {
					// Twice, the second time in capitals and a second
					// later: a value replaces one of its length.
					for i := range 2 {
						if i == 1 {
							v = strings.ToUpper(v)
						}
						for _, c := range []*FakeClock{fc, sc} {
							c.Advance(time.Second)
						}
						fast.SetLRUClock(fc.NowMillis())
						slow.SetLRUClock(sc.NowMillis())
						ferr, serr := fast.Put(key, []byte(v)), slow.putSlow(key, []byte(v))
						if (ferr == nil) != (serr == nil) {
							t.Fatalf("key %q value %q: Put %v, putSlow %v", key, v, ferr, serr)
						}
						_, fsl := fast.lookup(key) // before the read back, which touches the key
						_, ssl := slow.lookup(key)
						if fsl.inl != ssl.inl || !tc.random && (fsl.atime != ssl.atime || fsl.meta != ssl.meta) {
							t.Fatalf("key %q value %q: slots differ: %+v, %+v", key, v, fsl, ssl)
						}
						if fast.Mods() != slow.Mods() {
							t.Fatalf("key %q value %q: Mods %d and %d", key, v, fast.Mods(), slow.Mods())
						}
						fv, ff := fast.getSlow(nil, key)
						sv, sf := slow.getSlow(nil, key)
						if ff != sf || !bytes.Equal(fv, sv) || string(fv) != v {
							t.Fatalf("key %q value %q: read back %q %v and %q %v", key, v, fv, ff, sv, sf)
						}
					}
				}
			}
			var fs, ss Stats
			fast.Stats(&fs)
			slow.Stats(&ss)
			if fs.Keys != ss.Keys || fs.KeysWithTTL != ss.KeysWithTTL {
				t.Fatalf("Put's stats %+v, putSlow's %+v", fs, ss)
			}
			if tc.cut && (len(emitted[0]) == 0 || strings.Join(emitted[0], ",") != strings.Join(emitted[1], ",")) {
				t.Fatalf("the cuts differ: %q, %q", emitted[0], emitted[1])
			}
		})
	}
}

// pastHome reports whether one of keys, of 8 to 16 bytes and stored with
// a value Get copies itself, sits past its home slot, whose entry is
// another key's: Get's getProbe case, its hit path included.
func pastHome(s *Store, keys [][]byte) bool {
	for _, key := range keys {
		n := len(key)
		if n < 8 || n > shortKey {
			continue
		}
		_, sl := s.lookup(key)
		// A slot Get's copy serves: no TTL, a tail of 1 to 16 bytes, a
		// raw or APPEND-built string (getProbe's hit path, not getSlow).
		if sl == nil || sl.meta&(ttlBit|encMask)-(inlineLen+1) > 16-1 || sl.inl[0]&^tagMod != 0 {
			continue
		}
		k0, k1 := binary.LittleEndian.Uint64(key), binary.LittleEndian.Uint64(key[n-8:])
		tag := tagOf(s.hk.mix(k0, k1, n))
		e := s.ix.t[uint64(tag>>(s.ix.shift&31))&uint64(len(s.ix.t)-1)]
		if e != 0 && s.slot(uint32(e)) != sl {
			return true
		}
	}
	return false
}
