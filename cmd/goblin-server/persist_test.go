package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
	"github.com/goblin-kv/goblin/rdb"
)

// Persistence end to end: goblin-server and redis-server 7.0 exchange
// snapshots both ways, redis-check-rdb passes goblin's, a BGSAVE killed at
// random points or run out of disk always leaves the previous snapshot
// loadable, SHUTDOWN and SIGTERM save.

// model is a dataset: per database, key → value and absolute expiry (unix
// ms, 0 none).
type model map[int]map[string]modelEntry

type modelEntry struct {
	val string
	exp int64
}

// newModel holds strings of every encoding a snapshot has (integers of each
// width, past 32 bits, non-canonical numbers, LZF-compressible and
// incompressible long strings, binary, empty, 100 KB), some with TTLs, in
// databases 0, 3 and 15.
func newModel() model {
	rng := rand.New(rand.NewPCG(3, 30))
	noise := make([]byte, 500)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	vals := []string{"", "0", "-1", "127", "-128", "32767", "40000", "2147483647", "2147483648", "-9223372036854775808",
		"007", "+5", "1.5", strings.Repeat("a", 40), strings.Repeat("hello ", 500), "\x00\xff\r\n", string(noise),
		strings.Repeat("z", 100_000)}
	m := model{}
	exp := time.Now().Add(time.Hour).UnixMilli()
	for _, db := range []int{0, 3, 15} {
		m[db] = map[string]modelEntry{}
		for i, v := range vals {
			e := modelEntry{val: v}
			if i%3 == 1 {
				e.exp = exp + int64(i)
			}
			m[db][fmt.Sprintf("db%d:k%d", db, i)] = e
		}
		for i := range 200 {
			m[db][fmt.Sprintf("db%d:n%d", db, i)] = modelEntry{val: strconv.Itoa(i * 7919)}
		}
	}
	return m
}

func (m model) write(t *testing.T, opts *redis.Options) {
	t.Helper()
	ctx := context.Background()
	for db, keys := range m {
		o := *opts
		o.DB = db
		c := redis.NewClient(&o)
		// One pipeline per database: a round trip per command cost up to
		// 30 s of a subtest on a loaded machine, waiting on nothing.
		p := c.Pipeline()
		for k, e := range keys {
			p.Set(ctx, k, e.val, 0)
			if e.exp != 0 {
				p.PExpireAt(ctx, k, time.UnixMilli(e.exp))
			}
		}
		cmds, err := p.Exec(ctx)
		for _, cmd := range cmds {
			if cmd.Err() != nil {
				t.Fatalf("db %d: %v: %v", db, cmd.Args(), cmd.Err())
			}
		}
		if err != nil {
			t.Fatalf("db %d: %v", db, err)
		}
		c.Close()
	}
}

// check reads every database of the server and compares it with m.
func (m model) check(t *testing.T, who string, opts *redis.Options) {
	t.Helper()
	ctx := context.Background()
	for db := range 16 {
		o := *opts
		o.DB = db
		c := redis.NewClient(&o)
		n, err := c.DBSize(ctx).Result()
		if err != nil {
			t.Fatalf("%s: DBSIZE in db %d: %v", who, db, err)
		}
		if n != int64(len(m[db])) {
			t.Errorf("%s: db %d holds %d keys, want %d", who, db, n, len(m[db]))
		}
		// Pipelined, as write is: GET and PEXPIRETIME of every key.
		type read struct {
			key string
			e   modelEntry
			get *redis.StringCmd
			at  *redis.Cmd
		}
		var reads []read
		p := c.Pipeline()
		for k, e := range m[db] {
			reads = append(reads, read{k, e, p.Get(ctx, k), p.Do(ctx, "PEXPIRETIME", k)})
		}
		if len(reads) > 0 {
			p.Exec(ctx) // each command's own error is checked below
		}
		for _, r := range reads {
			v, err := r.get.Result()
			if err != nil || v != r.e.val {
				t.Errorf("%s: db %d: GET %q = %.40q, %v; want %.40q", who, db, r.key, v, err, r.e.val)
			}
			at, err := r.at.Int64()
			want := r.e.exp
			if want == 0 {
				want = -1
			}
			if err != nil || at != want {
				t.Errorf("%s: db %d: PEXPIRETIME %q = %d, %v; want %d", who, db, r.key, at, err, want)
			}
		}
		c.Close()
	}
}

// redisServer starts redis-server 7.0 on a Unix socket with its
// snapshot in dir.
func redisServer(t testing.TB, dir string, extra ...string) (*testproc.Proc, *redis.Options) {
	t.Helper()
	bin := testkit.Need(t, "redis-server", "the Redis whose snapshots goblin exchanges")
	sock := filepath.Join(t.TempDir(), "redis.sock")
	args := append([]string{"--port", "0", "--unixsocket", sock, "--dir", dir, "--dbfilename", "dump.rdb",
		"--save", "", "--appendonly", "no", "--daemonize", "no"}, extra...)
	p := testproc.Start(t, bin, args...)
	opts := &redis.Options{Network: "unix", Addr: sock, PoolSize: 1}
	c := redis.NewClient(opts)
	defer c.Close()
	testkit.Eventually(t, startTimeout, "redis-server answering PING (and done loading)", func() (bool, string) {
		err := c.Ping(context.Background()).Err()
		return err == nil, fmt.Sprint(err)
	})
	return p, opts
}

func goblinOpts(s *srv) *redis.Options {
	return &redis.Options{Network: "unix", Addr: s.sock, PoolSize: 1}
}

func checkRDB(t *testing.T, path string) {
	t.Helper()
	out, err := exec.Command(testkit.Need(t, "redis-check-rdb", "Redis's own check of goblin's snapshots"), path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "RDB looks OK!") {
		t.Fatalf("redis-check-rdb %s: %v\n%s", path, err, out)
	}
}

// TestLoadsRedisSnapshot: goblin-server started on a snapshot redis-server
// 7.0 saved holds the same keys, values, expiries and databases; a key
// that had expired by the time goblin loads is dropped.
func TestLoadsRedisSnapshot(t *testing.T) {
	t.Parallel() // its own processes, sockets and directories; it times nothing
	dir := t.TempDir()
	r, ropts := redisServer(t, dir)
	m := newModel()
	m.write(t, ropts)
	c := redis.NewClient(ropts)
	ctx := context.Background()
	if err := c.Set(ctx, "short-lived", "x", 50*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	r.Stop(5 * time.Second)
	time.Sleep(60 * time.Millisecond)

	s := startServer(t, "--dir", dir)
	m.check(t, "goblin after loading Redis's snapshot", goblinOpts(s))
	line := s.p.WaitLog(t, `msg="DB loaded from disk"[^\n]*`, startTimeout)
	t.Logf("log: %s", line)
	if !strings.Contains(s.p.Log(), "expired_dropped=1") {
		t.Errorf("the expired key was not reported dropped:\n%s", s.p.Log())
	}
}

// TestRedisLoadsGoblinSnapshot: a snapshot goblin-server wrote with SAVE,
// with BGSAVE, with rdbcompression and rdbchecksum off, passes
// redis-check-rdb, and redis-server 7.0 started on it holds the same keys,
// values, expiries and databases; goblin-server restarted on it does too.
func TestRedisLoadsGoblinSnapshot(t *testing.T) {
	t.Parallel() // its own processes, sockets and directories; it times nothing
	m := newModel()
	for _, tc := range []struct {
		name string
		save []string
		args []string
	}{
		{"SAVE", []string{"SAVE"}, nil},
		{"BGSAVE", []string{"BGSAVE"}, nil},
		{"plain", []string{"SAVE"}, []string{"--rdbcompression", "no", "--rdbchecksum", "no"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := startServer(t, append([]string{"--dir", dir}, tc.args...)...)
			gopts := goblinOpts(s)
			m.write(t, gopts)
			c := redis.NewClient(gopts)
			ctx := context.Background()
			before, _ := c.LastSave(ctx).Result()
			res, err := c.Do(ctx, tc.save[0]).Text()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %s", tc.save[0], res)
			testkit.Eventually(t, 30*time.Second, "INFO persistence: rdb_bgsave_in_progress:0 and rdb_saves:1", func() (bool, string) {
				info, _ := c.Info(ctx, "persistence").Result()
				return strings.Contains(info, "rdb_bgsave_in_progress:0") && strings.Contains(info, "rdb_saves:1"), info
			})
			info, _ := c.Info(ctx, "persistence").Result()
			if !strings.Contains(info, "rdb_last_bgsave_status:ok") || !strings.Contains(info, "rdb_changes_since_last_save:0") {
				t.Errorf("INFO persistence after the save:\n%s", info)
			}
			if after, _ := c.LastSave(ctx).Result(); after < before {
				t.Errorf("LASTSAVE went from %d to %d", before, after)
			}
			c.Close()
			path := filepath.Join(dir, "dump.rdb")
			checkRDB(t, path)
			s.p.Stop(5 * time.Second)

			_, ropts := redisServer(t, dir)
			m.check(t, "redis-server on goblin's snapshot", ropts)
			s2 := startServer(t, "--dir", dir)
			m.check(t, "goblin restarted on its snapshot", goblinOpts(s2))
		})
	}
}

// flipLastBit returns s with the low bit of its last byte flipped. (Not
// s[:n-1] + string(s[n-1]^1): string of a byte is a rune's UTF-8, two bytes
// from 0x80 up, and for a last byte of 0xc3 the first of them is the byte
// that was there: the "corruption" then leaves the CRC whole.)
func flipLastBit(s string) string {
	b := []byte(s)
	b[len(b)-1] ^= 1
	return string(b)
}

// TestRefusesBadSnapshots: a truncated or corrupt file stops the start
// with the offset and the reason; a file holding a stream is refused naming
// the key and the type, and loaded without it with --rdb-skip-unsupported.
func TestRefusesBadSnapshots(t *testing.T) {
	t.Parallel() // its own processes, sockets and directories; it times nothing
	bin := testproc.Build(t, "./cmd/goblin-server")
	var b strings.Builder
	enc := rdb.NewEncoder(&b, rdb.EncoderOptions{})
	enc.WriteHeader()
	enc.SelectDB(0, 2, 0)
	enc.Write([]byte("s"), &rdb.Value{Kind: rdb.KindString, Str: []byte("v")}, rdb.NoExpiry)
	enc.Write([]byte("myzset"), &rdb.Value{Kind: rdb.KindZSet, Items: [][]byte{[]byte("a")}, Scores: []float64{1}}, rdb.NoExpiry)
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	good := b.String()
	b.Reset()
	streamFile, err := os.ReadFile(filepath.Join("..", "..", "rdb", "testdata", "redis-stream.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	stream := string(streamFile)
	enc = rdb.NewEncoder(&b, rdb.EncoderOptions{})
	enc.WriteHeader()
	enc.SelectDB(0, 1, 0)
	enc.Write([]byte("s"), &rdb.Value{Kind: rdb.KindString, Str: []byte("v")}, rdb.NoExpiry)
	enc.Close()
	strs := b.String()
	run := func(file string, extra ...string) (int, string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), []byte(file), 0o644); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"--listen", "uds://" + filepath.Join(dir, "g.sock"), "--metrics", "off", "--dir", dir}, extra...)
		p := testproc.Start(t, bin, args...)
		if len(extra) > 0 {
			p.WaitLog(t, `msg=ready`, startTimeout)
			return 0, p.Log()
		}
		code, err := p.Wait(startTimeout)
		if err != nil {
			t.Fatalf("goblin-server did not exit on a bad snapshot: %v\n%s", err, p.Log())
		}
		return code, p.Log()
	}
	for _, tc := range []struct {
		name, file, want string
	}{
		{"truncated", good[:len(good)-12], "offset"},
		{"bad magic", "REDIX" + good[5:], "offset 0"},
		{"checksum", flipLastBit(strs), "CRC64"},
		{"stream", stream, `key \"events\" (stream): stream, a type goblin does not store`},
	} {
		code, log := run(tc.file)
		if code != 1 || !strings.Contains(log, tc.want) || !strings.Contains(log, "refusing to start") {
			t.Errorf("%s: exit %d, want 1 and a log naming %q:\n%s", tc.name, code, tc.want, log)
		}
	}
	if _, log := run(stream, "--rdb-skip-unsupported"); !strings.Contains(log, "skipped_unsupported=1") {
		t.Errorf("--rdb-skip-unsupported did not skip the stream:\n%s", log)
	}
}

// TestShutdownSaves: SHUTDOWN with a save policy saves and exits 0;
// SHUTDOWN NOSAVE does not save; SIGTERM with a policy saves; SHUTDOWN
// ABORT with nothing pending is refused as Redis refuses it.
func TestShutdownSaves(t *testing.T) {
	t.Parallel() // its own processes, sockets and directories; it times nothing
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		stop  func(*srv, *redis.Client)
		saved bool
	}{
		{"SHUTDOWN", func(_ *srv, c *redis.Client) { c.Do(ctx, "SHUTDOWN") }, true},
		{"SHUTDOWN NOSAVE", func(_ *srv, c *redis.Client) { c.Do(ctx, "SHUTDOWN", "NOSAVE") }, false},
		{"SIGTERM", func(s *srv, _ *redis.Client) { s.p.Signal(syscall.SIGTERM) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := startServer(t, "--dir", dir, "--save", "3600 1")
			c := redis.NewClient(goblinOpts(s))
			if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
				t.Fatal(err)
			}
			if err := c.Do(ctx, "SHUTDOWN", "ABORT").Err(); err == nil || err.Error() != "ERR No shutdown in progress." {
				t.Errorf("SHUTDOWN ABORT: %v", err)
			}
			tc.stop(s, c)
			c.Close()
			code, err := s.p.Wait(30 * time.Second)
			if err != nil || code != 0 {
				t.Fatalf("exit %d, %v; want 0\n%s", code, err, s.p.Log())
			}
			_, err = os.Stat(filepath.Join(dir, "dump.rdb"))
			if saved := err == nil; saved != tc.saved {
				t.Fatalf("snapshot written: %v, want %v\n%s", saved, tc.saved, s.p.Log())
			}
		})
	}
}

// countKeys loads a snapshot with the rdb package and counts its keys, or
// fails with why it cannot be read.
func countKeys(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	d := rdb.NewDecoder(f, rdb.DecoderOptions{})
	for d.Next() {
	}
	return d.Stats().Keys, d.Err()
}

// TestKilledBackgroundSaveKeepsPreviousSnapshot: goblin-server holding
// 200,000 keys (50,000 under the race detector) under a write load is sent
// SIGKILL at a random moment of a BGSAVE, many times; each time the
// snapshot on disk is a whole one (the first SAVE's, or a finished
// BGSAVE's) that loads, and a server restarted on it serves.
func TestKilledBackgroundSaveKeepsPreviousSnapshot(t *testing.T) {
	t.Parallel() // its own processes, sockets and directories; its kills land at moments relative to its own SAVE's length
	iterations := 12
	if testing.Short() {
		iterations = 3
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "dump.rdb")
	ctx := context.Background()
	// Under -race the test's own client and snapshot reader (countKeys,
	// each iteration) are the slow part, not the server (built without
	// it): a quarter of the keys still gives a BGSAVE that the kills land
	// inside, as its log line counts.
	keys := int64(200_000)
	if testkit.RaceEnabled {
		keys = 50_000
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	deadline := time.Now().Add(3 * time.Minute)
	midSave := 0
	killWithin := 400 * time.Millisecond
	defer func() { t.Logf("%d of the kills landed while the BGSAVE was running", midSave) }()
	for it := 0; it < iterations && time.Now().Before(deadline); it++ {
		s := startServer(t, "--dir", dir)
		c := redis.NewClient(goblinOpts(s))
		n, err := c.DBSize(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		if it == 0 {
			pipe := c.Pipeline()
			for i := range int(keys) {
				pipe.Set(ctx, fmt.Sprintf("key:%08d", i), strings.Repeat("v", 16), 0)
				if i%5000 == 4999 {
					if _, err := pipe.Exec(ctx); err != nil {
						t.Fatal(err)
					}
				}
			}
			began := time.Now()
			if err := c.Save(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			// A BGSAVE takes about as long as this SAVE (more under the
			// write load): the kills land within twice that.
			killWithin = max(2*time.Since(began), 20*time.Millisecond)
		} else if n != keys {
			t.Fatalf("iteration %d: the restarted server holds %d keys, want %d", it, n, keys)
		}
		// Overwrites while the save runs exercise copy-on-write.
		stop := make(chan struct{})
		wrng := rand.New(rand.NewPCG(rng.Uint64(), 2)) // the writer's own: rng is this goroutine's
		go func() {
			o := goblinOpts(s)
			o.MaxRetries = -1
			w := redis.NewClient(o)
			defer w.Close()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				w.Set(ctx, fmt.Sprintf("key:%08d", wrng.Int64N(keys)), strconv.Itoa(i), 0)
			}
		}()
		if err := c.BgSave(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(killWithin))))
		info, _ := c.Info(ctx, "persistence").Result()
		s.p.Cmd.Process.Kill()
		s.p.Wait(10 * time.Second)
		close(stop)
		c.Close()
		if strings.Contains(info, "rdb_bgsave_in_progress:1") {
			midSave++
		}
		got, err := countKeys(path)
		if err != nil || got != keys {
			t.Fatalf("iteration %d: after SIGKILL the snapshot has %d keys, %v; want %d, whole", it, got, err, keys)
		}
	}
}

// TestFullDiskKeepsServing: with the snapshot directory on a 2 MiB tmpfs
// mounted by the test, a BGSAVE of more than fits fails: the server goes
// on serving reads, reports the failure in INFO and the log, keeps the
// previous snapshot, and with a save policy refuses writes with MISCONF
// (stop-writes-on-bgsave-error) until CONFIG SET turns that off or a save
// succeeds.
func TestFullDiskKeepsServing(t *testing.T) {
	if os.Geteuid() != 0 {
		testkit.Missing(t, "mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", dir).CombinedOutput(); err != nil {
		testkit.Missing(t, "mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	ctx := context.Background()
	s := startServer(t, "--dir", dir, "--save", "3600 1000000000")
	c := redis.NewClient(goblinOpts(s))
	defer c.Close()
	if err := c.Set(ctx, "small", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	previous, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	noise := make([]byte, 1000)
	pipe := c.Pipeline()
	for i := range 5000 { // 5 MB of incompressible values
		for j := range noise {
			noise[j] = byte(rand.Uint32())
		}
		pipe.Set(ctx, fmt.Sprintf("big:%d", i), string(noise), 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.BgSave(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, "INFO persistence: rdb_last_bgsave_status:err", func() (bool, string) {
		info, _ := c.Info(ctx, "persistence").Result()
		return strings.Contains(info, "rdb_last_bgsave_status:err"), info
	})
	info, _ := c.Info(ctx, "persistence").Result()
	if !strings.Contains(info, "no space left on device") {
		t.Errorf("INFO persistence does not say why:\n%s", info)
	}
	s.p.WaitLog(t, `background saving failed`, 10*time.Second)
	if v, err := c.Get(ctx, "small").Result(); err != nil || v != "v" {
		t.Errorf("GET after the failed save: %q, %v", v, err)
	}
	if err := c.Set(ctx, "x", "y", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "MISCONF") {
		t.Errorf("SET after the failed save with a policy: %v, want MISCONF", err)
	}
	if err := c.ConfigSet(ctx, "stop-writes-on-bgsave-error", "no").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "x", "y", 0).Err(); err != nil {
		t.Errorf("SET with stop-writes-on-bgsave-error no: %v", err)
	}
	if now, err := os.ReadFile(filepath.Join(dir, "dump.rdb")); err != nil || string(now) != string(previous) {
		t.Fatalf("the previous snapshot changed: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the failed save left files behind: %v", entries)
	}
}
