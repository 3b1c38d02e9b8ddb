package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/cluster"
	"github.com/goblin-kv/goblin/proto/resp"
)

const (
	nodeA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1"
	nodeB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb2"
)

// twoNodes: this node (A) owns 0-8191, B owns 8192-16382, 16383 is
// nobody's.
const twoNodes = "epoch 3\nmyself " + nodeA + "\n" +
	"node " + nodeA + " tcp://127.0.0.1:7001 slots 0-8191\n" +
	"node " + nodeB + " tcp://127.0.0.1:7002 slots 8192-16382\n"

func clusterEngine(t *testing.T, o ClusterOptions) *Engine {
	t.Helper()
	c, err := cluster.Parse([]byte(twoNodes))
	if err != nil {
		t.Fatal(err)
	}
	if o.State, err = cluster.New(c); err != nil {
		t.Fatal(err)
	}
	e, _ := newEngine(t, Options{Cluster: o})
	return e
}

// keyIn returns a key of the form prefix:N hashing to a slot that pred
// accepts.
func keyIn(prefix string, pred func(uint16) bool) string {
	for i := 0; ; i++ {
		k := prefix + ":" + itoa(i)
		if pred(cluster.Slot([]byte(k))) {
			return k
		}
	}
}

func TestClusterRouting(t *testing.T) {
	e := clusterEngine(t, ClusterOptions{})
	s := NewSession(0, nil)
	mine := keyIn("k", func(x uint16) bool { return x < 8192 })
	theirs := keyIn("k", func(x uint16) bool { return x >= 8192 && x < 16383 })
	nobodys := keyIn("k", func(x uint16) bool { return x == 16383 })
	slot := itoa(int(cluster.Slot([]byte(theirs))))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"SET", mine, "v"}, "+OK"},
		{[]string{"GET", mine}, "$v"},
		{[]string{"GET", theirs}, "-MOVED " + slot + " 127.0.0.1:7002"},
		{[]string{"SET", theirs, "v"}, "-MOVED " + slot + " 127.0.0.1:7002"},
		{[]string{"GET", nobodys}, "-CLUSTERDOWN Hash slot not served"},
		{[]string{"MGET", mine, theirs}, "-CROSSSLOT Keys in request don't hash to the same slot"},
		{[]string{"MSET", "{u}a", "1", "{u}b", "2"}, moveOrOK("{u}")},
		{[]string{"MSET", "{u}a", "1", "x", "2"}, "-CROSSSLOT Keys in request don't hash to the same slot"},
		{[]string{"DEL", "{u}a", "{v}b"}, "-CROSSSLOT Keys in request don't hash to the same slot"},
		{[]string{"RENAME", "{u}a", "{v}b"}, "-CROSSSLOT Keys in request don't hash to the same slot"},
		{[]string{"HSET", "{u}h", "{v}f", "{w}v"}, mineOr("{u}", ":1")},
		{[]string{"SINTER", "{u}a", "{v}b"}, "-CROSSSLOT Keys in request don't hash to the same slot"},
		{[]string{"SUNIONSTORE", "{u}d", "{u}a", "{v}b"}, "-CROSSSLOT Keys in request don't hash to the same slot"},
		{[]string{"SMOVE", "{u}a", "{v}b", "m"}, "-CROSSSLOT Keys in request don't hash to the same slot"},
		{[]string{"SMOVE", "{u}a", "{u}b", "{v}m"}, mineOr("{u}", ":0")},
		{[]string{"LMOVE", "{u}a", "{v}b", "LEFT", "LEFT"}, "-CROSSSLOT Keys in request don't hash to the same slot"},
		{[]string{"LMOVE", "{u}a", "{u}b", "LEFT", "LEFT"}, mineOr("{u}", "nil")},
		{[]string{"RPOPLPUSH", "{u}a", "{v}b"}, "-CROSSSLOT Keys in request don't hash to the same slot"},
		// keynum commands: only the counted keys are keys ("{v}x" after them is not).
		{[]string{"ZUNION", "2", "{u}a", "{v}b"}, "-CROSSSLOT Keys in request don't hash to the same slot"},
		{[]string{"ZUNION", "1", "{u}a", "WEIGHTS", "{v}x"}, mineOr("{u}", "-ERR weight value is not a float")},
		{[]string{"ZUNIONSTORE", "{u}d", "2", "{u}a", "{v}b"}, "-CROSSSLOT Keys in request don't hash to the same slot"},
		{[]string{"ZINTERSTORE", "{u}d", "2", "{u}a", "{u}b"}, mineOr("{u}", ":0")},
		{[]string{"ZINTERCARD", "2", "{u}a", "{v}b"}, "-CROSSSLOT Keys in request don't hash to the same slot"},
		{[]string{"ZMPOP", "2", "{u}a", "{v}b", "MIN"}, "-CROSSSLOT Keys in request don't hash to the same slot"},
		{[]string{"ZMPOP", "1", "{u}a", "MIN", "COUNT", "{v}x"}, mineOr("{u}", "-ERR count should be greater than 0")},
		{[]string{"SINTERCARD", "2", "{u}a", "{v}b"}, "-CROSSSLOT Keys in request don't hash to the same slot"},
		{[]string{"LMPOP", "2", "{u}a", "{v}b", "LEFT"}, "-CROSSSLOT Keys in request don't hash to the same slot"},
		{[]string{"LMPOP", "2", "{u}a", "{u}b", "LEFT"}, mineOr("{u}", "nil")},
		{[]string{"ZRANGESTORE", "{u}d", "{v}s", "0", "1"}, "-CROSSSLOT Keys in request don't hash to the same slot"},
		{[]string{"PING"}, "+PONG"},
		{[]string{"SELECT", "1"}, "-ERR SELECT is not allowed in cluster mode"},
		{[]string{"CLUSTER", "KEYSLOT", "{user1000}.following"}, ":3443"},
		{[]string{"CLUSTER", "MYID"}, "$" + nodeA},
		{[]string{"CLUSTER", "COUNT-FAILURE-REPORTS", nodeB}, ":0"},
		{[]string{"CLUSTER", "COUNT-FAILURE-REPORTS", strings.Repeat("c", 40)}, "-ERR Unknown node " + strings.Repeat("c", 40)},
		{[]string{"CLUSTER", "SLOTS"}, "[[:0 :8191 [$127.0.0.1 :7001 $" + nodeA + " []]] [:8192 :16382 [$127.0.0.1 :7002 $" + nodeB + " []]]]"},
		{[]string{"CLUSTER", "ADDSLOTS", "16383"}, "-ERR goblin's cluster is configured by its file"},
		{[]string{"CLUSTER", "DELSLOTSRANGE", "1", "2"}, "-ERR goblin's cluster is configured by its file"},
		{[]string{"CLUSTER", "FLUSHSLOTS"}, "-ERR goblin's cluster is configured by its file"},
		{[]string{"CLUSTER", "SET-CONFIG-EPOCH", "5"}, "-ERR goblin's cluster is configured by its file"},
		{[]string{"CLUSTER", "BUMPEPOCH"}, "-ERR goblin's cluster is configured by its file"},
		{[]string{"CLUSTER", "REPLICATE", nodeB}, "-ERR a cluster configured by its file (--cluster-config) has no replicas"},
		{[]string{"CLUSTER", "REPLICAS", nodeB}, "-ERR a cluster configured by its file (--cluster-config) has no replicas"},
		{[]string{"CLUSTER", "SLAVES", nodeB}, "-ERR a cluster configured by its file (--cluster-config) has no replicas"},
		{[]string{"CLUSTER", "LINKS"}, "-ERR a cluster configured by its file (--cluster-config) has no cluster bus"},
		{[]string{"CLUSTER", "MEET", "127.0.0.1", "7002"}, "+OK"},
		{[]string{"CLUSTER", "MEET", "127.0.0.1", "7009"}, "-ERR 127.0.0.1:7009 is not in the cluster configuration file"},
		{[]string{"READONLY"}, "+OK"},
		{[]string{"CLUSTER", "TARGETS"}, "[[$" + nodeA + " [$tcp://127.0.0.1:7001]] [$" + nodeB + " [$tcp://127.0.0.1:7002]]]"},
		{[]string{"CLUSTER", "GETKEYSINSLOT", "16384", "1"}, "-ERR Invalid slot or number of keys"},
	} {
		if got := do(t, e, s, c.args...); !strings.HasPrefix(got, c.want) {
			t.Errorf("%q: %s, want %s", c.args, got, c.want)
		}
	}
	if got := do(t, e, s, "INFO", "cluster"); !strings.Contains(got, "cluster_enabled:1") {
		t.Errorf("INFO cluster: %s", got)
	}
	info := do(t, e, s, "CLUSTER", "INFO")
	for _, want := range []string{"cluster_state:fail", "cluster_slots_assigned:16383", "cluster_known_nodes:2", "cluster_current_epoch:3"} {
		if !strings.Contains(info, want) {
			t.Errorf("CLUSTER INFO lacks %s: %s", want, info)
		}
	}
	nodes := do(t, e, s, "CLUSTER", "NODES")
	if !strings.Contains(nodes, nodeA+" 127.0.0.1:7001@17001 myself,master - 0 0 3 connected 0-8191\n") ||
		!strings.Contains(nodes, nodeB+" 127.0.0.1:7002@17002 master - 0 0 3 connected 8192-16382\n") {
		t.Errorf("CLUSTER NODES: %s", nodes)
	}
}

// mineOr is ok when key's slot is this node's, else the start of a MOVED
// redirection: a hash, set or list command's other arguments are not keys.
func mineOr(key, ok string) string {
	if cluster.Slot([]byte(key)) < 8192 {
		return ok
	}
	return "-MOVED"
}

func moveOrOK(key string) string {
	if cluster.Slot([]byte(key)) < 8192 {
		return "+OK"
	}
	return "-MOVED"
}

// TestClusterStandalone: without a cluster, the cluster commands say so
// and keys are never redirected.
func TestClusterStandalone(t *testing.T) {
	e, _ := newEngine(t, Options{})
	s := NewSession(0, nil)
	for _, args := range [][]string{{"CLUSTER", "SLOTS"}, {"ASKING"}, {"READONLY"}} {
		if got := do(t, e, s, args...); got != "-ERR This instance has cluster support disabled" {
			t.Errorf("%q: %s", args, got)
		}
	}
	if got := do(t, e, s, "MSET", "a", "1", "b", "2"); got != "+OK" {
		t.Errorf("MSET across slots standalone: %s", got)
	}
	if got := do(t, e, s, "INFO", "cluster"); !strings.Contains(got, "cluster_enabled:0") {
		t.Errorf("INFO cluster: %s", got)
	}
}

// TestClusterMovingSlot walks one slot's move: ASK for missing keys while
// MIGRATING, ASKING to reach an IMPORTING slot, GETKEYSINSLOT and
// COUNTKEYSINSLOT, MIGRATE through a fake target, SETSLOT NODE.
func TestClusterMovingSlot(t *testing.T) {
	var sent []string
	e := clusterEngine(t, ClusterOptions{Migrate: func(addr string, _ time.Duration, cmds []byte, n int) ([]string, error) {
		sent = append(sent, addr+" "+strings.ReplaceAll(string(cmds), "\r\n", " "))
		return make([]string, n), nil
	}})
	s := NewSession(0, nil)
	slot := cluster.Slot([]byte("{b}")) // 3300, node A's
	ss := itoa(int(slot))
	do(t, e, s, "SET", "{b}1", "one")
	do(t, e, s, "SET", "{b}2", "two")
	if got := do(t, e, s, "CLUSTER", "COUNTKEYSINSLOT", ss); got != ":2" {
		t.Fatalf("COUNTKEYSINSLOT %s", got)
	}
	do(t, e, s, "SET", "{b}3", "three") // written after the index was built
	do(t, e, s, "DEL", "{b}2")
	if got := do(t, e, s, "CLUSTER", "GETKEYSINSLOT", ss, "10"); got != "[${b}1 ${b}3]" {
		t.Fatalf("GETKEYSINSLOT %s", got)
	}
	if got := do(t, e, s, "CLUSTER", "SETSLOT", ss, "MIGRATING", nodeB); got != "+OK" {
		t.Fatal(got)
	}
	if got := do(t, e, s, "GET", "{b}1"); got != "$one" {
		t.Fatalf("GET of a present key while migrating: %s", got)
	}
	if got := do(t, e, s, "GET", "{b}9"); got != "-ASK "+ss+" 127.0.0.1:7002" {
		t.Fatalf("GET of a missing key while migrating: %s", got)
	}
	if got := do(t, e, s, "MGET", "{b}1", "{b}9"); !strings.HasPrefix(got, "-TRYAGAIN") {
		t.Fatalf("MGET of present and missing keys while migrating: %s", got)
	}
	if nodes := do(t, e, s, "CLUSTER", "NODES"); !strings.Contains(nodes, "["+ss+"->-"+nodeB+"]") {
		t.Fatalf("CLUSTER NODES does not show the migrating slot: %s", nodes)
	}
	if got := do(t, e, s, "MIGRATE", "127.0.0.1", "7002", "", "0", "5000", "REPLACE", "KEYS", "{b}1", "{b}3", "{b}9"); got != "+OK" {
		t.Fatalf("MIGRATE: %s", got)
	}
	if len(sent) != 1 || !strings.HasPrefix(sent[0], "127.0.0.1:7002 *5 $14 RESTORE-ASKING $4 {b}1 $1 0 ") || strings.Count(sent[0], "RESTORE-ASKING") != 2 {
		t.Fatalf("MIGRATE sent %q", sent)
	}
	if got := do(t, e, s, "CLUSTER", "COUNTKEYSINSLOT", ss); got != ":0" {
		t.Fatalf("keys left after MIGRATE: %s", got)
	}
	do(t, e, s, "SET", "{c}4", "four")
	sent = nil
	if got := do(t, e, s, "MIGRATE", "127.0.0.1", "7002", "{c}4", "0", "5000", "COPY", "AUTH2", "u", "pw"); got != "+OK" {
		t.Fatalf("MIGRATE COPY AUTH2: %s", got)
	}
	if len(sent) != 1 || !strings.HasPrefix(sent[0], "127.0.0.1:7002 *3 $4 AUTH $1 u $2 pw *4 $14 RESTORE-ASKING $4 {c}4 ") {
		t.Fatalf("MIGRATE AUTH2 sent %q", sent)
	}
	if got := do(t, e, s, "GET", "{c}4"); got != "$four" {
		t.Fatalf("MIGRATE COPY removed the key: %s", got)
	}
	if got := do(t, e, s, "MIGRATE", "127.0.0.1", "7002", "{c}4", "0", "5000", "KEYS", "{c}4"); !strings.Contains(got, "must be set to the empty string") {
		t.Fatalf("MIGRATE with a key and KEYS: %s", got)
	}
	do(t, e, s, "DEL", "{c}4")
	if got := do(t, e, s, "MIGRATE", "127.0.0.1", "7002", "{b}1", "0", "5000"); got != "+NOKEY" {
		t.Fatalf("MIGRATE of nothing: %s", got)
	}
	if got := do(t, e, s, "CLUSTER", "SETSLOT", ss, "NODE", nodeB); got != "+OK" {
		t.Fatal(got)
	}
	if got := do(t, e, s, "GET", "{b}1"); got != "-MOVED "+ss+" 127.0.0.1:7002" {
		t.Fatalf("GET after the move: %s", got)
	}
	// Back again: importing, reachable only after ASKING, and for one command.
	if got := do(t, e, s, "CLUSTER", "SETSLOT", ss, "IMPORTING", nodeB); got != "+OK" {
		t.Fatal(got)
	}
	if got := do(t, e, s, "SET", "{b}1", "back"); !strings.HasPrefix(got, "-MOVED") {
		t.Fatalf("SET to an importing slot without ASKING: %s", got)
	}
	do(t, e, s, "ASKING")
	if got := do(t, e, s, "SET", "{b}1", "back"); got != "+OK" {
		t.Fatalf("SET to an importing slot after ASKING: %s", got)
	}
	if got := do(t, e, s, "GET", "{b}1"); !strings.HasPrefix(got, "-MOVED") {
		t.Fatalf("ASKING lasted past one command: %s", got)
	}
	if got := do(t, e, s, "CLUSTER", "INFO"); !strings.Contains(got, "cluster_current_epoch:4") {
		t.Fatalf("SETSLOT NODE did not raise the epoch: %s", got)
	}
}

// TestMigrateWireFormat: the RESTORE MIGRATE sends is one a goblin engine
// accepts, value and time to live included.
func TestMigrateWireFormat(t *testing.T) {
	src, _ := newEngine(t, Options{})
	dst, _ := newEngine(t, Options{})
	s, d := NewSession(0, nil), NewSession(0, nil)
	do(t, src, s, "SET", "k", "value")
	do(t, src, s, "PEXPIRE", "k", "100000")
	var carried []byte
	src.migrator = nil
	p, _, ok := src.dumpPayload([]byte("k"))
	if !ok {
		t.Fatal("no payload")
	}
	carried = resp.AppendCommandString(nil, "RESTORE", "k", "100000", string(p))
	n, out, _ := dst.ServeStream(d, carried, nil)
	if n != len(carried) || string(out) != "+OK\r\n" {
		t.Fatalf("RESTORE of MIGRATE's payload: %q", out)
	}
	if got := do(t, dst, d, "GET", "k"); got != "$value" {
		t.Fatalf("restored value %s", got)
	}
}

// BenchmarkServeCluster is BenchmarkServe's GET and SET over RESP in
// cluster mode, on a key this node owns: what routing (the slot hash and
// the owner check) adds to a request.
func BenchmarkServeCluster(b *testing.B) {
	c, _ := cluster.Parse([]byte("epoch 1\nmyself " + nodeA + "\nnode " + nodeA + " tcp://127.0.0.1:7001 slots 0-16383\n"))
	st, err := cluster.New(c)
	if err != nil {
		b.Fatal(err)
	}
	for _, h := range hotRequests()[1:] {
		b.Run(h.name+"/RESP", func(b *testing.B) {
			e, _ := newEngine(b, Options{Cluster: ClusterOptions{State: st}})
			s := NewSession(0, nil)
			do(b, e, s, "SET", "key:000000000042", "0123456789abcdef")
			out := make([]byte, 0, 256)
			b.ReportAllocs()
			for b.Loop() {
				_, out, _ = e.ServeStream(s, h.resp, out[:0])
			}
			if string(out) != h.wantRESP {
				b.Fatalf("reply %q", out)
			}
		})
	}
}

// BenchmarkSlotIndex measures CLUSTER COUNTKEYSINSLOT's costs at 1 M keys:
// Build is the first query (one scan of the store, every key copied into
// the index), Query a query of a built index (one slot's ~61 keys checked
// against the store), Write what a SET in cluster mode pays once the index
// exists (its key appended) beyond BenchmarkServeCluster's SET.
func BenchmarkSlotIndex(b *testing.B) {
	c, _ := cluster.Parse([]byte("epoch 1\nmyself " + nodeA + "\nnode " + nodeA + " tcp://127.0.0.1:7001 slots 0-16383\n"))
	const keys = 1_000_000
	load := func(b *testing.B) (*Engine, *Session) {
		st, err := cluster.New(c)
		if err != nil {
			b.Fatal(err)
		}
		e, _ := newEngine(b, Options{Cluster: ClusterOptions{State: st}})
		s := NewSession(0, nil)
		var in []byte
		for i := range keys {
			in = resp.AppendCommandString(in, "SET", "key:"+itoa(i), "0123456789abcdef")
			if len(in) > 1<<20 || i == keys-1 {
				if _, _, closed := e.ServeStream(s, in, nil); closed {
					b.Fatal("closed")
				}
				in = in[:0]
			}
		}
		return e, s
	}
	b.Run("Build", func(b *testing.B) {
		e, s := load(b)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			e.cl.index = slotIndex{}
			if got := do(b, e, s, "CLUSTER", "COUNTKEYSINSLOT", "0"); got == ":0" {
				b.Fatal("no keys in slot 0")
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/keys, "ns/key")
	})
	b.Run("Query", func(b *testing.B) {
		e, s := load(b)
		do(b, e, s, "CLUSTER", "COUNTKEYSINSLOT", "0")
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			do(b, e, s, "CLUSTER", "COUNTKEYSINSLOT", itoa(i%cluster.Slots))
		}
	})
	b.Run("Write", func(b *testing.B) {
		e, s := load(b)
		do(b, e, s, "CLUSTER", "COUNTKEYSINSLOT", "0")
		set := resp.AppendCommandString(nil, "SET", "key:000000000042", "0123456789abcdef")
		out := make([]byte, 0, 64)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if i%(64<<10) == 0 { // the index is dropped after its size in appends: keep it built
				b.StopTimer()
				do(b, e, s, "CLUSTER", "COUNTKEYSINSLOT", "0")
				b.StartTimer()
			}
			_, out, _ = e.ServeStream(s, set, out[:0])
		}
	})
}
