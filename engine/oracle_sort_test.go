package engine

import (
	"strconv"
	"strings"
	"testing"
)

// TestSortAgainstRedis: SORT and SORT_RO on lists, sets (intset and
// hashtable) and sorted sets (both encodings), numeric and ALPHA, ASC and
// DESC, LIMIT at and past the edges, BY patterns (string keys, hash
// fields, missing weights, constant "nosort" patterns), GET patterns ("#",
// strings, hash fields, missing keys), STORE (over another type, onto the
// sorted key itself, emptying the destination), the errors and their
// order, COMMAND INFO and GETKEYS, and the encoding change SORT makes to a
// sorted set; RESP2 and RESP3, against redis-server 7.0. Where Redis's
// order is a hash table's (a hashtable set without a sort), the replies
// are compared sorted.
func TestSortAgainstRedis(t *testing.T) {
	s := script(
		// Numeric sorts of a list: ties broken by the element's bytes,
		// exotic numbers strtod accepts, and the ones it refuses.
		// Redis's SORT reads strtod's errno without clearing it first: a
		// ZADD (string2d clears it) keeps an earlier ERANGE out of the way.
		"ZADD errno 1 x",
		"RPUSH l 3 1 2 10 -1 1.5 0x10 1e2 +4 -0 0 00 .5",
		"SORT l", "SORT l DESC", "SORT l ASC", "SORT l ALPHA", "SORT l ALPHA DESC",
		"SORT l LIMIT 0 3", "SORT l LIMIT 2 3", "SORT l LIMIT -5 3", "SORT l LIMIT 5 -1", "SORT l LIMIT 5 0",
		"SORT l LIMIT 100 5", "SORT l LIMIT 12 5", "SORT l LIMIT 13 1", "SORT l LIMIT 0 100", "SORT l DESC LIMIT 1 2",
		"SORT l LIMIT 9223372036854775807 9223372036854775807", "SORT l LIMIT -9223372036854775808 2",
		"SORT l LIMIT x 1", "SORT l LIMIT 1 x", "SORT l LIMIT 1", "SORT l LIMIT", "SORT l BOGUS", "SORT l ASC BOGUS",
		"SORT l STORE", "SORT l BY", "SORT l GET", "SORT_RO l", "SORT_RO l DESC LIMIT 1 3", "SORT_RO l STORE d",
		"RPUSH bad 1 x 2", "SORT bad", "SORT bad ALPHA", "SORT bad DESC LIMIT 0 1", "SORT bad BY nosort",
		"RPUSH nan 1 nan", "SORT nan", "RPUSH inf 1 inf -inf", "SORT inf",
		"RPUSH huge 1e400", "SORT huge", "ZADD errno 1 x", "RPUSH tiny 1e-400", "SORT tiny", "ZADD errno 1 x",
		"RPUSH sub 1e-310", "SORT sub", "ZADD errno 1 x", "SORT sub ALPHA", "SORT sub BY nosort",
		// BY nosort: the list's own order, DESC reversed, LIMIT a range.
		"SORT l BY nosort", "SORT l BY nosort DESC", "SORT l BY nosort LIMIT 2 3", "SORT l BY nosort DESC LIMIT 2 3",
		"SORT l BY nosort LIMIT 12 5", "SORT l BY nosort LIMIT 20 5", "SORT l BY nosort LIMIT 0 0", "SORT bad BY nosort ALPHA",
		"SORT l BY # LIMIT 1 1", "SORT l BY nosort BY w_* LIMIT 0 2",
		// BY and GET patterns.
		"RPUSH ids 1 2 3 4", "MSET w_1 40 w_2 30 w_3 30 n_1 one n_2 two n_3 three",
		"HSET h_1 f 9 name alpha", "HSET h_2 f 7 name beta", "HSET h_4 f 8",
		"SORT ids BY w_*", "SORT ids BY w_* DESC", "SORT ids BY w_* GET n_*", "SORT ids BY w_* GET # GET n_*",
		"SORT ids BY w_* GET n_* GET # LIMIT 1 2", "SORT ids BY h_*->f", "SORT ids BY h_*->f GET h_*->name",
		"SORT ids BY h_*->f GET h_*->name GET h_*->nope GET n_*->f", "SORT ids BY n_* ALPHA", "SORT ids BY n_* ALPHA DESC",
		"SORT ids BY n_* ALPHA GET n_*", "SORT ids BY n_* BY w_*", "SORT ids GET nostar", "SORT ids GET #",
		"SORT ids GET w_*", "SORT ids GET h_*", "SORT ids GET h_*->", "SORT ids BY h_*->", "SORT ids GET x*y",
		"SORT ids BY x_*_y LIMIT 1 2", "SORT ids BY n_*", "SORT ids DESC BY w_* LIMIT 0 1",
		"SET x1y hello", "SORT ids GET x*y", "SORT ids BY h_*->name ALPHA", "SORT ids BY h_*->name ALPHA DESC",
		// STORE: a list (quicklist), over another type and its TTL; an
		// empty result deletes the destination.
		"SET dst old", "EXPIRE dst 100", "SORT ids BY w_* STORE dst", "TYPE dst", "TTL dst", "LRANGE dst 0 -1",
		"OBJECT ENCODING dst", "SORT ids BY w_* GET n_* GET # STORE dst", "LRANGE dst 0 -1",
		"SORT ids BY w_* GET n_* STORE dst LIMIT 1 2", "LRANGE dst 0 -1", "SORT ids LIMIT 0 0 STORE dst", "EXISTS dst",
		"SORT nokey STORE dst", "SORT l STORE l", "LRANGE l 0 -1", "SORT l DESC STORE a STORE b", "EXISTS a",
		"LRANGE b 0 -1", "SORT bad STORE dst", "SORT ids BY nosort DESC STORE dst", "LRANGE dst 0 -1",
		"SORT ids GET missing_* STORE dst", "LRANGE dst 0 -1", "SORT ids ALPHA STORE dst", "LRANGE dst 0 -1",
		// A missing key, the wrong type.
		"SORT nokey", "SORT nokey DESC LIMIT 0 5", "SORT nokey BY nosort", "SORT_RO nokey ALPHA",
		"SET str 1", "SORT str", "SORT str BOGUS", "SORT str LIMIT 0 x", "HSET hash a 1", "SORT hash",
		"SORT_RO str", "SORT str STORE dst", "SORT hash BY nosort",
		// Sets: an intset (ascending, Redis's own order) and a hashtable.
		"SADD is 5 3 -2 10 7", "SORT is", "SORT is DESC", "SORT is BY nosort", "SORT is BY nosort DESC",
		"SORT is BY nosort LIMIT 1 2", "SORT is ALPHA", "SORT is LIMIT 1 3", "SORT is BY nosort STORE dst",
		"LRANGE dst 0 -1", "SADD hs b a d c 2 10", "SORT hs ALPHA", "SORT hs ALPHA DESC LIMIT 1 3", "SORT hs",
		"SORT hs BY nosort STORE dst", "LRANGE dst 0 -1", "SORT hs BY nosort DESC STORE dst", "LRANGE dst 0 -1",
		"SORT hs ALPHA GET #", "SADD nums 3 2 1", "SORT nums BY w_* GET n_*",
		// Sorted sets: SORT converts a listpack to a skiplist.
		"ZADD z 3 c 1 a 2 b 5 x 4 y", "OBJECT ENCODING z", "SORT z BY nosort", "OBJECT ENCODING z",
		"ZADD zl 3 c 1 a", "SORT_RO zl ALPHA", "OBJECT ENCODING zl", "ZADD zn 1 30 2 20 3 10 4 1e1",
		"SORT zn", "SORT zn BY nosort DESC", "SORT zn BY nosort LIMIT 1 2", "SORT zn BY nosort DESC LIMIT 1 2",
		"SORT zn BY nosort DESC LIMIT 3 9", "SORT zn BY nosort LIMIT 4 1", "SORT zn BY nosort DESC STORE dst",
		"LRANGE dst 0 -1", "SORT z ALPHA DESC", "SORT z", "SORT zn LIMIT 1 2 DESC", "DUMP zl",
		// SORT's keys as COMMAND sees them.
		"COMMAND GETKEYS SORT k", "COMMAND GETKEYS SORT k STORE d", "COMMAND GETKEYS SORT k STORE d STORE e",
		"COMMAND GETKEYS SORT k LIMIT STORE d x", "COMMAND GETKEYS SORT k GET STORE d", "COMMAND GETKEYS SORT_RO k STORE d",
		"COMMAND GETKEYSANDFLAGS SORT k BY w STORE d", "COMMAND GETKEYSANDFLAGS SORT_RO k", "COMMAND GETKEYS SORT",
		"COMMAND INFO sort sort_ro",
	)
	// Elements with a NUL byte or spaces, each a binary-safe argument:
	// ALPHA compares C strings without STORE and bytes with it, strtod
	// stops at the NUL and skips leading spaces only.
	s = append(s, oracleCase{args: []string{"RPUSH", "bin", "a\x00z", "a\x00b", "a", "ab"}, notSBE: true},
		c("SORT bin ALPHA STORE bs"), c("LRANGE bs 0 -1"), c("SORT bin ALPHA LIMIT 0 1"),
		oracleCase{args: []string{"RPUSH", "nul", "3\x00x", "2"}, notSBE: true}, c("SORT nul"))
	s = append(s, oracleCase{args: []string{"RPUSH", "sp", " 5", "4", "5 "}, notSBE: true}, c("SORT sp"), c("SORT sp LIMIT 0 1"),
		oracleCase{args: []string{"RPUSH", "empty", "", "1", "-1"}, notSBE: true}, c("SORT empty"), c("SORT empty ALPHA"),
		oracleCase{args: []string{"MSET", "w_a", " 3", "w_b", "2"}, notSBE: true}, c("RPUSH wl a b"), c("SORT wl BY w_*"))
	s = append(s, sortedColl("SORT hs BY nosort"), sortedColl("SORT hs BY nosort LIMIT 0 10"))
	// A sorted set past the listpack limits, sorted by rank and in full.
	args := "ZADD big"
	for i := 0; i < 300; i++ {
		args += " " + strconv.Itoa(i*7%301) + " m" + strconv.Itoa(i)
	}
	s = append(s, c(args), c("SORT big BY nosort LIMIT 100 5"), c("SORT big BY nosort DESC LIMIT 100 5"),
		c("SORT big ALPHA LIMIT 10 5"), c("SORT big ALPHA DESC LIMIT 0 3"))
	// A long list.
	args = "RPUSH long"
	for i := 0; i < 1000; i++ {
		args += " " + strconv.Itoa((i*7919)%1000)
	}
	s = append(s, c(args), c("SORT long LIMIT 990 20"), c("SORT long DESC LIMIT 0 5"), c("SORT long BY nosort DESC LIMIT 995 10"))
	compareWithRedis(t, s, true)
}

// TestSortClusterAndACLAgainstRedis: the refusals of BY and GET patterns
// for a user who may not read every key, and ACL's view of SORT's keys
// (the STORE destination needs write permission).
func TestSortACLAgainstRedis(t *testing.T) {
	s := script(
		"ACL SETUSER srt on nopass +@all ~k* ~d*", "ACL SETUSER srt2 on nopass +@all %R~* ~d*",
		"ACL SETUSER srt3 on nopass +@all %W~* ~k*",
		"RPUSH k 2 1", "AUTH srt x", "SORT k", "SORT k BY nosort", "SORT k BY w_*", "SORT k GET #", "SORT k GET w_*",
		"SORT k STORE d", "SORT k STORE other", "SORT k BY w_* STORE other", "SORT_RO k BY w_*", "SORT other",
		"AUTH srt2 x", "SORT k BY w_*", "SORT k GET # STORE d", "SORT k STORE k", "SORT_RO k GET #",
		"AUTH srt3 x", "SORT k GET #", "SORT k STORE k", "AUTH default x",
	)
	compareWithRedis(t, respOnly(s), true)
}

// TestSortCluster: in cluster mode BY and GET patterns are refused
// (Redis 7.0 refuses every GET, "#" too), a constant BY is not, and the
// STORE destination takes part in CROSSSLOT.
func TestSortCluster(t *testing.T) {
	e := clusterEngine(t, ClusterOptions{})
	ses := NewSession(0, nil)
	for _, tc := range []struct{ cmd, want string }{
		{"RPUSH {b}k 2 1", ":2"},
		{"SORT {b}k", "[$1 $2]"},
		{"SORT {b}k BY nosort DESC", "[$1 $2]"},
		{"SORT {b}k BY {b}w_*", "-ERR BY option of SORT denied in Cluster mode."},
		{"SORT {b}k GET #", "-ERR GET option of SORT denied in Cluster mode."},
		{"SORT {b}k STORE {b}d", ":2"},
		{"SORT {b}k STORE {c}d", "-CROSSSLOT Keys in request don't hash to the same slot"},
		{"SORT_RO {b}k STORE {c}d", "-ERR syntax error"},
	} {
		if got := do(t, e, ses, strings.Fields(tc.cmd)...); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.cmd, got, tc.want)
		}
	}
}
