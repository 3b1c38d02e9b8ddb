package rdb

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
)

// The live tests run the real redis-server and redis-check-rdb 7.0 (the
// Debian packages scripts/setup.sh installs). Without them they skip,
// except under CI=true, where a missing tool fails the test. With -update
// they also rewrite the golden files under testdata/, which the unit tests
// read when Redis is not there.

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ from the live tests")

// redisPeer is a redis-server on a unix socket in its own temp dir.
type redisPeer struct {
	dir, sock string
	cmd       *exec.Cmd
	logPath   string
}

// log returns what redis-server has logged so far (it logs to a file, so
// reading it races with nothing).
func (p *redisPeer) log() string {
	b, _ := os.ReadFile(p.logPath)
	return string(b)
}

// startRedis starts redis-server with its working dir in dir, loading
// dir/dbfile if it exists, with extra config directives.
func startRedis(t *testing.T, dir, dbfile string, extra ...string) *redisPeer {
	t.Helper()
	bin := testkit.Need(t, "redis-server", "the live RDB tests")
	p := &redisPeer{dir: dir, sock: filepath.Join(dir, "redis.sock"), logPath: filepath.Join(dir, "redis.log")}
	args := append([]string{"--port", "0", "--unixsocket", p.sock, "--dir", dir, "--dbfilename", dbfile,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--databases", "16"}, extra...)
	p.cmd = exec.Command(bin, args...)
	logf, err := os.Create(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	})
	c := p.client(0)
	err = testkit.Poll(10*time.Second, "redis-server to answer PING on "+p.sock, func() (bool, string) {
		err := c.Ping(context.Background()).Err()
		return err == nil, fmt.Sprint(err)
	})
	if err != nil {
		t.Fatalf("%v; log:\n%s", err, p.log())
	}
	return p
}

func (p *redisPeer) client(db int) *redis.Client {
	return redis.NewClient(&redis.Options{Network: "unix", Addr: p.sock, DB: db, Protocol: 2, DisableIdentity: true, MaxRetries: -1})
}

// contents reads every key of database db through plain commands (no
// DUMP) into the shape modelMap gives.
func (p *redisPeer) contents(t *testing.T, db int) map[string]string {
	t.Helper()
	ctx := context.Background()
	c := p.client(db)
	defer c.Close()
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, k := range keys {
		var v Value
		typ, err := c.Type(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		switch typ {
		case "string":
			s, err := c.Get(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			v = Value{Kind: KindString, Str: []byte(s)}
		case "list":
			items, err := c.LRange(ctx, k, 0, -1).Result()
			if err != nil {
				t.Fatal(err)
			}
			v = Value{Kind: KindList, Items: strs(items...)}
		case "set":
			items, err := c.SMembers(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			v = Value{Kind: KindSet, Items: strs(items...)}
		case "hash":
			m, err := c.HGetAll(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			v = Value{Kind: KindHash}
			for f, val := range m {
				v.Items = append(v.Items, []byte(f), []byte(val))
			}
		case "zset":
			zs, err := c.ZRangeWithScores(ctx, k, 0, -1).Result()
			if err != nil {
				t.Fatal(err)
			}
			v = Value{Kind: KindZSet}
			for _, z := range zs {
				v.Items = append(v.Items, []byte(z.Member.(string)))
				v.Scores = append(v.Scores, z.Score)
			}
		default:
			t.Fatalf("key %q: type %s", k, typ)
		}
		exp, err := c.Do(ctx, "PEXPIRETIME", k).Int64()
		if err != nil {
			t.Fatal(err)
		}
		if exp == -1 {
			exp = NoExpiry
		} else {
			pttl, err := c.PTTL(ctx, k).Result()
			if err != nil || pttl <= 0 {
				t.Fatalf("key %q: PEXPIRETIME %d but PTTL %v (%v)", k, exp, pttl, err)
			}
		}
		out[fmt.Sprintf("%d/%s", db, k)] = fmt.Sprintf("exp=%d %s", exp, canon(&v))
	}
	return out
}

func (p *redisPeer) allContents(t *testing.T, dbs ...int) map[string]string {
	out := map[string]string{}
	for _, db := range dbs {
		for k, v := range p.contents(t, db) {
			out[k] = v
		}
	}
	return out
}

// load writes the model into a running Redis with ordinary commands.
func (p *redisPeer) load(t *testing.T, m []modelKey) {
	t.Helper()
	ctx := context.Background()
	for _, k := range m {
		if k.expiry != NoExpiry && k.expiry < time.Now().UnixMilli() {
			continue
		}
		c := p.client(k.db)
		args := []any{}
		var cmd string
		switch k.v.Kind {
		case KindString:
			cmd, args = "SET", append(args, k.v.Str)
		case KindList:
			cmd = "RPUSH"
			for _, it := range k.v.Items {
				args = append(args, it)
			}
		case KindSet:
			cmd = "SADD"
			for _, it := range k.v.Items {
				args = append(args, it)
			}
		case KindHash:
			cmd = "HSET"
			for _, it := range k.v.Items {
				args = append(args, it)
			}
		case KindZSet:
			cmd = "ZADD"
			for i, it := range k.v.Items {
				args = append(args, strconv.FormatFloat(k.v.Scores[i], 'g', -1, 64), it)
			}
		}
		if err := c.Do(ctx, append([]any{cmd, k.key}, args...)...).Err(); err != nil {
			t.Fatalf("%s %s: %v", cmd, k.key, err)
		}
		if k.expiry != NoExpiry {
			if err := c.PExpireAt(ctx, k.key, time.UnixMilli(k.expiry)).Err(); err != nil {
				t.Fatal(err)
			}
		}
		c.Close()
	}
}

func liveModel() []modelKey {
	var out []modelKey
	for _, k := range model() {
		if k.expiry == NoExpiry || k.expiry > time.Now().UnixMilli() {
			out = append(out, k)
		}
	}
	return out
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRedisCheckRDBAcceptsEncoder runs redis-check-rdb, which loads every
// value with Redis's own deep integrity checks, on the Encoder's files.
func TestRedisCheckRDBAcceptsEncoder(t *testing.T) {
	bin := testkit.Need(t, "redis-check-rdb", "the live RDB tests")
	dir := t.TempDir()
	variants := map[string]EncoderOptions{
		"default":       {},
		"nocompression": {NoCompression: true},
		"nochecksum":    {NoChecksum: true},
		// Tiny limits: every collection in its plain form, lists in many nodes.
		"plainforms": {Limits: Limits{HashMaxListpackEntries: 1, ZSetMaxListpackEntries: 1, SetMaxIntsetEntries: 1, ListMaxListpackSize: 64}},
	}
	for name, opts := range variants {
		path := filepath.Join(dir, name+".rdb")
		writeFile(t, path, writeModel(t, model(), opts))
		out, err := exec.Command(bin, path).CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("RDB looks OK")) {
			t.Errorf("%s: redis-check-rdb failed (%v):\n%s", name, err, out)
			continue
		}
		want := fmt.Sprintf("%d keys read", len(model()))
		if !bytes.Contains(out, []byte(want)) || !bytes.Contains(out, []byte("1 already expired")) {
			t.Errorf("%s: redis-check-rdb output lacks %q / 1 already expired:\n%s", name, want, out)
		}
	}
}

// TestRedisLoadsEncoderFile starts redis-server on a file the Encoder wrote
// and reads every key back with plain commands.
func TestRedisLoadsEncoderFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "goblin.rdb"), writeModel(t, model(), EncoderOptions{}))
	p := startRedis(t, dir, "goblin.rdb")
	diffMaps(t, "redis-server holds", p.allContents(t, 0, 3), modelMap(liveModel(), false))
	// Redis keeps each collection in the form the Encoder chose.
	want := map[string]string{
		"l:small": "quicklist", "set:int16": "intset", "set:int64": "intset", "set:strings": "hashtable",
		"set:manyints": "hashtable", "h:small": "listpack", "h:many": "hashtable", "h:longvalue": "hashtable",
		"z:small": "listpack", "z:many": "skiplist", "z:longmember": "skiplist", "s:int16": "int",
	}
	c := p.client(0)
	defer c.Close()
	for k, w := range want {
		got, err := c.ObjectEncoding(context.Background(), k).Result()
		if err != nil || got != w {
			t.Errorf("OBJECT ENCODING %s = %q (%v), want %q", k, got, err, w)
		}
	}
	if !strings.Contains(p.log(), "keys expired: 1") {
		t.Errorf("redis-server did not report the expired key dropped; log:\n%s", p.log())
	}
}

// redisConfigs are the forms in which Redis is made to hold the model
// before it writes a snapshot: the default limits, tiny limits (every
// collection in its plain form, lists in one-element nodes) and
// compressed quicklist nodes (written as LZF blobs).
var redisConfigs = map[string][]string{
	"default":    nil,
	"plainforms": {"--hash-max-listpack-entries", "0", "--zset-max-listpack-entries", "0", "--set-max-intset-entries", "0", "--list-max-listpack-size", "1"},
	"compressed": {"--list-compress-depth", "1", "--list-max-listpack-size", "4"},
	"nolzf":      {"--rdbcompression", "no", "--rdbchecksum", "no"},
}

// TestDecoderReadsRedisSnapshot makes redis-server SAVE the model in each
// configuration and decodes the file. With -update the files become the
// golden files TestGoldenRedisSnapshots reads.
func TestDecoderReadsRedisSnapshot(t *testing.T) {
	for name, extra := range redisConfigs {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := startRedis(t, dir, "dump.rdb", extra...)
			p.load(t, liveModel())
			if err := p.client(0).Save(context.Background()).Err(); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
			if err != nil {
				t.Fatal(err)
			}
			checkRedisSnapshot(t, name, data)
			if *update {
				writeFile(t, filepath.Join("testdata", "redis-"+name+".rdb"), data)
			}
		})
	}
}

// checkRedisSnapshot decodes a snapshot Redis wrote of the live model and
// checks it holds the model and the encodings its configuration forces.
func checkRedisSnapshot(t *testing.T, name string, data []byte) {
	t.Helper()
	var aux []string
	got, types, d := decodeAll(t, data, DecoderOptions{OnAux: func(k, v []byte) { aux = append(aux, string(k)) }})
	diffMaps(t, name, got, modelMap(liveModel(), true))
	if !strings.Contains(strings.Join(aux, ","), "redis-ver,redis-bits,ctime,used-mem") {
		t.Errorf("%s: AUX fields %v", name, aux)
	}
	if d.Version() != 10 || d.Stats().Checksum != (name != "nolzf") {
		t.Errorf("%s: version %d, stats %+v", name, d.Version(), d.Stats())
	}
	seen := map[byte]bool{}
	for _, ty := range types {
		seen[ty] = true
	}
	var want []byte
	switch name {
	case "plainforms":
		want = []byte{typeString, typeListQuicklist2, typeSet, typeHash, typeZSet2}
	default:
		want = []byte{typeString, typeListQuicklist2, typeSetIntset, typeSet, typeHashListpack, typeHash, typeZSetListpack, typeZSet2}
	}
	for _, ty := range want {
		if !seen[ty] {
			t.Errorf("%s: no key of type %s in Redis's snapshot", name, TypeName(ty))
		}
	}
}

// TestDumpRestoreWithRedis: the Encoder's payloads RESTOREd into Redis
// hold the model; Redis's DUMP payloads decode to the model; for the
// values whose in-memory form is ordered (strings, intsets, listpacks,
// small lists) the payloads are the same bytes.
func TestDumpRestoreWithRedis(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := startRedis(t, dir, "dump.rdb")
	m := liveModel()
	enc := NewEncoder(nil, EncoderOptions{})
	var dec Decoder
	for _, k := range m {
		c := p.client(k.db)
		payload, err := enc.AppendDump(nil, &k.v)
		if err != nil {
			t.Fatal(err)
		}
		ttl := int64(0)
		args := []any{"RESTORE", k.key, ttl, payload}
		if k.expiry != NoExpiry {
			args = []any{"RESTORE", k.key, k.expiry, payload, "ABSTTL"}
		}
		if err := c.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("RESTORE %s: %v", k.key, err)
		}
		dump, err := c.Dump(ctx, k.key).Result()
		if err != nil {
			t.Fatal(err)
		}
		v, err := dec.DecodeDump([]byte(dump))
		if err != nil {
			t.Fatalf("DecodeDump(DUMP %s): %v", k.key, err)
		}
		if canon(v) != canon(&k.v) {
			t.Errorf("DUMP %s decodes to %.200s, want %.200s", k.key, canon(v), canon(&k.v))
		}
		ordered := dump[0] == typeString || dump[0] == typeSetIntset || dump[0] == typeHashListpack ||
			dump[0] == typeZSetListpack || k.key == "l:small" || k.key == "l:db3"
		if ordered && dump != string(payload) {
			t.Errorf("DUMP %s:\n redis  % x\n goblin % x", k.key, dump, payload)
		}
		c.Close()
	}
	diffMaps(t, "after RESTORE", p.allContents(t, 0, 3), modelMap(m, false))
	// Redis's own rules on our footer: a later version is refused.
	c := p.client(0)
	defer c.Close()
	payload, _ := AppendDump(nil, &Value{Kind: KindString, Str: []byte("v")})
	payload[len(payload)-10] = 11
	crc := CRC64(0, payload[:len(payload)-8])
	for i := range 8 {
		payload[len(payload)-8+i] = byte(crc >> (8 * i))
	}
	err := c.Do(ctx, "RESTORE", "v11", 0, payload).Err()
	if err == nil || !strings.Contains(err.Error(), "DUMP payload version or checksum are wrong") {
		t.Errorf("RESTORE of a version 11 payload: %v", err)
	}
	if _, err := dec.DecodeDump(payload); err == nil {
		t.Error("DecodeDump accepted a version 11 payload")
	}
}

// TestDecoderSkipsRedisStream: a snapshot in which Redis saved a stream
// with a consumer group, pending entries and consumers is refused with the
// stream's key named, or read with the stream skipped and counted.
func TestDecoderSkipsRedisStream(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := startRedis(t, dir, "dump.rdb")
	c := p.client(0)
	defer c.Close()
	for _, cmd := range [][]any{
		{"SET", "before", "1"},
		{"XADD", "events", "1-1", "f", "v"},
		{"XADD", "events", "2-1", "f", "w", "g", "x"},
		{"XADD", "events", "3-1", "f", "y"},
		{"XDEL", "events", "2-1"},
		{"XGROUP", "CREATE", "events", "workers", "0"},
		{"XREADGROUP", "GROUP", "workers", "alice", "COUNT", "1", "STREAMS", "events", ">"},
		{"XREADGROUP", "GROUP", "workers", "bob", "STREAMS", "events", ">"},
		{"RPUSH", "after", "a", "b"},
		{"SAVE"},
	} {
		if err := c.Do(ctx, cmd...).Err(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	checkStreamSnapshot(t, data)
	if *update {
		writeFile(t, filepath.Join("testdata", "redis-stream.rdb"), data)
	}
}

func checkStreamSnapshot(t *testing.T, data []byte) {
	t.Helper()
	d := NewDecoder(bytes.NewReader(data), DecoderOptions{})
	for d.Next() {
	}
	var e *Error
	if !errors.As(d.Err(), &e) || !errors.Is(e, ErrUnsupported) || string(e.Key) != "events" || e.Type != "stream" {
		t.Fatalf("without SkipUnsupported: %v", d.Err())
	}
	got, _, d := decodeAll(t, data, DecoderOptions{SkipUnsupported: true})
	want := map[string]string{
		"0/before": fmt.Sprintf("exp=%d string:%q", int64(NoExpiry), "1"),
		"0/after":  fmt.Sprintf("exp=%d list:%q,%q,", int64(NoExpiry), "a", "b"),
	}
	diffMaps(t, "stream skipped", got, want)
	if st := d.Stats(); st.Skipped != 1 || !st.Checksum {
		t.Errorf("stats %+v, want 1 skipped and a checked CRC", st)
	}
}
