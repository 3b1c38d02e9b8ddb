package engine

import (
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/argv"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/proto/sbe"
)

// allocCases are commands, or short cycles of commands that leave the
// store as they found it, served again and again. Each must allocate
// nothing per request once buffers have grown, in RESP and in SBE, except
// those named in allocExceptions.
var allocCases = [][]string{
	{"GET k"}, {"SET k v"}, {"INCR n"}, {"MGET k n nokey"}, {"MSET k v k2 v2"}, {"DEL nokey"}, {"EXISTS k k2"},
	{"SETNX k v"}, {"SETEX t 100 v"}, {"PSETEX t 100000 v"}, {"GETSET k v"}, {"GETDEL t", "SET t v"},
	{"GETEX k EX 100", "GETEX k PERSIST"}, {"APPEND a xy", "SET a v"}, {"STRLEN k"}, {"GETRANGE k 0 -1"},
	{"SUBSTR k 0 0"}, {"SETRANGE k 0 v"}, {"MSETNX m1 v m2 v", "DEL m1 m2"}, {"UNLINK u", "SET u v"},
	{"TOUCH k k2"}, {"RENAME k k3", "RENAME k3 k"}, {"RENAMENX k k3", "RENAME k3 k"}, {"COPY k c", "DEL c"},
	{"RANDOMKEY"}, {"EXPIREAT t 9999999999", "PEXPIREAT t 9999999999000", "PERSIST t"}, {"EXPIRETIME t"},
	{"PEXPIRETIME t"}, {"TTL k"}, {"PTTL k"}, {"TYPE k"}, {"DBSIZE"}, {"ECHO e"}, {"PING"}, {"TIME"}, {"LASTSAVE"},
	{"SCAN 0 MATCH k* COUNT 10"}, {"OBJECT ENCODING n"}, {"OBJECT REFCOUNT k"}, {"OBJECT IDLETIME k"},
	{"MEMORY USAGE k"}, {"SELECT 1", "SELECT 0"}, {"SWAPDB 0 1", "SWAPDB 0 1"}, {"MOVE k 2", "SELECT 2", "MOVE k 0", "SELECT 0"},
	{"SETBIT b 7 1"}, {"GETBIT b 7"}, {"BITCOUNT b"}, {"BITPOS b 1"}, {"BITOP AND d b b"},
	{"BITFIELD b GET u8 0 INCRBY u8 0 1"}, {"BITFIELD_RO b GET u4 0"}, {"LCS k k2 LEN"},
	{"MULTI", "INCR n", "GET k", "EXEC"}, {"WATCH k", "UNWATCH"}, {"CLIENT ID"}, {"CLIENT GETNAME"},
	{"CONFIG GET maxmemory"}, {"DUMP k"}, {"DUMP z"}, {"RESTORE r 0 $DUMP REPLACE"}, {"KEYS k*"}, {"INCRBYFLOAT f 1"},
	{"INCRBYFLOAT f 1.5"}, {"LCS k k2"}, {"LCS k k2 IDX"},
}

// allocExceptions are the cycles that allocate, and why. (Replies whose
// size has no bound, KEYS and LCS IDX, are built in buffers the engine
// keeps, so they allocate only while those grow: here, not at all.)
var allocExceptions = map[string]string{
	"INCRBYFLOAT f 1.5": "a fractional increment takes math/big's decimal conversions; integers do not",
}

func TestCommandAllocs(t *testing.T) {
	e, _ := newEngine(t, Options{Params: redisDefaultParams})
	rs := e.Open(proto.RESP, nil)
	ss := e.Open(proto.SBE, nil)
	for _, c := range []string{"SET k v", "SET k2 value2", "SET n 1", "SET t v", "SET u v", "SET b x", "SET f 1", "SET z abcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabc"} {
		do(t, e, rs, strings.Fields(c)...)
	}
	dump := []byte(strings.TrimPrefix(do(t, e, rs, "DUMP", "k"), "$"))
	var (
		codec sbe.Codec
		dec   argv.Decoder
		req   command.Request
	)
	for _, cycle := range allocCases {
		var wire, msgs [][]byte
		for _, c := range cycle {
			args := strs(strings.Fields(c)...)
			for i, a := range args {
				if string(a) == "$DUMP" {
					args[i] = dump
				}
			}
			wire = append(wire, resp.AppendCommand(nil, args...))
			req.Reset()
			if !dec.Decode(&req, args) {
				t.Fatalf("%q: %s", c, dec.Text)
			}
			req.CorrelationID = 1
			msgs = append(msgs, codec.AppendRequest(nil, &req))
		}
		name := strings.Join(cycle, "; ")
		out := make([]byte, 0, 4096)
		respRun := func() {
			for _, w := range wire {
				_, out, _ = e.ServeStream(rs, w, out[:0])
			}
		}
		sbeRun := func() {
			for _, m := range msgs {
				out, _ = e.ServeMessage(ss, m, out[:0])
			}
		}
		for _, run := range []struct {
			proto string
			f     func()
		}{{"RESP", respRun}, {"SBE", sbeRun}} {
			run.f()
			if string(out[:min(len(out), 1)]) == "-" && run.proto == "RESP" {
				t.Fatalf("%s: %q", name, out)
			}
			run.f() // buffers grown
			a := testing.AllocsPerRun(200, run.f) / float64(len(cycle))
			why, excepted := allocExceptions[name]
			switch {
			case a != 0 && !excepted:
				t.Errorf("%s over %s: %.2f allocations per request, want 0", name, run.proto, a)
			case excepted:
				t.Logf("%s over %s: %.2f allocations per request (%s)", name, run.proto, a, why)
			}
		}
	}
}
