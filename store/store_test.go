package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
)

func newStore(t testing.TB, o Options) (*Store, *FakeClock) {
	t.Helper()
	c := NewFakeClock(1_700_000_000_000)
	if o.Clock == nil {
		o.Clock = c
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

func mustCheck(t testing.TB, s *Store) {
	t.Helper()
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestSlotAndIndexHoldNoPointers(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[slot](), reflect.TypeFor[[slotPageLen]slot]()} {
		if testkit.HasPointers(typ) {
			t.Errorf("%v holds pointers: the GC would scan every key", typ)
		}
	}
	if reflect.TypeFor[slot]().Size() != slotSize {
		t.Fatalf("slot is %d bytes, want %d", reflect.TypeFor[slot]().Size(), slotSize)
	}
	if got := reflect.TypeOf(index{}.t).Elem().Kind(); got != reflect.Uint64 {
		t.Fatalf("index entries are %v", got)
	}
}

func TestValueLayout(t *testing.T) {
	s, _ := newStore(t, Options{})
	key := []byte("0123456789abcdef")
	cases := []struct {
		val        string
		tag        byte
		encLen     int
		blockBytes int // arena block size class: 4 id + 16 key + tail
	}{
		{"", tagRaw, 1, 24},
		{"abcde", tagRaw, 6, 24},                // 5 raw bytes: all inline, no tail
		{"abcdef", tagRaw, 7, 24},               // 1-byte tail
		{"0123456789ABCDEF", tagRaw, 17, 32},    // the 16-byte value: 11-byte tail
		{"12345", tagInt, 3, 24},                // integers are binary
		{"549755813887", tagInt, 6, 24},         // 2^39-1: still inline
		{"-9223372036854775808", tagInt, 9, 24}, // 8 bytes: 3-byte tail
		{"007", tagRaw, 4, 24},                  // not canonical: stays raw
	}
	for _, c := range cases {
		if _, _, _, err := s.Set(nil, key, []byte(c.val), SetOptions{}); err != nil {
			t.Fatal(err)
		}
		id, sl := s.lookup(key)
		if sl.inl[0] != c.tag || sl.encLen() != c.encLen || s.ar.Cap(sl.ref) != c.blockBytes {
			t.Errorf("%q: tag %d encLen %d block %d; want %d %d %d", c.val, sl.inl[0], sl.encLen(), s.ar.Cap(sl.ref), c.tag, c.encLen, c.blockBytes)
		}
		if got, _ := s.Get(nil, key); string(got) != c.val {
			t.Errorf("slot %d: GET %q, want %q", id, got, c.val)
		}
	}
	mustCheck(t, s)
}

// TestOverwriteReusesTail: rewriting a 16-byte value keeps its block: no arena churn.
func TestOverwriteReusesTail(t *testing.T) {
	s, _ := newStore(t, Options{})
	key, val := []byte("key:000000000001"), []byte("value:0000000001")
	s.Set(nil, key, val, SetOptions{})
	_, sl := s.lookup(key)
	ref := sl.ref
	var before, after Stats
	s.Stats(&before)
	for i := 0; i < 100000; i++ {
		val[15] = byte(i)
		s.Set(nil, key, val, SetOptions{})
	}
	s.Stats(&after)
	_, sl = s.lookup(key)
	if sl.ref != ref || after.ArenaSize != before.ArenaSize || after.ArenaDead != 0 || after.ArenaLive != before.ArenaLive {
		t.Fatalf("overwrites churned the arena: ref %#x -> %#x, before %+v after %+v", ref, sl.ref, before, after)
	}
	mustCheck(t, s)
}

func TestSetOptions(t *testing.T) {
	s, c := newStore(t, Options{})
	k := []byte("k")
	if _, had, ok, _ := s.Set(nil, k, []byte("a"), SetOptions{XX: true}); had || ok || s.Exists(k) {
		t.Fatal("XX on a missing key wrote")
	}
	if _, had, ok, _ := s.Set(nil, k, []byte("a"), SetOptions{NX: true}); had || !ok {
		t.Fatal("NX on a missing key did not write")
	}
	if old, had, ok, _ := s.Set(nil, k, []byte("b"), SetOptions{NX: true, Get: true}); !had || ok || string(old) != "a" {
		t.Fatalf("NX GET on an existing key: old %q had %v applied %v", old, had, ok)
	}
	exp := c.NowMillis() + 1500
	s.Set(nil, k, []byte("c"), SetOptions{ExpireAt: exp})
	if got := s.PTTL(k); got != 1500 {
		t.Fatalf("PTTL %d", got)
	}
	s.Set(nil, k, []byte("d"), SetOptions{KeepTTL: true})
	if got := s.ExpireTime(k); got != exp {
		t.Fatalf("KEEPTTL lost the expiry: %d", got)
	}
	s.Set(nil, k, []byte("e"), SetOptions{})
	if got := s.PTTL(k); got != -1 {
		t.Fatalf("plain SET kept the expiry: %d", got)
	}
	if old, had, ok, _ := s.Set(nil, k, []byte("x"), SetOptions{ExpireAt: c.NowMillis() - 1, Get: true}); !had || !ok || string(old) != "e" || s.Exists(k) {
		t.Fatal("SET with a past expiry must delete the key")
	}
	if s.PTTL(k) != -2 {
		t.Fatal("PTTL of a missing key")
	}
}

func TestExpiryLazyAndActive(t *testing.T) {
	s, c := newStore(t, Options{})
	for i := 0; i < 1000; i++ {
		s.Set(nil, []byte(fmt.Sprint("t", i)), []byte("v"), SetOptions{ExpireAt: c.NowMillis() + 100})
		s.Set(nil, []byte(fmt.Sprint("p", i)), []byte("v"), SetOptions{})
	}
	c.Advance(99 * time.Millisecond)
	if !s.Exists([]byte("t5")) {
		t.Fatal("expired early")
	}
	c.Advance(time.Millisecond)
	if s.Exists([]byte("t5")) {
		t.Fatal("lazy expiry: key still visible at its expiry time")
	}
	if s.Len() != 1999 {
		t.Fatalf("Len %d: expired keys are reclaimed lazily or by Tick", s.Len())
	}
	ticks := 0
	for s.Len() > 1000 {
		if w := s.Tick(64); w > 64+8 || w == 0 {
			t.Fatalf("Tick(64) did %d units of work", w)
		}
		if ticks++; ticks > 1000 {
			t.Fatalf("active expiry stuck at %d keys", s.Len())
		}
	}
	var st Stats
	s.Stats(&st)
	if st.Expired != 1000 || st.KeysWithTTL != 0 {
		t.Fatalf("stats %+v", st)
	}
	mustCheck(t, s)
	// With TTL keys left but none due, Tick goes idle after a pass (the loop may park)
	// and resumes when the clock moves on.
	s.Set(nil, []byte("later"), []byte("v"), SetOptions{ExpireAt: c.NowMillis() + 10000})
	for i := 0; i < 1000 && s.Tick(64) > 0; i++ {
	}
	if w := s.Tick(64); w != 0 {
		t.Fatalf("idle Tick did %d units of work", w)
	}
	c.Advance(time.Second)
	if w := s.Tick(64); w == 0 {
		t.Fatal("active expiry never resumed")
	}
}

func TestIncr(t *testing.T) {
	s, c := newStore(t, Options{})
	k := []byte("n")
	for i := 1; i <= 1000; i++ {
		if n, err := s.IncrBy(k, 1); err != nil || n != int64(i) {
			t.Fatalf("INCR = %d, %v", n, err)
		}
	}
	s.ExpireAt(k, c.NowMillis()+5000)
	if n, _ := s.IncrBy(k, -2000); n != -1000 || s.PTTL(k) != 5000 {
		t.Fatalf("DECRBY: %d, PTTL %d (INCR keeps the TTL)", n, s.PTTL(k))
	}
	s.Set(nil, k, []byte("9223372036854775807"), SetOptions{})
	if _, err := s.IncrBy(k, 1); !errors.Is(err, ErrOverflow) {
		t.Fatalf("overflow: %v", err)
	}
	s.Set(nil, k, []byte("12a"), SetOptions{})
	if _, err := s.IncrBy(k, 1); !errors.Is(err, ErrNotInteger) {
		t.Fatalf("not an integer: %v", err)
	}
	if v, _ := s.Get(nil, k); string(v) != "12a" {
		t.Fatalf("failed INCR changed the value to %q", v)
	}
}

func TestLimits(t *testing.T) {
	s, _ := newStore(t, Options{MaxKeyLen: 8, MaxValueLen: 10})
	if _, _, _, err := s.Set(nil, []byte("123456789"), nil, SetOptions{}); !errors.Is(err, ErrKeyTooLong) {
		t.Fatalf("long key: %v", err)
	}
	if _, _, _, err := s.Set(nil, []byte("k"), make([]byte, 11), SetOptions{}); !errors.Is(err, ErrValueTooLong) {
		t.Fatalf("long value: %v", err)
	}
	s.Set(nil, []byte("k"), make([]byte, 8), SetOptions{})
	if _, err := s.Append([]byte("k"), []byte("abc")); !errors.Is(err, ErrValueTooLong) {
		t.Fatalf("APPEND past the limit: %v", err)
	}
	if _, err := s.IncrBy([]byte("123456789"), 1); !errors.Is(err, ErrKeyTooLong) {
		t.Fatalf("INCR long key: %v", err)
	}
	for _, o := range []Options{{MaxKeyLen: HardMaxKeyLen + 1}, {MaxValueLen: -1}, {MaxMemory: -1}, {Eviction: 9}, {ArenaChunkSize: 12345}} {
		if _, err := New(o); !errors.Is(err, ErrBadOption) {
			t.Errorf("New(%+v) = %v, want ErrBadOption", o, err)
		}
	}
}

func TestNoEvictionRefusesAndKeepsEverything(t *testing.T) {
	s, _ := newStore(t, Options{MaxMemory: 256 << 10})
	val := make([]byte, 100)
	n := 0
	var err error
	for ; n < 100000; n++ {
		if _, _, _, err = s.Set(nil, []byte(strconv.Itoa(n)), val, SetOptions{}); err != nil {
			break
		}
	}
	if !errors.Is(err, ErrOOM) || n < 500 {
		t.Fatalf("after %d keys: %v, want ErrOOM", n, err)
	}
	// Overwriting with the same size still works; growing does not; nothing was lost.
	if _, _, _, err := s.Set(nil, []byte("0"), val, SetOptions{}); err != nil {
		t.Fatalf("same-size overwrite at the cap: %v", err)
	}
	if _, _, _, err := s.Set(nil, []byte("0"), make([]byte, 1000), SetOptions{}); !errors.Is(err, ErrOOM) {
		t.Fatalf("growing overwrite at the cap: %v", err)
	}
	for i := 0; i < n; i++ {
		if v, ok := s.Get(nil, []byte(strconv.Itoa(i))); !ok || len(v) != 100 {
			t.Fatalf("key %d lost after OOM", i)
		}
	}
	var st Stats
	s.Stats(&st)
	if st.UsedMemory > st.MaxMemory || st.Evicted != 0 || st.OOMRejects == 0 {
		t.Fatalf("stats %+v", st)
	}
	mustCheck(t, s)
}

func TestAllKeysLRUKeepsHotKeys(t *testing.T) {
	// 532 KiB holds as many of these keys (about 96 bytes each with
	// 16-byte slots, 100 with 20-byte ones) as 512 KiB did before slots
	// grew by the access time: the CLOCK hand's lap, which the hot keys'
	// refresh every 50 writes must beat, is as long as it was.
	s, _ := newStore(t, Options{MaxMemory: 532 << 10, Eviction: AllKeysLRU})
	val := make([]byte, 50)
	hot := func(i int) []byte { return []byte("hot" + strconv.Itoa(i)) }
	for i := 0; i < 100; i++ {
		s.Set(nil, hot(i), val, SetOptions{})
	}
	for n := 0; n < 50000; n++ {
		if _, _, _, err := s.Set(nil, []byte("cold"+strconv.Itoa(n)), val, SetOptions{}); err != nil {
			t.Fatalf("allkeys-lru write %d: %v", n, err)
		}
		if n%50 == 0 {
			for i := 0; i < 100; i++ {
				s.Get(nil, hot(i))
			}
		}
	}
	var st Stats
	s.Stats(&st)
	if st.UsedMemory > st.MaxMemory || st.Evicted == 0 {
		t.Fatalf("stats %+v", st)
	}
	kept := 0
	for i := 0; i < 100; i++ {
		if s.Exists(hot(i)) {
			kept++
		}
	}
	if kept < 90 {
		t.Fatalf("only %d of 100 hot keys survived %d evictions", kept, st.Evicted)
	}
	mustCheck(t, s)
}

func TestVolatileTTLEvictsSoonestAndSparesPersistent(t *testing.T) {
	s, c := newStore(t, Options{MaxMemory: 256 << 10, Eviction: VolatileTTL})
	val := make([]byte, 50)
	for i := 0; i < 500; i++ {
		s.Set(nil, []byte("p"+strconv.Itoa(i)), val, SetOptions{})
	}
	var err error
	n, writes := 0, 100000
	if raceEnabled {
		writes = 30000 // still ten times what the cap holds
	}
	for ; n < writes && err == nil; n++ {
		_, _, _, err = s.Set(nil, []byte("v"+strconv.Itoa(n)), val, SetOptions{ExpireAt: c.NowMillis() + 1000 + int64(n)})
	}
	for i := 0; i < 500; i++ {
		if !s.Exists([]byte("p" + strconv.Itoa(i))) {
			t.Fatalf("volatile-ttl evicted persistent key p%d", i)
		}
	}
	var st Stats
	s.Stats(&st)
	if st.Evicted == 0 || st.UsedMemory > st.MaxMemory {
		t.Fatalf("stats %+v (stopped after %d writes: %v)", st, n, err)
	}
	if !s.Exists([]byte("v" + strconv.Itoa(n-2))) {
		t.Fatal("the newest volatile key (latest expiry) was evicted")
	}
	mustCheck(t, s)
}

// TestIndexGrowsIncrementally: inserts never migrate more than a bounded number of
// buckets, lookups work mid-migration, and deletes during migration keep runs intact.
func TestIndexGrowsIncrementally(t *testing.T) {
	s, _ := newStore(t, Options{})
	resizes := 0
	n := 200000
	if raceEnabled {
		n = 50000
	}
	for i := 0; i < n; i++ {
		wasOld := s.ix.old != nil
		s.Set(nil, []byte(strconv.Itoa(i)), []byte("v"), SetOptions{})
		if s.ix.old != nil && !wasOld {
			resizes++
			mustCheck(t, s)
		}
		if s.ix.old != nil && i%7 == 0 {
			s.Del([]byte(strconv.Itoa(i / 2)))
			if !s.Exists([]byte(strconv.Itoa(i - 1))) {
				t.Fatalf("key %d lost during migration", i-1)
			}
			if i%1001 == 0 {
				mustCheck(t, s)
			}
		}
	}
	if resizes < 10 {
		t.Fatalf("%d resizes", resizes)
	}
	for s.Tick(1000) > 0 {
	}
	mustCheck(t, s)
}

func TestScanAndFlush(t *testing.T) {
	s, _ := newStore(t, Options{})
	for i := 0; i < 1000; i++ {
		s.Set(nil, []byte(strconv.Itoa(i)), []byte("v"), SetOptions{})
	}
	seen := map[string]int{}
	calls := 0
	for cur := s.Scan(0, 10, func(k []byte) { seen[string(k)]++ }); cur != 0; cur = s.Scan(cur, 10, func(k []byte) { seen[string(k)]++ }) {
		calls++
	}
	if len(seen) != 1000 || calls < 50 {
		t.Fatalf("scan saw %d keys in %d calls", len(seen), calls)
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("scan reported %q %d times", k, n)
		}
	}
	s.Flush()
	if s.Len() != 0 || s.Exists([]byte("1")) {
		t.Fatal("flush left keys")
	}
	mustCheck(t, s)
}

func TestHotPathsAllocateNothing(t *testing.T) {
	s, c := newStore(t, Options{})
	keys := make([][]byte, 1000)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("key:%012d", i))
		s.Set(nil, keys[i], []byte("value:0123456789"), SetOptions{})
	}
	buf := make([]byte, 0, 64)
	val := []byte("value:9876543210")
	i := 0
	cases := map[string]func(){
		"GET hit":  func() { buf, _ = s.Get(buf[:0], keys[i%1000]); i++ },
		"GET miss": func() { buf, _ = s.Get(buf[:0], []byte("missing-key-0000")) },
		"SET overwrite": func() {
			s.Set(nil, keys[i%1000], val, SetOptions{})
			i++
		},
		"SET GET EX": func() {
			buf, _, _, _ = s.Set(buf[:0], keys[i%1000], val, SetOptions{Get: true, ExpireAt: c.NowMillis() + 10000})
			i++
		},
		"SET new + DEL": func() {
			s.Set(nil, []byte("fresh-key-000001"), val, SetOptions{})
			s.Del([]byte("fresh-key-000001"))
		},
		"INCR": func() { s.IncrBy([]byte("counter"), 1) },
		"PTTL+EXISTS": func() {
			s.PTTL(keys[i%1000])
			s.Exists(keys[i%1000])
			i++
		},
		"Tick": func() { s.Tick(100) },
		"GETRANGE": func() {
			buf = s.GetRange(buf[:0], keys[i%1000], 2, -3)
			i++
		},
		"SETRANGE+APPEND": func() {
			s.SetRange([]byte("grow"), 3, val[:4])
			s.Append([]byte("grow2"), val[:2])
			if i%100 == 0 {
				s.Del([]byte("grow2"))
			}
			i++
		},
		"RENAME": func() {
			s.Rename(keys[i%1000], []byte("renamed:0000001"), false)
			s.Rename([]byte("renamed:0000001"), keys[i%1000], false)
			i++
		},
		"GETDEL+TOUCH+ENCODING": func() {
			s.Set(nil, []byte("gd"), val, SetOptions{})
			buf, _ = s.GetDel(buf[:0], []byte("gd"))
			s.Touch(keys[i%1000])
			s.EncodingOf(keys[i%1000])
			i++
		},
		"EXPORT+IMPORT": func() {
			var v []byte
			var k ValueKind
			var at int64
			v, k, at, _ = s.Export(buf[:0], keys[i%1000])
			buf = v
			s.Import([]byte("copy:000000001"), v, k, at, true)
			i++
		},
		"RANDOMKEY": func() { buf, _ = s.Random(buf[:0]) },
	}
	for name, f := range cases {
		f()
		if n := testing.AllocsPerRun(2000, f); n != 0 {
			t.Errorf("%s: %v allocations per call", name, n)
		}
	}
}

func Example() {
	s, err := New(Options{MaxMemory: 64 << 20, Eviction: AllKeysLRU})
	if err != nil {
		panic(err)
	}
	s.Set(nil, []byte("greeting"), []byte("hello"), SetOptions{})
	v, ok := s.Get(nil, []byte("greeting"))
	fmt.Println(string(v), ok)
	n, _ := s.IncrBy([]byte("visits"), 5)
	fmt.Println(n, s.Len())
	// Output:
	// hello true
	// 5 2
}

// TestEvictionWorkIsBounded: under allkeys-lru no write evicts more than
// maxEvictPerWrite keys (the index stays at up to 7/8 load rather than double past
// the cap), and Tick brings the store back under the cap.
func TestEvictionWorkIsBounded(t *testing.T) {
	s, _ := newStore(t, Options{MaxMemory: 4 << 20, Eviction: AllKeysLRU})
	var st Stats
	prev := int64(0)
	writes := 300000
	if raceEnabled {
		writes = 150000 // the race detector's instrumentation makes each write slow
	}
	for i := 0; i < writes; i++ {
		if _, _, _, err := s.Set(nil, []byte(strconv.Itoa(i)), []byte("0123456789abcdef"), SetOptions{}); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		s.Stats(&st)
		if st.Evicted-prev > maxEvictPerWrite {
			t.Fatalf("write %d evicted %d keys", i, st.Evicted-prev)
		}
		prev = st.Evicted
	}
	for s.Tick(256) > 0 {
	}
	s.Stats(&st)
	if st.UsedMemory > st.MaxMemory || st.Evicted < int64(writes)/3 {
		t.Fatalf("stats %+v after %d writes: over the cap, or fewer than a third evicted", st, writes)
	}
	// One value worth thousands of small keys: the write evicts its bounded share,
	// proceeds, and Tick finishes the job.
	prev = st.Evicted
	if _, _, _, err := s.Set(nil, []byte("big"), make([]byte, 512<<10), SetOptions{}); err != nil {
		t.Fatalf("big write: %v", err)
	}
	s.Stats(&st)
	if st.Evicted-prev != maxEvictPerWrite || st.UsedMemory <= st.MaxMemory {
		t.Fatalf("big write evicted %d keys, used %d of %d", st.Evicted-prev, st.UsedMemory, st.MaxMemory)
	}
	for s.Tick(256) > 0 {
	}
	s.Stats(&st)
	if st.UsedMemory > st.MaxMemory {
		t.Fatalf("Tick left the store over its cap: %+v", st)
	}
	mustCheck(t, s)
}

// TestOffHeapTablesAndSlots: a large store maps its index tables and slot pages
// outside the Go heap, frees the old table when a resize completes, and Flush
// unmaps everything.
func TestOffHeapTablesAndSlots(t *testing.T) {
	s, _ := newStore(t, Options{InitialCapacity: 380_000})
	if s.mem.Bytes() == 0 {
		t.Fatal("a 2^19-bucket index is not off-heap")
	}
	var k [8]byte
	for i := uint64(0); i < 420_000; i++ {
		binary.LittleEndian.PutUint64(k[:], i)
		s.Set(nil, k[:], k[:], SetOptions{})
	}
	for s.ix.old != nil {
		s.Tick(1 << 16)
	}
	mustCheck(t, s)
	want := int64(len(s.ix.t))*8 + int64((len(s.slots)-heapSlotPages+63)/64)*slotRegionSize
	if got := s.mem.Bytes(); got != want {
		t.Fatalf("off-heap bytes %d, want %d (index %d buckets, %d slot pages)", got, want, len(s.ix.t), len(s.slots))
	}
	binary.LittleEndian.PutUint64(k[:], 1234)
	if v, ok := s.Get(nil, k[:]); !ok || string(v) != string(k[:]) {
		t.Fatal("key lost")
	}
	s.Flush()
	if got := s.mem.Bytes(); got != 1<<19*8 { // only the fresh pre-sized index
		t.Fatalf("Flush kept %d mapped bytes", got)
	}
	s.Set(nil, []byte("after"), []byte("flush"), SetOptions{})
	mustCheck(t, s)
}

// TestCompactionThroughTick: after most keys of a size class are deleted, Tick's
// bounded compaction steps move the survivors' blocks (patching their slots) and
// give pages back; every survivor still reads back.
func TestCompactionThroughTick(t *testing.T) {
	s, _ := newStore(t, Options{})
	n := 100_000
	if raceEnabled {
		n = 30_000
	}
	for i := 0; i < n; i++ {
		s.Set(nil, []byte(fmt.Sprintf("key:%012d", i)), []byte(fmt.Sprintf("value:%010d", i)), SetOptions{})
	}
	for i := 0; i < n; i++ {
		if i%5 != 0 {
			s.Del([]byte(fmt.Sprintf("key:%012d", i)))
		}
	}
	var before, after Stats
	s.Stats(&before)
	for ticks := 0; s.Tick(64) > 0; ticks++ {
		if ticks%500 == 0 {
			mustCheck(t, s)
		}
	}
	s.Stats(&after)
	if after.ArenaMoves == 0 || after.ArenaPagesFreed == before.ArenaPagesFreed || after.ArenaDead >= before.ArenaDead {
		t.Fatalf("no compaction: before %+v after %+v", before, after)
	}
	for i := 0; i < n; i += 5 {
		v, ok := s.Get(nil, []byte(fmt.Sprintf("key:%012d", i)))
		if !ok || string(v) != fmt.Sprintf("value:%010d", i) {
			t.Fatalf("key %d after compaction: %q %v", i, v, ok)
		}
	}
	mustCheck(t, s)
	t.Logf("dead %d -> %d bytes, %d moves, %d pages freed", before.ArenaDead, after.ArenaDead, after.ArenaMoves, after.ArenaPagesFreed-before.ArenaPagesFreed)
}

// TestScanAcrossResize: SCAN's guarantee while the index resizes under it.
// During the first calls of one scan, inserts grow the index through
// several resizes (each migrating buckets as it goes) and other keys are
// deleted, freeing slots that later inserts take; every key present for
// the whole scan is still reported, exactly once.
func TestScanAcrossResize(t *testing.T) {
	s, _ := newStore(t, Options{})
	stable := map[string]int{}
	for i := 0; i < 500; i++ {
		k := "stable:" + strconv.Itoa(i)
		s.Set(nil, []byte(k), []byte("v"), SetOptions{})
		stable[k] = 0
	}
	resizes, next, calls := 0, 0, 0
	visit := func(k []byte) {
		if n, ok := stable[string(k)]; ok {
			stable[string(k)] = n + 1
		}
	}
	for cur := s.Scan(0, 10, visit); cur != 0; cur = s.Scan(cur, 10, visit) {
		calls++
		// Churn between the first 20 calls only, so the scan catches up
		// and ends: 300 inserts and 100 deletes each time.
		for j := 0; calls <= 20 && j < 300; j++ {
			wasOld := s.ix.old != nil
			s.Set(nil, []byte("churn:"+strconv.Itoa(next)), []byte("v"), SetOptions{})
			if s.ix.old != nil && !wasOld {
				resizes++
			}
			if j%3 == 0 && next > 10 {
				s.Del([]byte("churn:" + strconv.Itoa(next-10)))
			}
			next++
		}
		if calls%5 == 0 {
			s.Tick(64)
		}
		if calls > 100000 {
			t.Fatal("the scan does not end")
		}
	}
	if resizes < 3 {
		t.Fatalf("only %d index resizes during the scan: the test does not test what it says", resizes)
	}
	for k, n := range stable {
		if n != 1 {
			t.Errorf("%s reported %d times during a scan with %d resizes", k, n, resizes)
		}
	}
	mustCheck(t, s)
	t.Logf("%d SCAN calls, %d resizes, %d inserts", calls, resizes, next)
}

// TestLongKeys: keys of every length up to the limit, across the slot's
// 16-bit length (longKey), go through every path that writes or moves a
// key's block (insert, overwrite in place and reallocated, TTL on and off,
// APPEND, RENAME both ways, eviction's accounting), with Check after each.
func TestLongKeys(t *testing.T) {
	s, clk := newStore(t, Options{MaxKeyLen: 1 << 20, MaxValueLen: 1 << 20})
	check := func(what string) {
		t.Helper()
		if err := s.Check(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	for _, n := range []int{0, 1, longKey - 1, longKey, longKey + 1, 300_000, 1 << 20} {
		key := bytes.Repeat([]byte{byte('a' + n%26)}, n)
		for _, vl := range []int{0, 5, 6, 7, 100, 70_000} {
			val := bytes.Repeat([]byte{'v'}, vl)
			if _, _, _, err := s.Set(nil, key, val, SetOptions{}); err != nil {
				t.Fatalf("SET of a %d-byte key, %d-byte value: %v", n, vl, err)
			}
			check(fmt.Sprintf("SET %d-byte key, %d-byte value", n, vl))
			if got, ok := s.Get(nil, key); !ok || !bytes.Equal(got, val) {
				t.Fatalf("GET of a %d-byte key: %d bytes, %v; want %d", n, len(got), ok, vl)
			}
			if !s.ExpireAt(key, clk.NowMillis()+60_000) || s.PTTL(key) <= 0 {
				t.Fatalf("EXPIRE of a %d-byte key", n)
			}
			check("EXPIRE")
			if got, ok := s.Get(nil, key); !ok || !bytes.Equal(got, val) {
				t.Fatalf("GET of a %d-byte key with a TTL: %d bytes, %v", n, len(got), ok)
			}
			if !s.Persist(key) {
				t.Fatalf("PERSIST of a %d-byte key", n)
			}
			check("PERSIST")
		}
		if _, err := s.Append(key, []byte("tail")); err != nil {
			t.Fatal(err)
		}
		check("APPEND")
		if s.MemoryUsage(key) < int64(n) {
			t.Fatalf("MEMORY USAGE of a %d-byte key: %d", n, s.MemoryUsage(key))
		}
		// RENAME to a key on the other side of longKey, and back.
		other := bytes.Repeat([]byte{'o'}, longKey+longKey/2-n%longKey)
		if _, err := s.Rename(key, other, false); err != nil {
			t.Fatalf("RENAME %d-byte key to %d bytes: %v", n, len(other), err)
		}
		check("RENAME")
		if _, err := s.Rename(other, key, false); err != nil {
			t.Fatal(err)
		}
		check("RENAME back")
		if !s.Exists(key) || s.Exists(other) {
			t.Fatalf("after RENAME and back: key %v, other %v", s.Exists(key), s.Exists(other))
		}
	}
	// Keys sharing a long prefix, of lengths either side of longKey, stay apart.
	long := bytes.Repeat([]byte{'p'}, longKey+10)
	for n := longKey - 3; n <= longKey+3; n++ {
		s.Set(nil, long[:n], []byte(strconv.Itoa(n)), SetOptions{})
	}
	for n := longKey - 3; n <= longKey+3; n++ {
		if got, _ := s.Get(nil, long[:n]); string(got) != strconv.Itoa(n) {
			t.Fatalf("key of %d bytes: %q", n, got)
		}
	}
	check("neighbouring lengths")
	if _, _, _, err := s.Set(nil, make([]byte, 1<<20+1), nil, SetOptions{}); !errors.Is(err, ErrKeyTooLong) {
		t.Fatalf("a key over MaxKeyLen: %v, want ErrKeyTooLong", err)
	}
}
