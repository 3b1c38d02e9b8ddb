package engine

import (
	"strings"
	"testing"
)

// normSlowlog blanks what belongs to the process in SLOWLOG GET's
// entries: id, unix time, duration and the client's address.
func normSlowlog(n *node) {
	for i := range n.elems {
		e := &n.elems[i]
		if len(e.elems) != 6 {
			continue
		}
		for _, j := range []int{0, 1, 2, 4} {
			e.elems[j] = node{typ: '+'}
		}
	}
}

// TestSlowlogAgainstRedis: SLOWLOG GET/LEN/RESET and the two parameters,
// byte for byte against redis-server 7.0 in RESP2 and RESP3, with every
// command logged (slowlog-log-slower-than 0): the words as Redis keeps
// them (at most 32, each at most 128 bytes, secrets redacted), the
// client's name, newest first, slowlog-max-len.
func TestSlowlogAgainstRedis(t *testing.T) {
	c := func(norm func(*node), args ...string) oracleCase { return oracleCase{args: args, norm: norm} }
	long := strings.Repeat("v", 200)
	many := []string{"MSET"}
	for i := 0; i < 40; i++ {
		many = append(many, "k"+strings.Repeat("x", i), "v")
	}
	script := []oracleCase{
		c(nil, "CONFIG", "SET", "slowlog-log-slower-than", "-1"), c(nil, "SLOWLOG", "RESET"),
		c(nil, "CONFIG", "GET", "slowlog-max-len"), c(nil, "CONFIG", "GET", "slowlog-log-slower-than"), c(nil, "SLOWLOG", "LEN"), c(nil, "SLOWLOG", "GET"),
		c(nil, "CONFIG", "SET", "slowlog-log-slower-than", "0"),
		c(nil, "CLIENT", "SETNAME", "slowpoke"), c(nil, "SET", "k", long), c(nil, "GET", "k"),
		c(nil, "set", "lower", "case"), {args: many},
		c(nil, "AUTH", "nobody", "secret"), c(nil, "ACL", "SETUSER", "slowuser", "on", ">pw"),
		c(nil, "ACL", "DELUSER", "slowuser"), c(normValues("server", "version", "id"), "HELLO", "2", "AUTH", "default", "pw"),
		c(nil, "CONFIG", "SET", "requirepass", "pw"), c(nil, "CONFIG", "SET", "requirepass", ""),
		c(nil, "MULTI"), c(nil, "INCR", "n"), c(nil, "EXEC"),
		c(nil, "SLOWLOG", "LEN"), c(normSlowlog, "SLOWLOG", "GET", "-1"), c(normSlowlog, "SLOWLOG", "GET", "2"),
		c(normSlowlog, "SLOWLOG", "GET"), c(nil, "SLOWLOG", "GET", "x"), c(nil, "SLOWLOG", "GET", "-2"),
		c(nil, "SLOWLOG", "GET", "1", "2"), c(nil, "SLOWLOG", "LEN", "x"), c(nil, "SLOWLOG", "BOGUS"),
		c(nil, "CONFIG", "SET", "slowlog-max-len", "2"), c(nil, "PING"), c(nil, "SLOWLOG", "LEN"),
		c(normSlowlog, "SLOWLOG", "GET", "-1"), c(nil, "SLOWLOG", "RESET"), c(nil, "SLOWLOG", "LEN"),
		c(nil, "CONFIG", "SET", "slowlog-log-slower-than", "x"), c(nil, "CONFIG", "SET", "slowlog-log-slower-than", "-2"),
		c(nil, "CONFIG", "SET", "slowlog-max-len", "-1"),
		c(nil, "CONFIG", "SET", "slowlog-log-slower-than", "10000"), c(nil, "CONFIG", "SET", "slowlog-max-len", "128"),
		c(nil, "SLOWLOG", "RESET"), c(nil, "CONFIG", "GET", "slowlog-max-len"), c(nil, "CONFIG", "GET", "slowlog-log-slower-than"),
	}
	compareRESPWithRedis(t, script)
}
