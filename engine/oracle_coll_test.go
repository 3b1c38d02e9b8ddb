package engine

import (
	"strconv"
	"strings"
	"testing"
)

// c splits a command written as one string ("HSET h f v") into its words.
// Since schema version 3 the collection commands travel over SBE too
// (wideOp), so each script also runs through SBE and must answer the same.
func c(cmd string) oracleCase { return oracleCase{args: strings.Fields(cmd)} }

// respOnly marks a script RESP only: one that sets ACL users up (ACL
// SETUSER has no SBE form, so over SBE the users would be missing).
func respOnly(s []oracleCase) []oracleCase {
	for i := range s {
		s[i].notSBE = true
	}
	return s
}

func script(cmds ...string) []oracleCase {
	out := make([]oracleCase, len(cmds))
	for i, s := range cmds {
		out[i] = c(s)
	}
	return out
}

// TestHashesAgainstRedis: every hash command, its errors and edge cases,
// RESP2 and RESP3, on listpack hashes (whose order is Redis's) and across
// the conversion to hashtable (compared in sorted order).
func TestHashesAgainstRedis(t *testing.T) {
	s := script(
		"HSET h f1 v1 f2 v2", "HSET h f1 x f3 3", "HSET h f1", "HSET h", "HMSET h f4 4 f5 -5", "HMSET h f4",
		"HGET h f1", "HGET h nope", "HGET nokey f", "HMGET h f1 nope f3 f4", "HMGET nokey a b",
		"HGETALL h", "HGETALL nokey", "HKEYS h", "HVALS h", "HKEYS nokey", "HVALS nokey", "HLEN h", "HLEN nokey",
		"HEXISTS h f1", "HEXISTS h nope", "HEXISTS nokey f", "HSTRLEN h f1", "HSTRLEN h f5", "HSTRLEN h nope",
		"HSTRLEN nokey f", "HSETNX h f1 y", "HSETNX h f6 6", "HGET h f6", "HSETNX h2 a b", "HGETALL h2",
		"HDEL h f1 nope f2", "HDEL h nope", "HDEL nokey f", "HGETALL h", "HDEL h2 a", "EXISTS h2", "TYPE h2",
		"HINCRBY h f3 10", "HINCRBY h f3 -20", "HINCRBY h new 5", "HINCRBY h f6 x", "HINCRBY h f1 1",
		"HSET h s abc", "HINCRBY h s 1", "HSET h big 9223372036854775807", "HINCRBY h big 1", "HINCRBY h f3 9223372036854775807",
		"HINCRBY h f3 -9223372036854775808", "HINCRBY hi a 1", "HINCRBYFLOAT h fl 1.5", "HINCRBYFLOAT h fl 0.1",
		"HINCRBYFLOAT h fl -1e3", "HINCRBYFLOAT h s 1", "HINCRBYFLOAT h fl abc", "HINCRBYFLOAT h fl inf",
		"HINCRBYFLOAT h f3 1", "HINCRBYFLOAT h fl2 5.0e3", "HGETALL h", "HRANDFIELD nokey", "HRANDFIELD nokey 5",
		"HRANDFIELD nokey 5 WITHVALUES", "HRANDFIELD h 0", "HRANDFIELD h 100", "HRANDFIELD h 100 WITHVALUES",
		"HRANDFIELD h x", "HRANDFIELD h 1 bogus", "HRANDFIELD h 1 WITHVALUES x", "HRANDFIELD h -9223372036854775808",
		"HRANDFIELD h -9223372036854775807 WITHVALUES", "HSET one f v", "HRANDFIELD one", "HRANDFIELD one -3",
		"HRANDFIELD one -3 WITHVALUES", "HRANDFIELD one 1 WITHVALUES", "HSCAN h 0", "HSCAN h 0 MATCH f*",
		"HSCAN h 0 COUNT 1", "HSCAN h 0 COUNT 0", "HSCAN h 0 COUNT x", "HSCAN h 0 BOGUS 1", "HSCAN h 0 MATCH",
		"HSCAN h x", "HSCAN nokey 0", "HSCAN nokey 0 COUNT 0", "HSCAN h 18446744073709551615",
		"OBJECT ENCODING h", "TYPE h", "SET str v", "HGET str f", "HSET str f v", "HGETALL str", "HLEN str",
		"HSCAN str 0", "HRANDFIELD str", "HINCRBY str f 1", "GET h", "APPEND h x", "STRLEN h", "GETRANGE h 0 1",
		"SETRANGE h 0 x", "INCR h", "INCRBYFLOAT h 1", "GETSET h x", "GETDEL h", "SET h x GET", "SETBIT h 1 1",
		"GETBIT h 1", "BITCOUNT h", "BITOP AND dst str h", "BITOP OR h str", "TYPE h", "BITPOS h 1",
		"BITFIELD h GET u8 0", "GETEX h", "PSETEX h 100 v", "TYPE h", "HSET h a 1", "LCS h str", "MGET h str", "TYPE h", "SET h plain", "TYPE h", "GET h",
		"HSET exp f v", "EXPIRE exp 100", "TTL exp", "HSET exp g w", "TTL exp",
		"RENAME exp exp2", "HGETALL exp2", "TYPE exp",
	)
	s = append(s, oracleCase{args: strings.Fields("SCAN 0 TYPE hash"), norm: sortScan, notSBE: true},
		oracleCase{args: strings.Fields("SCAN 0 TYPE string COUNT 100"), norm: sortScan, notSBE: true})
	s = append(s, oracleCase{args: []string{"HSET", "e", "", ""}, notSBE: true}, c("HGETALL e"), sortedColl("KEYS *"))
	// Past hash-max-listpack-value: a long value converts to hashtable.
	long := strings.Repeat("x", 65)
	s = append(s, c("HSET conv a 1 b 2"), c("OBJECT ENCODING conv"), c("HSET conv c "+long),
		c("OBJECT ENCODING conv"), c("HGET conv c"), c("HLEN conv"), sortedColl("HKEYS conv"), sortedColl("HVALS conv"),
		c("HDEL conv a b c"), c("EXISTS conv"))
	// Past hash-max-listpack-entries (512): the 513th field converts.
	args := "HSET many"
	for i := 0; i < 512; i++ {
		args += " f" + strconv.Itoa(i) + " " + strconv.Itoa(i)
	}
	s = append(s, c(args), c("OBJECT ENCODING many"), c("HSET many last v"), c("OBJECT ENCODING many"),
		c("HLEN many"), c("HGET many f77"), c("HINCRBY many f77 1"), c("HEXISTS many last"), c("HSTRLEN many f100"),
		c("HRANDFIELD many 0"), c("CONFIG SET hash-max-listpack-entries 2"), c("HSET small a 1 b 2"),
		c("OBJECT ENCODING small"), c("HSET small c 3"), c("OBJECT ENCODING small"),
		c("CONFIG GET hash-max-listpack-entries"), c("CONFIG GET hash-max-ziplist-entries"), c("CONFIG GET set-max-intset-entries"), c("CONFIG GET list-max-listpack-size"), c("CONFIG SET hash-max-ziplist-value 3"), c("CONFIG GET hash-max-listpack-value"),
		c("HSET small2 a abcd"), c("OBJECT ENCODING small2"), c("CONFIG SET hash-max-listpack-entries 512"),
		c("CONFIG SET hash-max-listpack-value 64"))
	compareWithRedis(t, s, true)
}

func sortedColl(cmd string) oracleCase {
	o := c(cmd)
	o.norm = sortElems
	return o
}

// TestCollectionKeyspaceAgainstRedis: the keyspace commands on hashes:
// DEL, UNLINK, EXISTS, TYPE, COPY, MOVE, SWAPDB, DUMP (a listpack hash's
// payload is Redis's byte for byte) and RESTORE of Redis's own payloads,
// EXPIRE and PERSIST, WATCH seeing a hash write.
func TestCollectionKeyspaceAgainstRedis(t *testing.T) {
	long := strings.Repeat("y", 70)
	s := script(
		"HSET h a 1 b two c -3", "DUMP h", "COPY h h2", "HGETALL h2", "COPY h h2", "HSET h2 d 4", "COPY h2 h REPLACE",
		"HGETALL h", "COPY h h3 DB 1", "SELECT 1", "HGETALL h3", "TYPE h3", "SELECT 0", "MOVE h2 1", "EXISTS h2",
		"MOVE h 1", "SELECT 1", "HGETALL h2", "SELECT 0", "HSET m x 1", "SWAPDB 0 1", "HGETALL h2", "HGETALL m",
		"SWAPDB 0 1", "EXPIRE h 100", "TTL h", "PERSIST h", "TTL h", "DEL h nope", "EXISTS h", "HSET u a 1",
		"UNLINK u", "EXISTS u", "HSET w f v", "MULTI", "HGET w f", "EXEC",
		"HSET big a "+long, "OBJECT ENCODING big", "DUMP big", "DEL big",
	)
	s = append(s, oracleCase{args: strings.Fields("SCAN 0 TYPE hash"), norm: sortScan, notSBE: true})
	compareWithRedis(t, s, true)

	// RESTORE of Redis's own payloads: a listpack hash and a hashtable one.
	r := dialRedis(t)
	redisDo(t, r, "FLUSHALL")
	redisDo(t, r, "HSET", "lp", "f", "v", "n", "12")
	redisDo(t, r, "HSET", "ht", "f", long, "g", "1")
	e, _ := newEngine(t, Options{})
	ses := NewSession(0, nil)
	for _, k := range []string{"lp", "ht"} {
		p := redisDo(t, r, "DUMP", k).str
		if got := do(t, e, ses, "RESTORE", k, "0", string(p)); got != "+OK" {
			t.Fatalf("RESTORE of redis's %s: %s", k, got)
		}
		if got := do(t, e, ses, "RESTORE", k, "0", string(p)); !strings.HasPrefix(got, "-BUSYKEY") {
			t.Fatalf("second RESTORE of %s: %s", k, got)
		}
		if got, want := do(t, e, ses, "OBJECT", "ENCODING", k), "$"+string(redisDo(t, r, "OBJECT", "ENCODING", k).str); got != want {
			t.Errorf("OBJECT ENCODING %s after RESTORE: %s, redis %s", k, got, want)
		}
		if got, want := do(t, e, ses, "HGET", k, "f"), "$"+string(redisDo(t, r, "HGET", k, "f").str); got != want {
			t.Errorf("HGET %s f after RESTORE: %s, redis %s", k, got, want)
		}
	}
	if err := e.st.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestWatchSeesHashWrites: a hash write by another client aborts a
// transaction watching the key; a write that changes nothing does not.
func TestWatchSeesHashWrites(t *testing.T) {
	e, _ := newEngine(t, Options{})
	a, b := NewSession(0, nil), NewSession(0, nil)
	do(t, e, a, "HSET", "w", "f", "v")
	do(t, e, a, "WATCH", "w")
	do(t, e, b, "HSETNX", "w", "f", "other") // changes nothing
	do(t, e, a, "MULTI")
	do(t, e, a, "HGET", "w", "f")
	if got := do(t, e, a, "EXEC"); got != "[$v]" {
		t.Fatalf("EXEC after a no-op HSETNX: %s", got)
	}
	do(t, e, a, "WATCH", "w")
	do(t, e, b, "HDEL", "w", "f")
	do(t, e, a, "MULTI")
	do(t, e, a, "HGET", "w", "f")
	if got := do(t, e, a, "EXEC"); got != "nil" {
		t.Fatalf("EXEC after HDEL by another client: %s, want a nil reply", got)
	}
}

// TestSetsAgainstRedis: the set commands on intsets (whose order is
// Redis's: ascending) and, compared sorted, on hashtable sets.
func TestSetsAgainstRedis(t *testing.T) {
	s := script(
		"SADD s 3 1 2 1", "SADD s 5", "SADD s", "SMEMBERS s", "SMEMBERS nokey", "SCARD s", "SCARD nokey",
		"OBJECT ENCODING s", "TYPE s", "SISMEMBER s 2", "SISMEMBER s 9", "SISMEMBER nokey 1", "SISMEMBER s x",
		"SMISMEMBER s 1 9 x 3", "SMISMEMBER nokey a b", "SREM s 1 9", "SREM s x", "SREM nokey a", "SMEMBERS s",
		"SADD t 2 3 4", "SADD u 3 4 5 6", "SINTER s t", "SINTER s t u", "SINTER s nokey", "SINTER nokey s",
		"SUNION s t u", "SUNION nokey", "SDIFF u s", "SDIFF u s t", "SDIFF nokey s", "SDIFF s nokey",
		"SINTERSTORE d s t", "SMEMBERS d", "SUNIONSTORE d s t u", "SMEMBERS d", "SDIFFSTORE d u s", "SMEMBERS d",
		"SINTERSTORE d s nokey", "EXISTS d", "SET str x", "SINTERSTORE str s t", "TYPE str", "SADD str 1",
		"SINTER s str", "SUNION str", "SDIFFSTORE d str", "SMOVE s t 3", "SMOVE s t 2", "SMEMBERS s", "SMEMBERS t",
		"SMOVE s t 99", "SMOVE nokey t 1", "SMOVE t t 4", "SMOVE t str 4", "SMOVE str t 1", "SMOVE t fresh 4",
		"SMEMBERS fresh", "SRANDMEMBER nokey", "SRANDMEMBER nokey 3", "SRANDMEMBER t 0", "SRANDMEMBER t 100",
		"SRANDMEMBER t x", "SRANDMEMBER t 1 2", "SRANDMEMBER t -9223372036854775808", "SADD one 7",
		"SRANDMEMBER one", "SRANDMEMBER one -3", "SRANDMEMBER one 1", "SPOP nokey", "SPOP nokey 3", "SPOP one 0",
		"SPOP t -1", "SPOP t x", "SPOP t 1 2", "SPOP one", "EXISTS one", "SADD two 8 9", "SPOP two 5", "EXISTS two",
		"SSCAN t 0", "SSCAN t 0 MATCH 3*", "SSCAN nokey 0", "SSCAN t x", "SSCAN str 0", "SCARD str", "GET t",
		"SADD neg -5 100000 -2147483649", "SMEMBERS neg", "OBJECT ENCODING neg", "SADD mixed 1 a",
		"OBJECT ENCODING mixed", "SCARD mixed", "SADD z 1", "SADD z 01", "OBJECT ENCODING z", "DUMP s",
		"CONFIG SET set-max-intset-entries 2", "SADD lim 1 2", "OBJECT ENCODING lim", "SADD lim 3",
		"OBJECT ENCODING lim", "CONFIG GET set-max-intset-entries", "CONFIG SET set-max-intset-entries 512",
		"COPY s s2", "SMEMBERS s2", "EXPIRE s2 50", "TTL s2",
	)
	s = append(s, sortedColl("SMEMBERS mixed"), sortedColl("SMEMBERS z"), sortedColl("SUNION mixed s"),
		c("SADD words a b c"), sortedColl("SMEMBERS words"), sortedColl("SINTER words mixed"), c("SCARD words"),
		c("SREM words a b c"), c("EXISTS words"))
	compareWithRedis(t, s, true)
}

// TestListsAgainstRedis: the non-blocking list commands, RESP2 and RESP3.
func TestListsAgainstRedis(t *testing.T) {
	s := script(
		"RPUSH l a b c", "LPUSH l z y", "RPUSH l", "LRANGE l 0 -1", "LLEN l", "LLEN nokey", "TYPE l",
		"OBJECT ENCODING l", "LPUSHX nokey a", "RPUSHX nokey a", "EXISTS nokey", "LPUSHX l x", "RPUSHX l 1 2",
		"LRANGE l 0 -1", "LRANGE l -3 -1", "LRANGE l 5 2", "LRANGE l -100 100", "LRANGE l 100 200",
		"LRANGE nokey 0 -1", "LRANGE l x 1", "LINDEX l 0", "LINDEX l -1", "LINDEX l 100", "LINDEX nokey 0",
		"LINDEX l x", "LSET l 0 first", "LSET l -1 last", "LSET l 100 x", "LSET nokey 0 x", "LSET l x y",
		"LRANGE l 0 -1", "LPOP l", "RPOP l", "LPOP l 2", "RPOP l 2", "LPOP l 0", "LPOP l -1", "LPOP l x",
		"LPOP nokey", "LPOP nokey 2", "RPOP nokey 0", "LPOP l 1 2", "LRANGE l 0 -1",
		"RPUSH r a b a c a d a", "LREM r 2 a", "LRANGE r 0 -1", "LREM r -1 a", "LRANGE r 0 -1", "LREM r 0 a",
		"LRANGE r 0 -1", "LREM r 0 zz", "LREM nokey 0 a", "LREM r x a", "LINSERT r BEFORE c x", "LINSERT r AFTER d y",
		"LINSERT r AFTER nope y", "LINSERT nokey AFTER a b", "LINSERT r MIDDLE c x", "LRANGE r 0 -1",
		"LTRIM r 1 -2", "LRANGE r 0 -1", "LTRIM r 5 1", "EXISTS r", "LTRIM nokey 0 1", "LTRIM l x 1",
		"RPUSH p a b c a b c a", "LPOS p a", "LPOS p c", "LPOS p zz", "LPOS p a RANK 2", "LPOS p a RANK -1",
		"LPOS p a RANK -2", "LPOS p a COUNT 0", "LPOS p a COUNT 2", "LPOS p a COUNT 2 RANK -1", "LPOS p a MAXLEN 3",
		"LPOS p a COUNT 0 MAXLEN 4", "LPOS p a RANK 0", "LPOS p a COUNT -1", "LPOS p a MAXLEN -1", "LPOS p a RANK x",
		"LPOS p a BOGUS 1", "LPOS p a RANK", "LPOS nokey a", "LPOS nokey a COUNT 1", "LPOS p zz COUNT 0",
		"LPOS p a RANK -9223372036854775808", "RPUSH m 1 2 3", "LMOVE m m2 LEFT RIGHT", "LMOVE m m2 RIGHT LEFT",
		"LRANGE m 0 -1", "LRANGE m2 0 -1", "LMOVE m m2 UP LEFT", "LMOVE nokey m2 LEFT LEFT", "RPOPLPUSH m m2",
		"EXISTS m", "LRANGE m2 0 -1", "RPOPLPUSH m2 m2", "LRANGE m2 0 -1", "SET str x", "RPOPLPUSH m2 str",
		"RPOPLPUSH str m2", "LPUSH str a", "LLEN str", "LRANGE str 0 1", "GET m2", "RPUSH n 10 -3 x",
		"LRANGE n 0 -1", "DUMP n", "COPY n n2", "LRANGE n2 0 -1", "EXPIRE n2 40", "TTL n2",
	)
	compareWithRedis(t, s, true)
}

// TestRandomCountIsBounded: a huge negative HRANDFIELD or SRANDMEMBER count
// is refused (docs/commands.md) instead of building a reply of a billion
// elements; up to the bound it is served.
func TestRandomCountIsBounded(t *testing.T) {
	e, _ := newEngine(t, Options{})
	s := NewSession(0, nil)
	do(t, e, s, "HSET", "h", "f", "v")
	do(t, e, s, "SADD", "s", "1")
	for _, c := range [][]string{{"HRANDFIELD", "h", "-1000000000"}, {"SRANDMEMBER", "s", "-1000000000"}, {"HRANDFIELD", "h", "-4194305", "WITHVALUES"}} {
		if got := do(t, e, s, c...); !strings.HasPrefix(got, "-ERR count is too large") {
			t.Errorf("%q = %.80s", c, got)
		}
	}
	if got := do(t, e, s, "HRANDFIELD", "nokey", "-1000000000"); got != "[]" {
		t.Errorf("HRANDFIELD nokey -1000000000 = %.80s", got)
	}
	if got := do(t, e, s, "SRANDMEMBER", "s", "-3"); got != "[$1 $1 $1]" {
		t.Errorf("SRANDMEMBER s -3 = %s", got)
	}
}
