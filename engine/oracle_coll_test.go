package engine

import (
	"strconv"
	"strings"
	"testing"
)

// c splits a command written as one string ("HSET h f v") into its words.
// The collection commands have no SBE form yet, so the SBE side of the
// comparison is off (notSBE).
func c(cmd string) oracleCase { return oracleCase{args: strings.Fields(cmd), notSBE: true} }

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
		"GETBIT h 1", "BITCOUNT h", "LCS h str", "MGET h str", "TYPE h", "SET h plain", "TYPE h", "GET h",
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
