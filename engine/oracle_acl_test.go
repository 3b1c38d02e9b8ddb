package engine

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// compareRESPWithRedis is compareWithRedis without the SBE run: for
// commands above sbe.MaxOp (ACL, SLOWLOG), which travel over RESP only.
func compareRESPWithRedis(t *testing.T, script []oracleCase) {
	t.Helper()
	for _, resp3 := range []bool{false, true} {
		theirs := runRedis(t, script, resp3)
		ours := runGoblin(t, script, resp3, Options{Params: redisDefaultParams})
		for i, c := range script {
			a, b := ours[i], theirs[i]
			if c.norm != nil {
				a, b = normalized(t, a, c.norm), normalized(t, b, c.norm)
			}
			if !bytes.Equal(a, b) {
				t.Errorf("RESP%d reply %d to %q:\ngoblin %q\n redis %q", 2+b2i(resp3), i, c.args, a, b)
			}
		}
	}
}

// normACLLog keeps what ACL LOG's entries say about the denial and blanks
// what belongs to the process: age-seconds, and of client-info every
// field but cmd= and user=.
func normACLLog(n *node) {
	for i := range n.elems {
		e := &n.elems[i]
		for j := 0; j+1 < len(e.elems); j += 2 {
			switch string(e.elems[j].str) {
			case "age-seconds":
				e.elems[j+1] = node{typ: '+'}
			case "client-info":
				var keep []string
				for _, f := range strings.Fields(string(e.elems[j+1].str)) {
					if strings.HasPrefix(f, "cmd=") || strings.HasPrefix(f, "user=") {
						keep = append(keep, f)
					}
				}
				e.elems[j+1] = node{typ: '$', str: []byte(strings.Join(keep, " "))}
			}
		}
	}
}

// normWords sorts the words of each string in a reply (ACL LIST, the
// rules of ACL GETUSER): Redis lists single commands in its hash table's
// order, goblin in its command table's (docs/acl.md).
func normWords(n *node) {
	if len(n.elems) == 0 {
		w := strings.Fields(string(n.str))
		slices.Sort(w)
		n.str = []byte(strings.Join(w, " "))
		return
	}
	for i := range n.elems {
		normWords(&n.elems[i])
	}
}

// normLen replaces a bulk string by its length (ACL GENPASS).
func normLen(n *node) {
	n.str = []byte(strings.Repeat("x", len(n.str)))
}

// TestACLAgainstRedis: ACL SETUSER/GETUSER/DELUSER/LIST/USERS/WHOAMI/CAT/
// GENPASS/LOG/DRYRUN, AUTH user pass, HELLO AUTH, requirepass as the
// default user's password, and the NOPERM and WRONGPASS errors (inside
// MULTI too), byte for byte against redis-server 7.0 in RESP2 and RESP3.
// The script cleans its users up first and last: the redis-server is
// shared with the other oracle tests.
func TestACLAgainstRedis(t *testing.T) {
	c := func(norm func(*node), args ...string) oracleCase { return oracleCase{args: args, norm: norm} }
	cleanup := []oracleCase{c(normInt, "ACL", "DELUSER", "alice", "bob", "carol", "dave"), c(nil, "ACL", "LOG", "RESET")}
	script := append(slices.Clone(cleanup), []oracleCase{
		c(nil, "ACL", "WHOAMI"),
		c(nil, "ACL", "SETUSER", "alice", "on", ">pw", "~app:*", "+get", "+set", "+multi", "+exec"),
		c(nil, "ACL", "SETUSER", "bob", "on", ">bpw", "%R~r:*", "%W~w:*", "+@string"),
		c(nil, "ACL", "SETUSER", "carol", "off", "nopass", "+@all", "~*"),
		c(nil, "ACL", "SETUSER", "dave", "on", "nopass", "+@all", "-@dangerous", "~*", "(+config|get ~cfg)"),
		c(nil, "ACL", "SETUSER", "bad", "+nosuch"), c(nil, "ACL", "SETUSER", "bad", "+@nosuch"),
		c(nil, "ACL", "SETUSER", "sp ace", "on"), c(nil, "ACL", "SETUSER", "bad", "(+get ~x"),
		c(nil, "ACL", "SETUSER", "bad", "~x", "allkeys", "~y"), c(nil, "ACL", "SETUSER"),
		c(nil, "ACL", "USERS"), c(normWords, "ACL", "LIST"),
		c(normWords, "ACL", "GETUSER", "alice"), c(normWords, "ACL", "GETUSER", "dave"), c(nil, "ACL", "GETUSER", "nobody"),
		c(nil, "ACL", "CAT"), c(sortElems, "ACL", "CAT", "string"), c(sortElems, "ACL", "CAT", "Transaction"),
		c(nil, "ACL", "CAT", "nosuch"), c(nil, "ACL", "CAT", "a", "b"),
		c(nil, "ACL", "DRYRUN", "alice", "get", "app:1"), c(nil, "ACL", "DRYRUN", "alice", "get", "other"),
		c(nil, "ACL", "DRYRUN", "alice", "del", "app:1"), c(nil, "ACL", "DRYRUN", "bob", "get", "r:1"),
		c(nil, "ACL", "DRYRUN", "bob", "set", "r:1", "v"), c(nil, "ACL", "DRYRUN", "bob", "set", "w:1", "v"),
		c(nil, "ACL", "DRYRUN", "bob", "get", "w:1"), c(nil, "ACL", "DRYRUN", "bob", "append", "w:1", "v"),
		c(nil, "ACL", "DRYRUN", "nobody", "get", "x"), c(nil, "ACL", "DRYRUN", "alice", "nocmd"),
		c(nil, "ACL", "DRYRUN", "alice", "get"), c(nil, "ACL", "DRYRUN", "alice", "config", "get", "x"),
		c(nil, "ACL", "DRYRUN", "dave", "config", "get", "x"), c(nil, "ACL", "DRYRUN", "dave", "flushall"),
		c(nil, "ACL", "DRYRUN", "dave", "get", "anything"), c(nil, "ACL", "DRYRUN", "alice"),
		c(nil, "ACL", "GENPASS", "0"), c(nil, "ACL", "GENPASS", "x"), c(nil, "ACL", "GENPASS", "4097"),
		c(normLen, "ACL", "GENPASS"), c(normLen, "ACL", "GENPASS", "5"), c(normLen, "ACL", "GENPASS", "4096"),
		c(nil, "ACL", "LOG"), c(nil, "ACL", "LOG", "x"), c(nil, "ACL", "LOG", "1", "2"),
		c(nil, "ACL", "DELUSER", "default"), c(nil, "ACL", "DELUSER", "nobody"),
		c(nil, "AUTH", "alice", "wrong"), c(nil, "AUTH", "carol", "x"), c(nil, "AUTH", "nobody", "x"),
		c(nil, "AUTH", "x"), c(nil, "HELLO", "2", "AUTH", "alice", "nope"),
		c(normACLLog, "ACL", "LOG"), c(normACLLog, "ACL", "LOG", "1"), c(nil, "ACL", "LOG", "-1"),
		c(nil, "ACL", "LOG", "RESET"), c(nil, "ACL", "LOG"),
		c(nil, "AUTH", "alice", "pw"), c(nil, "SET", "app:1", "v"), c(nil, "GET", "app:1"),
		c(nil, "GET", "other"), c(nil, "DEL", "app:1"), c(nil, "CONFIG", "GET", "maxmemory"),
		c(nil, "ACL", "WHOAMI"), c(nil, "MULTI"), c(nil, "GET", "app:2"), c(nil, "GET", "other"),
		c(nil, "EXEC"), c(nil, "MULTI"), c(nil, "GET", "app:2"), c(nil, "EXEC"),
		c(nil, "AUTH", "bob", "bpw"), c(nil, "GET", "r:1"), c(nil, "SET", "r:1", "x"), c(nil, "SET", "w:1", "x"),
		c(nil, "GET", "w:1"), c(nil, "APPEND", "w:1", "y"), c(nil, "MGET", "r:1", "w:1"), c(nil, "PING"),
		c(nil, "AUTH", "dave", "any"), c(nil, "CONFIG", "GET", "cfg"), c(nil, "CONFIG", "SET", "cfg", "x"),
		c(nil, "FLUSHALL"), c(nil, "ACL", "WHOAMI"),
		c(nil, "AUTH", "default", "x"), c(normACLLog, "ACL", "LOG"),
		// requirepass is the default user's password.
		c(nil, "CONFIG", "SET", "requirepass", "secret"), c(normWords, "ACL", "GETUSER", "default"),
		c(nil, "AUTH", "secret"), c(normValues("server", "version", "id"), "HELLO", "2", "AUTH", "default", "secret"),
		c(nil, "CONFIG", "SET", "requirepass", ""), c(normWords, "ACL", "GETUSER", "default"),
	}...)
	script = append(script, cleanup...)
	compareRESPWithRedis(t, script)
}

// TestPubSubACLAgainstRedis: a user's channel rules on PUBLISH, SPUBLISH,
// SUBSCRIBE, SSUBSCRIBE and PSUBSCRIBE (a pattern must equal a rule), the
// NOPERM text, ACL DRYRUN and the ACL LOG entry of reason channel, byte
// for byte against redis-server 7.0 in RESP2 and RESP3. (The engine's
// sessions here have no socket, so only refused subscriptions are
// compared; allowed ones are in cmd/goblin-server's TestPubSubWireAgainstRedis.)
func TestPubSubACLAgainstRedis(t *testing.T) {
	c := func(norm func(*node), args ...string) oracleCase { return oracleCase{args: args, norm: norm} }
	cleanup := []oracleCase{c(normInt, "ACL", "DELUSER", "pub"), c(nil, "ACL", "LOG", "RESET")}
	script := append(slices.Clone(cleanup), []oracleCase{
		c(nil, "ACL", "SETUSER", "pub", "on", "nopass", "+@all", "~*", "resetchannels", "&news.*", "&x"),
		c(nil, "ACL", "DRYRUN", "pub", "publish", "news.a", "m"), c(nil, "ACL", "DRYRUN", "pub", "publish", "other", "m"),
		c(nil, "ACL", "DRYRUN", "pub", "subscribe", "x", "other"), c(nil, "ACL", "DRYRUN", "pub", "psubscribe", "news.*"),
		c(nil, "ACL", "DRYRUN", "pub", "psubscribe", "news.a"), c(nil, "ACL", "DRYRUN", "pub", "spublish", "other", "m"),
		c(nil, "AUTH", "pub", "any"),
		c(nil, "PUBLISH", "news.a", "m"), c(nil, "PUBLISH", "other", "m"), c(nil, "SPUBLISH", "x", "m"),
		c(nil, "SPUBLISH", "y", "m"), c(nil, "SUBSCRIBE", "x", "other"), c(nil, "SSUBSCRIBE", "nope"),
		c(nil, "PSUBSCRIBE", "news.a"), c(nil, "PSUBSCRIBE", "*"), c(nil, "PUBSUB", "NUMSUB", "other"),
		c(nil, "UNSUBSCRIBE", "other"),
		c(nil, "AUTH", "default", "x"), c(normACLLog, "ACL", "LOG"),
	}...)
	script = append(script, cleanup...)
	compareRESPWithRedis(t, script)
}

// TestPubSubConfigAgainstRedis: CONFIG GET and SET client-output-buffer-limit
// (classes, units, errors) as redis-server 7.0 answers them.
func TestPubSubConfigAgainstRedis(t *testing.T) {
	c := func(args ...string) oracleCase { return oracleCase{args: args} }
	reset := c("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60")
	compareRESPWithRedis(t, []oracleCase{
		reset, c("CONFIG", "GET", "client-output-buffer-limit"),
		c("CONFIG", "SET", "client-output-buffer-limit", "pubsub 1mb"),
		c("CONFIG", "SET", "client-output-buffer-limit", "foo 1 1 1"),
		c("CONFIG", "SET", "client-output-buffer-limit", "master 1 1 1"),
		c("CONFIG", "SET", "client-output-buffer-limit", "pubsub x 1 1"),
		c("CONFIG", "SET", "client-output-buffer-limit", "pubsub 1 1 -1"),
		c("CONFIG", "SET", "client-output-buffer-limit", "pubsub 1mb 256kb 10 normal 1 2 3"),
		c("CONFIG", "GET", "client-output-buffer-limit"),
		c("CONFIG", "SET", "client-output-buffer-limit", "replica 1gb 1GB 0 PUBSUB 4k 2K 1"),
		c("CONFIG", "GET", "client-output-buffer-limit"),
		c("CONFIG", "SET", "client-output-buffer-limit", ""),
		c("CONFIG", "GET", "client-output-buffer-limit"),
		reset,
	})
}
