package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/rdb"
	"github.com/goblin-kv/goblin/store"
)

type kv struct {
	val string
	exp int64
}

// dump reads a store's keys, values and expiries.
func dump(t testing.TB, s *store.Store) map[string]kv {
	m := map[string]kv{}
	for cur := uint64(0); ; {
		var keys [][]byte
		cur = s.Scan(cur, 100, func(k []byte) { keys = append(keys, bytes.Clone(k)) })
		for _, k := range keys {
			v, ok := s.Get(nil, k)
			if !ok {
				t.Fatalf("scanned key %q missing", k)
			}
			exp := s.ExpireTime(k)
			if exp < 0 {
				exp = 0
			}
			m[string(k)] = kv{string(v), exp}
		}
		if cur == 0 {
			return m
		}
	}
}

func newStores(t testing.TB, n int) []*store.Store {
	s0, err := store.New(store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := []*store.Store{s0}
	for len(out) < n {
		s, err := s0.Sibling()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// fill writes strings of every encoding a reader must accept: integers of
// each width and past 32 bits, non-canonical numbers, LZF-compressible and
// incompressible long strings, binary, empty, 70 KB; some with a TTL.
func fill(t testing.TB, s *store.Store, prefix string, rng *rand.Rand) {
	vals := []string{"", "0", "-1", "127", "128", "-129", "32767", "40000", "2147483647", "2147483648", "-9223372036854775808",
		"007", "+5", "1e3", " 1", strings.Repeat("a", 40), strings.Repeat("abc", 1000), "\x00\xff\r\n", strings.Repeat("z", 70000)}
	incompressible := make([]byte, 300)
	for i := range incompressible {
		incompressible[i] = byte(rng.Uint32())
	}
	vals = append(vals, string(incompressible))
	for i := range 600 {
		var o store.SetOptions
		if i%3 == 0 {
			o.ExpireAt = time.Now().UnixMilli() + 3600_000 + int64(i)
		}
		v := vals[i%len(vals)]
		if i >= len(vals)*2 {
			v = fmt.Sprintf("value-%d-%s", i, strings.Repeat("x", i%50))
		}
		if _, _, _, err := s.Set(nil, []byte(prefix+strconv.Itoa(i)), []byte(v), o); err != nil {
			t.Fatal(err)
		}
	}
}

func loadInto(t testing.TB, path string, n int) []*store.Store {
	t.Helper()
	stores := newStores(t, n)
	_, found, err := LoadFile(path, func(i int) (*store.Store, error) {
		if i >= n {
			return nil, fmt.Errorf("database %d out of range", i)
		}
		return stores[i], nil
	}, LoadOptions{})
	if err != nil || !found {
		t.Fatalf("load %s: found %v, %v", path, found, err)
	}
	return stores
}

// saveBytes saves s as database 0 with o (its Path set to a temporary
// file) and returns the file's bytes.
func saveBytes(t testing.TB, s *store.Store, o Options) []byte {
	t.Helper()
	o.Path = filepath.Join(t.TempDir(), "dump.rdb")
	j, err := Begin([]DB{{0, s}}, o, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Run(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(o.Path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func checkRDB(t *testing.T, path string) {
	t.Helper()
	bin, err := exec.LookPath("redis-check-rdb")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redis-check-rdb is required in CI: %v", err)
		}
		t.Logf("redis-check-rdb not installed: not checked")
		return
	}
	out, err := exec.Command(bin, path).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("RDB looks OK!")) {
		t.Fatalf("redis-check-rdb %s: %v\n%s", path, err, out)
	}
}

// TestBackgroundSaveIsPointInTime saves two databases in the background
// while writes of every kind (overwrites, deletes, renames, expiry
// changes, a FLUSHDB of one database, new keys) land between the steps,
// then loads the file: it holds exactly the databases as they were when
// the save began. redis-check-rdb passes the file.
func TestBackgroundSaveIsPointInTime(t *testing.T) {
	for seed := range uint64(5) {
		t.Run(strconv.Itoa(int(seed)), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 1))
			stores := newStores(t, 4)
			fill(t, stores[0], "a:", rng)
			fill(t, stores[3], "b:", rng)
			want := []map[string]kv{dump(t, stores[0]), {}, {}, dump(t, stores[3])}
			path := filepath.Join(t.TempDir(), "dump.rdb")
			j, err := Begin([]DB{{0, stores[0]}, {1, stores[1]}, {3, stores[3]}}, Options{Path: path}, true)
			if err != nil {
				t.Fatal(err)
			}
			for !j.Step(1 + rng.IntN(50)) {
				for range rng.IntN(10) {
					s := stores[[]int{0, 1, 3}[rng.IntN(3)]]
					k := []byte([]string{"a:", "b:"}[rng.IntN(2)] + strconv.Itoa(rng.IntN(700)))
					switch rng.IntN(7) {
					case 0, 1:
						s.Set(nil, k, []byte("changed"), store.SetOptions{})
					case 2:
						s.Del(k)
					case 3:
						s.Rename(k, []byte("renamed"+strconv.Itoa(rng.IntN(50))), false)
					case 4:
						s.ExpireAt(k, time.Now().UnixMilli()+1000)
					case 5:
						s.Persist(k)
					case 6:
						if rng.IntN(100) == 0 {
							stores[3].Flush()
						}
					}
				}
			}
			for {
				done, err := j.Finished()
				if err != nil {
					t.Fatal(err)
				}
				if done {
					break
				}
				time.Sleep(time.Millisecond)
			}
			keys, copied := j.Keys()
			t.Logf("%d keys written, %d of them by copy-on-write", keys, copied)
			if copied == 0 {
				t.Error("no key was written by copy-on-write: the test did not exercise it")
			}
			got := loadInto(t, path, 4)
			for i, w := range want {
				if g := dump(t, got[i]); !maps.Equal(g, w) {
					t.Fatalf("database %d: loaded %d keys, want the %d of the cut", i, len(g), len(w))
				}
			}
			checkRDB(t, path)
			if _, err := os.Stat(TempName(filepath.Dir(path), os.Getpid())); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the temporary file is left: %v", err)
			}
		})
	}
}

// TestForegroundSaveRoundTrip: SAVE's path writes the same image, with
// and without compression and checksum.
func TestForegroundSaveRoundTrip(t *testing.T) {
	for _, o := range []Options{{}, {NoCompression: true}, {NoChecksum: true}} {
		rng := rand.New(rand.NewPCG(9, 9))
		stores := newStores(t, 2)
		fill(t, stores[1], "k", rng)
		o.Path = filepath.Join(t.TempDir(), "dump.rdb")
		j, err := Begin([]DB{{0, stores[0]}, {1, stores[1]}}, o, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := j.Run(); err != nil {
			t.Fatal(err)
		}
		got := loadInto(t, o.Path, 2)
		if g, w := dump(t, got[1]), dump(t, stores[1]); !maps.Equal(g, w) || got[0].Len() != 0 {
			t.Fatalf("%+v: loaded %d keys, want %d", o, len(g), len(w))
		}
		checkRDB(t, o.Path)
	}
}

// TestSaveFailureKeepsPreviousFile: a save that cannot write (the
// directory is gone) reports the error and leaves no temporary file; a
// save whose writer fails midway (a file in place of the directory's
// temporary file cannot be created) leaves the previous file whole.
func TestSaveFailureKeepsPreviousFile(t *testing.T) {
	stores := newStores(t, 1)
	fill(t, stores[0], "k", rand.New(rand.NewPCG(1, 1)))
	dir := t.TempDir()
	path := filepath.Join(dir, "dump.rdb")
	if err := os.WriteFile(path, []byte("previous"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Begin([]DB{{0, stores[0]}}, Options{Path: filepath.Join(dir, "missing", "dump.rdb")}, true)
	if err == nil {
		t.Fatal("a save into a missing directory began")
	}
	// The rename fails: the target is a directory.
	target := filepath.Join(dir, "adir")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := Begin([]DB{{0, stores[0]}}, Options{Path: target}, true)
	if err != nil {
		t.Fatal(err)
	}
	for !j.Step(100) {
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		done, err := j.Finished()
		if done {
			if err == nil {
				t.Fatal("a save renamed over a non-empty directory")
			}
			t.Logf("failed as expected: %v", err)
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the failing save never finished")
		}
		time.Sleep(time.Millisecond)
	}
	if b, _ := os.ReadFile(path); string(b) != "previous" {
		t.Fatalf("the previous file changed: %q", b)
	}
	if _, err := os.Stat(TempName(dir, os.Getpid())); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary file is left: %v", err)
	}
}

// TestLoadRefusals: a truncated or corrupt file is refused with its byte
// offset; a sorted set loads; a key of a type goblin does not store (a stream) is refused naming the key
// and the type unless skipped; a duplicate key is refused; keys already
// expired are dropped.
func TestLoadRefusals(t *testing.T) {
	var buf bytes.Buffer
	enc := rdb.NewEncoder(&buf, rdb.EncoderOptions{})
	enc.WriteHeader()
	enc.SelectDB(0, 3, 1)
	enc.Write([]byte("s"), &rdb.Value{Kind: rdb.KindString, Str: []byte("v")}, rdb.NoExpiry)
	enc.Write([]byte("old"), &rdb.Value{Kind: rdb.KindString, Str: []byte("v")}, time.Now().UnixMilli()-1000)
	enc.Write([]byte("myzset"), &rdb.Value{Kind: rdb.KindZSet, Items: [][]byte{[]byte("a")}, Scores: []float64{1}}, rdb.NoExpiry)
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	file := buf.Bytes()
	load := func(b []byte, o LoadOptions) (LoadStats, *store.Store, error) {
		s := newStores(t, 1)[0]
		st, err := Load(bytes.NewReader(b), func(i int) (*store.Store, error) {
			if i != 0 {
				return nil, errors.New("out of range")
			}
			return s, nil
		}, o)
		return st, s, err
	}
	st, s, err := load(file, LoadOptions{})
	if err != nil || st.Keys != 2 || st.Expired != 1 || s.Len() != 2 {
		t.Fatalf("loading: %+v, %d keys, %v", st, s.Len(), err)
	}
	if sc, ok, err := s.ZScore([]byte("myzset"), []byte("a")); err != nil || !ok || sc != 1 {
		t.Fatalf("the loaded sorted set: ZSCORE myzset a = %v %v %v", sc, ok, err)
	}
	stream, err := os.ReadFile(filepath.Join("..", "rdb", "testdata", "redis-stream.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = load(stream, LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), `key "events"`) || !strings.Contains(err.Error(), "stream") {
		t.Fatalf("a stream was not refused by name and type: %v", err)
	}
	st, s, err = load(stream, LoadOptions{SkipUnsupported: true})
	if err != nil || st.Skipped != 1 || int64(s.Len()) != st.Keys {
		t.Fatalf("skipping: %+v, %d keys, %v", st, s.Len(), err)
	}
	for _, cut := range []int{5, 20, len(file) - 9, len(file) - 1} {
		_, _, err := load(file[:cut], LoadOptions{SkipUnsupported: true})
		var re *rdb.Error
		if !errors.As(err, &re) || !strings.Contains(err.Error(), "offset") {
			t.Fatalf("file cut at %d: %v, want an *rdb.Error with the offset", cut, err)
		}
	}
	bad := bytes.Clone(file)
	bad[len(bad)-3] ^= 1
	if _, _, err := load(bad, LoadOptions{SkipUnsupported: true}); !errors.Is(err, rdb.ErrChecksum) {
		t.Fatalf("a damaged checksum: %v", err)
	}
	buf.Reset()
	enc = rdb.NewEncoder(&buf, rdb.EncoderOptions{})
	enc.WriteHeader()
	enc.SelectDB(0, 2, 0)
	enc.Write([]byte("k"), &rdb.Value{Kind: rdb.KindString, Str: []byte("1")}, rdb.NoExpiry)
	enc.Write([]byte("k"), &rdb.Value{Kind: rdb.KindString, Str: []byte("2")}, rdb.NoExpiry)
	enc.Close()
	if _, _, err := load(buf.Bytes(), LoadOptions{}); err == nil || !strings.Contains(err.Error(), `duplicate key "k"`) {
		t.Fatalf("a duplicate key: %v", err)
	}
}

// TestLoadReportsProgress: a load longer than ProgressEvery reports how
// far it got, for the server's log.
func TestLoadReportsProgress(t *testing.T) {
	src := newStores(t, 1)[0]
	for i := range 20_000 {
		src.Set(nil, []byte("k"+strconv.Itoa(i)), []byte("v"), store.SetOptions{})
	}
	path := filepath.Join(t.TempDir(), "dump.rdb")
	j, err := Begin([]DB{{0, src}}, Options{Path: path}, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Run(); err != nil {
		t.Fatal(err)
	}
	dst := newStores(t, 1)[0]
	var reports []LoadStats
	st, _, err := LoadFile(path, func(int) (*store.Store, error) { return dst, nil },
		LoadOptions{ProgressEvery: time.Nanosecond, Progress: func(s LoadStats) { reports = append(reports, s) }})
	if err != nil || st.Keys != 20_000 || st.Size == 0 {
		t.Fatalf("load: %+v, %v", st, err)
	}
	if len(reports) < 4 || reports[0].Keys == 0 || reports[0].Bytes == 0 || reports[0].Size != st.Size || reports[len(reports)-1].Keys >= 20_000 {
		t.Fatalf("progress reports: %+v", reports)
	}
}

// TestStreamSaveIsPointInTime: BeginStream writes the same point-in-time
// image into a writer instead of a file (a replica's full sync), with the
// caller's AUX fields, pausing the walk while the caller has not sent
// MaxBacklog bytes; the result loads and passes redis-check-rdb.
func TestStreamSaveIsPointInTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 1))
	stores := newStores(t, 2)
	fill(t, stores[0], "a:", rng)
	for i := range 3000 { // past the encoder's 64 KiB flushes
		stores[0].Set(nil, []byte("big:"+strconv.Itoa(i)), bytes.Repeat([]byte{byte(i)}, 100), store.SetOptions{})
	}
	want := dump(t, stores[0])
	var buf bytes.Buffer
	sent := 0
	j, err := BeginStream([]DB{{0, stores[0]}, {1, stores[1]}},
		Options{MaxBacklog: 4096, Aux: [][2]string{{"repl-id", strings.Repeat("f", 40)}, {"repl-offset", "42"}}},
		&buf, func() int64 { return int64(buf.Len() - sent) })
	if err != nil {
		t.Fatal(err)
	}
	paused := 0
	for !j.Step(1 + rng.IntN(50)) {
		if int64(buf.Len()-sent) > 4096 {
			before := buf.Len()
			if j.Step(1000) || buf.Len() != before {
				t.Fatal("Step walked on while the caller was more than MaxBacklog behind")
			}
			paused++
			sent = buf.Len() // the caller sends what is queued
		}
		for range rng.IntN(10) {
			k := []byte("a:" + strconv.Itoa(rng.IntN(700)))
			stores[0].Set(nil, k, []byte("changed"), store.SetOptions{})
		}
	}
	if done, err := j.Finished(); !done || err != nil {
		t.Fatalf("Finished: %v %v", done, err)
	}
	if paused == 0 {
		t.Error("the walk never went past MaxBacklog: the test did not exercise the pause")
	}
	path := filepath.Join(t.TempDir(), "stream.rdb")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	aux := map[string]string{}
	d := rdb.NewDecoder(bytes.NewReader(buf.Bytes()), rdb.DecoderOptions{OnAux: func(k, v []byte) { aux[string(k)] = string(v) }})
	if err := d.Decode(func(*rdb.Entry) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if aux["repl-id"] != strings.Repeat("f", 40) || aux["repl-offset"] != "42" {
		t.Fatalf("AUX fields: %v", aux)
	}
	if got := dump(t, loadInto(t, path, 2)[0]); !maps.Equal(got, want) {
		t.Fatalf("loaded %d keys, want the %d of the cut", len(got), len(want))
	}
	checkRDB(t, path)
}

// TestLoaderSteps: a Loader stepped within small bounds (one byte of the
// file, or a deadline already past) loads the same keys as Load, in
// several steps, each of which returns with the load not done until the
// last; a step past the end returns done again; Stats grow as it goes and
// carry the file's used-mem AUX field.
func TestLoaderSteps(t *testing.T) {
	src := newStores(t, 1)[0]
	for i := range 20_000 {
		src.Set(nil, []byte("k"+strconv.Itoa(i)), []byte("value-"+strconv.Itoa(i)), store.SetOptions{})
	}
	b := saveBytes(t, src, Options{UsedMemory: 12345})
	for _, lim := range []StepLimit{{Bytes: 1}, {Until: time.Now().Add(-time.Second)}} {
		dst := newStores(t, 1)[0]
		l := NewLoader(bytes.NewReader(b), func(int) (*store.Store, error) { return dst, nil }, LoadOptions{})
		steps := 0
		var prev LoadStats
		giveUp := time.Now().Add(time.Minute) // a step that finds no batch decoded returns at once: the decoder may lag on a busy machine
		for {
			done, err := l.Step(lim)
			if err != nil {
				t.Fatalf("%+v: step %d: %v", lim, steps, err)
			}
			steps++
			st := l.Stats()
			if st.Keys < prev.Keys || st.Bytes < prev.Bytes {
				t.Fatalf("%+v: step %d went back: %+v after %+v", lim, steps, st, prev)
			}
			prev = st
			if done {
				break
			}
			if time.Now().After(giveUp) {
				t.Fatalf("%+v: not done after %d steps in a minute: %+v", lim, steps, st)
			}
		}
		if done, err := l.Step(lim); !done || err != nil {
			t.Fatalf("%+v: a step after the end: done %v, %v", lim, done, err)
		}
		l.Close()
		l.Close()
		if st := l.Stats(); st.Keys != 20_000 || st.Bytes != int64(len(b)) || st.UsedMem != 12345 {
			t.Fatalf("%+v: loaded %+v, want 20000 keys, %d bytes, used-mem 12345", lim, st, len(b))
		}
		if steps < 3 {
			t.Fatalf("%+v: the load took %d steps, want several", lim, steps)
		}
		if g, w := dump(t, dst), dump(t, src); !maps.Equal(g, w) {
			t.Fatalf("%+v: loaded %d keys unlike the %d saved", lim, len(g), len(w))
		}
	}
}

// TestAbortWaitsForTheWriter: a save aborted after the walk encoded every
// key, while its writer still writes, is finished only once the writer
// that holds the file (the first, or at WriterIdle the rescuer Finished
// starts, which ends it at once) has removed its temporary file (a first
// writer a rescuer took over from writes, at most, its one buffer into the
// removed file and touches no name), so a SHUTDOWN's save that opens
// the same temporary file next cannot have it written, removed or renamed
// under it; the previous snapshot stays.
func TestAbortWaitsForTheWriter(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dump.rdb")
	if err := os.WriteFile(path, []byte("previous"), 0o644); err != nil {
		t.Fatal(err)
	}
	st := newStores(t, 1)[0]
	for i := range 20000 {
		st.Put([]byte(fmt.Sprintf("key:%06d", i)), []byte(strings.Repeat("v", 100)))
	}
	gate, writing := make(chan struct{}), make(chan struct{}, 1)
	beforeWrite = func(bool) {
		select {
		case writing <- struct{}{}:
		default:
		}
		<-gate
	}
	defer func() { beforeWrite = nil }()
	j, err := Begin([]DB{{0, st}}, Options{Path: path}, true)
	if err != nil {
		t.Fatal(err)
	}
	for !j.Step(1 << 20) {
	}
	<-writing // the writer holds a buffer, stopped before its write
	j.Abort()
	go func() {
		time.Sleep(50 * time.Millisecond)
		close(gate) // the write goes on, as a slow disk's would
	}()
	// SHUTDOWN's abortBackground: one Finished, which must wait for the writer.
	if done, err := j.Finished(); !done || !errors.Is(err, errAborted) {
		t.Fatalf("Finished after an abort with the writer still writing: done %v, %v; want done with errAborted", done, err)
	}
	if _, err := os.Stat(TempName(dir, os.Getpid())); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the temporary file is left after the abort: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "previous" {
		t.Fatalf("the previous snapshot changed: %q", b)
	}
}

// TestStarvedWriterGetsRescued saves with the writer at WriterIdle and its
// thread stopped before its second write, as a SCHED_IDLE thread that gets
// no CPU time would be, until the rescue: the loop's waits pass
// RescueAfter, a rescuer at the process's priority writes the rest (then
// the stopped write goes on, as the starved thread's would once it runs),
// and the file loads back whole. (A writer that is not stopped saves as
// well; whether it is rescued depends on the CPU time this machine leaves
// it, so that is only logged.)
func TestStarvedWriterGetsRescued(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: the writer runs at the process's priority and is never rescued")
	}
	st := newStores(t, 1)[0]
	const keys = 20000
	for i := range keys {
		st.Put([]byte(fmt.Sprintf("key:%07d", i)), []byte(strings.Repeat("v", 40)))
	}
	for _, starve := range []bool{false, true} {
		stopped := make(chan struct{})
		var firstWrites atomic.Int32
		beforeWrite = func(rescuer bool) {
			if starve && !rescuer && firstWrites.Add(1) == 2 {
				<-stopped
			}
		}
		path := filepath.Join(t.TempDir(), "dump.rdb")
		j, err := Begin([]DB{{0, st}}, Options{Path: path, WriterPriority: WriterIdle, MaxBacklog: 512 << 10}, true)
		if err != nil {
			t.Fatal(err)
		}
		start, released := time.Now(), false
		for {
			j.StepFor(20 * time.Microsecond)
			if starve && j.Rescued() && !released {
				released = true
				time.AfterFunc(10*time.Millisecond, func() { close(stopped) })
			}
			if done, err := j.Finished(); done {
				if err != nil {
					t.Fatal(err)
				}
				break
			}
			if time.Since(start) > 30*time.Second {
				t.Fatalf("writer stopped %v: the save did not end in 30 s (rescued %v)", starve, j.Rescued())
			}
			time.Sleep(20 * time.Microsecond) // the loop's rest
		}
		if !starve {
			close(stopped)
		}
		beforeWrite = nil
		if starve && !j.Rescued() {
			t.Fatal("the stopped writer was not rescued")
		}
		t.Logf("writer stopped %v: rescued %v", starve, j.Rescued())
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		got := newStores(t, 1)[0]
		if _, err := Load(bytes.NewReader(b), func(int) (*store.Store, error) { return got, nil }, LoadOptions{}); err != nil {
			t.Fatalf("writer stopped %v: loading the file: %v", starve, err)
		}
		if got.Len() != keys {
			t.Fatalf("writer stopped %v: the file holds %d keys, want %d", starve, got.Len(), keys)
		}
	}
}

// TestCopyOnWriteBurstPastTheQueue: with the writer held, writes ahead of
// the walk hand over more buffers than the queue holds (the rest wait in
// pending) and then stop; once the writer runs again the save must end
// (the walk, paused behind them, must flush them on) and hold the keys as
// they were when it began.
func TestCopyOnWriteBurstPastTheQueue(t *testing.T) {
	st := newStores(t, 1)[0]
	const keys = 40000
	old := strings.Repeat("o", 1000)
	for i := range keys {
		st.Put([]byte(fmt.Sprintf("key:%06d", i)), []byte(old))
	}
	want := dump(t, st)
	gate := make(chan struct{})
	var open sync.Once
	beforeWrite = func(bool) { <-gate }
	defer func() { open.Do(func() { close(gate) }); beforeWrite = nil }()
	path := filepath.Join(t.TempDir(), "dump.rdb")
	j, err := Begin([]DB{{0, st}}, Options{Path: path, WriterPriority: WriterNormal, NoCompression: true}, true)
	if err != nil {
		t.Fatal(err)
	}
	j.Step(1)
	for i := range keys { // ~40 MB handed over: more than the queue's 64 buffers
		st.Set(nil, []byte(fmt.Sprintf("key:%06d", i)), []byte("new"), store.SetOptions{})
	}
	if len(j.pipe.pending) == 0 {
		t.Fatalf("nothing waits in pending (backlog %d): the test misses the path", j.pipe.Backlog())
	}
	open.Do(func() { close(gate) })
	for deadline := time.Now().Add(20 * time.Second); ; {
		j.StepFor(20 * time.Microsecond)
		done, err := j.Finished()
		if err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the save did not end in 20 s after the writes stopped: %d buffers pending, backlog %d, queue empty %v",
				len(j.pipe.pending), j.pipe.Backlog(), j.pipe.queue.empty())
		}
		time.Sleep(20 * time.Microsecond)
	}
	if got := dump(t, loadInto(t, path, 1)[0]); !maps.Equal(got, want) {
		t.Fatalf("loaded %d keys unlike the %d of the cut", len(got), len(want))
	}
}
