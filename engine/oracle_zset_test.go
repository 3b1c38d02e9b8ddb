package engine

import (
	"strconv"

	"github.com/goblin-kv/goblin/proto/resp"
	"strings"
	"testing"
)

// zsetScript is every sorted-set command with its options, errors and edge
// cases (ranges, infinities, LIMIT, lex ranges), on listpack sets.
func zsetScript() []string {
	return []string{
		// ZADD and its options.
		"ZADD z 1 a 2 b 3 c", "ZADD z 1 a", "ZADD z", "ZADD z 1", "ZADD z 1 a 2", "ZADD z foo a", "ZADD z nan a",
		"ZADD z NX XX 1 a", "ZADD z GT LT 1 a", "ZADD z NX GT 1 a", "ZADD z NX LT 1 a", "ZADD z INCR 1 a 2 b",
		"ZADD z NX 10 a 4 d", "ZADD z XX 10 a 5 e", "ZADD z XX CH 11 a 5 e", "ZADD z CH 11 a 12 b 0 f",
		"ZADD z GT 1 a", "ZADD z GT CH 20 a", "ZADD z LT CH 30 a 1 b", "ZADD z LT 0.5 b", "ZADD z XX GT 100 c",
		"ZADD z INCR 5 a", "ZADD z INCR NX 5 a", "ZADD z INCR XX 5 nope", "ZADD z INCR GT -100 a", "ZADD z INCR LT -1 a",
		"ZADD z INCR 0 a", "ZADD nokey XX 1 a", "ZADD nokey XX INCR 1 a", "EXISTS nokey", "ZADD z ch nx 7 g",
		"ZADD z +inf pinf -inf ninf", "ZADD z INCR -inf pinf", "ZADD z 1e400 big", "ZADD z 1e-400 tiny",
		"ZADD z 0x10 hex", "ZADD z 0x1p-2 hexp", "ZADD z 1.5e3 e3", "ZADD z -0 negzero",
		"ZADD z 0 poszero", "ZADD z 1.1 dec", "ZADD z 123456789012345678 bigint", "ZADD z 4611686018427387904 p62",
		"ZADD z 1e17 e17", "ZADD z INFINITY infw", "ZADD z -inF ninf2",
		"ZRANGE z 0 -1 WITHSCORES", "ZCARD z", "ZCARD nokey",
		// ZINCRBY.
		"ZINCRBY z 1 a", "ZINCRBY z 1.5 new", "ZINCRBY z x a", "ZINCRBY z nan a", "ZINCRBY z -inf pinf",
		"ZINCRBY z 1 a b", "ZINCRBY nokey2 2 m", "ZSCORE nokey2 m",
		// ZSCORE, ZMSCORE, ZRANK, ZREVRANK.
		"ZSCORE z a", "ZSCORE z nope", "ZSCORE nokey a", "ZSCORE z dec", "ZSCORE z negzero", "ZSCORE z pinf",
		"ZSCORE z ninf", "ZSCORE z e17", "ZSCORE z bigint", "ZMSCORE z a nope dec", "ZMSCORE nokey a b", "ZMSCORE z",
		"ZRANK z a", "ZRANK z nope", "ZRANK nokey a", "ZREVRANK z a", "ZREVRANK z ninf", "ZREVRANK z pinf",
		"ZRANK z ninf", "ZRANK z a extra",
		// ZCOUNT, ZLEXCOUNT.
		"ZCOUNT z -inf +inf", "ZCOUNT z 1 2", "ZCOUNT z (1 2", "ZCOUNT z 1 (2", "ZCOUNT z (1 (1", "ZCOUNT z 5 1",
		"ZCOUNT z a b", "ZCOUNT z nan 1", "ZCOUNT z ( 1", "ZCOUNT nokey 0 1",
		"ZCOUNT z -inf -inf", "ZCOUNT z +inf +inf", "ZCOUNT z (-inf (+inf", "ZCOUNT z 1e400 inf",
		"ZADD lex 0 a 0 b 0 c 0 d 0 e 0 f 0 g", "ZLEXCOUNT lex - +", "ZLEXCOUNT lex [b [d", "ZLEXCOUNT lex (b (d",
		"ZLEXCOUNT lex (b [d", "ZLEXCOUNT lex + -", "ZLEXCOUNT lex [d [b", "ZLEXCOUNT lex b d", "ZLEXCOUNT lex [b",
		"ZLEXCOUNT lex -a +", "ZLEXCOUNT lex [ [z", "ZLEXCOUNT lex ( (", "ZLEXCOUNT nokey - +", "ZLEXCOUNT lex (a (a",
		// The ranges.
		"ZRANGE z 0 -1", "ZRANGE z 0 2 WITHSCORES", "ZRANGE z -3 -1", "ZRANGE z 5 2", "ZRANGE z -100 100",
		"ZRANGE z 100 200", "ZRANGE z 0 -1 REV", "ZRANGE z 0 1 REV WITHSCORES", "ZRANGE z x 1", "ZRANGE z 0 1 LIMIT 0 1",
		"ZRANGE z 0 1 BYSCORE", "ZRANGE z 1 20 BYSCORE WITHSCORES", "ZRANGE z (1 20 BYSCORE", "ZRANGE z 20 1 BYSCORE REV",
		"ZRANGE z 20 (1 BYSCORE REV WITHSCORES", "ZRANGE z -inf +inf BYSCORE LIMIT 2 3", "ZRANGE z -inf +inf BYSCORE LIMIT 2 -1",
		"ZRANGE z -inf +inf BYSCORE LIMIT -1 3", "ZRANGE z -inf +inf BYSCORE LIMIT 0 0", "ZRANGE z -inf +inf BYSCORE LIMIT 100 1",
		"ZRANGE z +inf -inf BYSCORE REV LIMIT 1 2 WITHSCORES", "ZRANGE z a b BYSCORE", "ZRANGE z 0 1 BYSCORE BYLEX",
		"ZRANGE z 0 1 REV REV", "ZRANGE z 0 1 LIMIT 0", "ZRANGE z 0 1 LIMIT x 1", "ZRANGE z 0 1 BYSCORE LIMIT 0 x",
		"ZRANGE lex [b [e BYLEX", "ZRANGE lex [e [b BYLEX REV", "ZRANGE lex - + BYLEX LIMIT 1 2", "ZRANGE lex + - BYLEX REV LIMIT 0 3",
		"ZRANGE lex - + BYLEX WITHSCORES", "ZRANGE lex 0 -1 BYLEX", "ZRANGE nokey 0 -1", "ZRANGE nokey 0 -1 BYSCORE",
		"ZRANGE z 0 -1 WITHSCORES WITHSCORES", "ZRANGE z 0", "ZRANGE z 0 -1 bogus",
		"ZREVRANGE z 0 2", "ZREVRANGE z 0 2 WITHSCORES", "ZREVRANGE z 0 2 REV", "ZREVRANGE z 0 2 LIMIT 0 1", "ZREVRANGE nokey 0 1",
		"ZRANGEBYSCORE z -inf +inf", "ZRANGEBYSCORE z 1 12 WITHSCORES LIMIT 1 2", "ZRANGEBYSCORE z 1 12 LIMIT 1 2 WITHSCORES",
		"ZRANGEBYSCORE z (1 (12", "ZRANGEBYSCORE z 12 1", "ZRANGEBYSCORE z 1 12 REV", "ZRANGEBYSCORE z 1 12 BYSCORE",
		"ZRANGEBYSCORE z x 1", "ZRANGEBYSCORE z 1 12 LIMIT 1", "ZREVRANGEBYSCORE z +inf -inf", "ZREVRANGEBYSCORE z 12 1 WITHSCORES",
		"ZREVRANGEBYSCORE z (12 (1 LIMIT 1 1", "ZREVRANGEBYSCORE z 1 12", "ZRANGEBYLEX lex - +", "ZRANGEBYLEX lex [c +",
		"ZRANGEBYLEX lex (c + LIMIT 1 2", "ZRANGEBYLEX lex c +", "ZRANGEBYLEX lex - + WITHSCORES", "ZREVRANGEBYLEX lex + -",
		"ZREVRANGEBYLEX lex [e (b", "ZREVRANGEBYLEX lex + - LIMIT 2 2", "ZREVRANGEBYLEX lex - +",
		// ZRANGESTORE.
		"ZRANGESTORE dst z 0 2", "ZRANGE dst 0 -1 WITHSCORES", "ZRANGESTORE dst z 1 12 BYSCORE LIMIT 1 2", "ZRANGE dst 0 -1 WITHSCORES",
		"ZRANGESTORE dst lex [b [d BYLEX REV", "ZRANGE dst 0 -1", "ZRANGESTORE dst z 0 1 WITHSCORES", "ZRANGESTORE dst nokey 0 -1",
		"EXISTS dst", "ZRANGESTORE dst z 5 1", "SET s str", "ZRANGESTORE dst s 0 1", "ZRANGESTORE s z 0 0", "TYPE s",
		"ZRANGESTORE z z 0 1", "ZRANGE z 0 -1 WITHSCORES", "OBJECT ENCODING z",
		// ZREM and the range removals.
		"ZADD r 1 a 2 b 3 c 4 d 5 e 6 f", "ZREM r a nope", "ZREM r", "ZREM nokey a", "ZREMRANGEBYRANK r 0 0",
		"ZREMRANGEBYRANK r -1 -1", "ZREMRANGEBYRANK r 5 1", "ZREMRANGEBYRANK r x 1", "ZREMRANGEBYRANK nokey 0 1",
		"ZRANGE r 0 -1 WITHSCORES", "ZREMRANGEBYSCORE r (3 4", "ZREMRANGEBYSCORE r x 1", "ZREMRANGEBYSCORE r 10 1",
		"ZRANGE r 0 -1", "ZADD rl 0 a 0 b 0 c 0 d", "ZREMRANGEBYLEX rl [b (d", "ZREMRANGEBYLEX rl x y", "ZRANGE rl 0 -1",
		"ZREMRANGEBYLEX rl - +", "EXISTS rl", "ZREMRANGEBYRANK r 0 -1", "EXISTS r",
		// ZPOPMIN, ZPOPMAX, ZMPOP.
		"ZADD p 1 a 2 b 3 c 4 d 5 e", "ZPOPMIN p", "ZPOPMAX p", "ZPOPMIN p 2", "ZPOPMIN p 0", "ZPOPMIN p -1", "ZPOPMIN p x",
		"ZPOPMIN p 1 2", "ZPOPMAX p 10", "EXISTS p", "ZPOPMIN nokey", "ZPOPMAX nokey 3", "ZPOPMIN s",
		"ZADD p 1 a 2 b 3 c", "ZADD p2 10 x", "ZMPOP 2 nokey p MIN", "ZMPOP 2 p p2 MAX COUNT 5", "ZMPOP 1 p2 MIN COUNT 1",
		"ZMPOP 1 nokey MIN", "ZMPOP 1 p MIN COUNT 0", "ZMPOP 1 p MIN COUNT -1", "ZMPOP 1 p MIN COUNT x", "ZMPOP 1 p MIN COUNT 1 COUNT 2",
		"ZMPOP 1 p foo", "ZMPOP 0 p MIN", "ZMPOP x p MIN", "ZMPOP 3 p MIN", "ZMPOP 2 s p MIN", "ZMPOP 2 p s MIN", "ZMPOP 1 p MIN COUNT",
		// ZRANDMEMBER (deterministic cases).
		"ZADD one 5 m", "ZRANDMEMBER one", "ZRANDMEMBER one 1", "ZRANDMEMBER one -3", "ZRANDMEMBER one -2 WITHSCORES",
		"ZRANDMEMBER one 5 WITHSCORES", "ZRANDMEMBER one 0", "ZRANDMEMBER nokey", "ZRANDMEMBER nokey 5",
		"ZRANDMEMBER one x", "ZRANDMEMBER one 1 bogus", "ZRANDMEMBER one 1 WITHSCORES x", "ZRANDMEMBER one -9223372036854775808",
		"ZRANDMEMBER one 9223372036854775807 WITHSCORES", "ZRANDMEMBER s",
		"ZRANDMEMBER lex 100", "ZRANDMEMBER lex 100 WITHSCORES",
		// ZSCAN.
		"ZSCAN z 0", "ZSCAN z 0 MATCH p*", "ZSCAN z 0 COUNT 1", "ZSCAN z 0 COUNT 0", "ZSCAN z x", "ZSCAN nokey 0", "ZSCAN s 0",
		"ZSCAN z 0 BOGUS 1",
		// Union, intersection, difference.
		"ZADD u1 1 a 2 b 3 c", "ZADD u2 10 b 20 c 30 d", "SADD us b d x", "ZUNION 2 u1 u2", "ZUNION 2 u1 u2 WITHSCORES",
		"ZUNION 3 u1 u2 us WITHSCORES", "ZUNION 2 u1 u2 WEIGHTS 2 3 WITHSCORES", "ZUNION 2 u1 u2 AGGREGATE MIN WITHSCORES",
		"ZUNION 2 u1 u2 AGGREGATE MAX WITHSCORES", "ZUNION 2 u1 u2 AGGREGATE bogus", "ZUNION 2 u1 u2 WEIGHTS 1",
		"ZUNION 2 u1 u2 WEIGHTS 1 x", "ZUNION 2 u1 nokey WITHSCORES", "ZUNION 2 u1 s", "ZUNION 1 u1 WITHSCORES WITHSCORES",
		"ZINTER 2 u1 u2 WITHSCORES", "ZINTER 3 u1 u2 us WITHSCORES", "ZINTER 2 u1 u1 WEIGHTS 1 2 WITHSCORES",
		"ZINTER 2 u1 nokey", "ZINTER 2 u1 u2 AGGREGATE MAX WEIGHTS -1 2 WITHSCORES", "ZDIFF 2 u1 u2 WITHSCORES",
		"ZDIFF 2 u2 us", "ZDIFF 1 u1", "ZDIFF 2 nokey u1", "ZDIFF 2 u1 u2 WEIGHTS 1 1", "ZDIFF 2 u1 u2 AGGREGATE SUM",
		"ZADD iu 1 a +inf b", "ZADD iu2 2 a -inf b", "ZUNION 2 iu iu2 WITHSCORES", "ZINTER 2 iu iu2 WITHSCORES",
		"ZUNION 2 iu iu2 WEIGHTS 0 1 WITHSCORES",
		"ZUNIONSTORE d 2 u1 u2", "ZRANGE d 0 -1 WITHSCORES", "ZINTERSTORE d 2 u1 u2 WEIGHTS 1 0.5", "ZRANGE d 0 -1 WITHSCORES",
		"ZDIFFSTORE d 2 u1 us", "ZRANGE d 0 -1 WITHSCORES", "ZUNIONSTORE d 2 u1 u2 WITHSCORES", "ZINTERSTORE d 2 u1 nokey",
		"EXISTS d", "ZUNIONSTORE u1 2 u1 u2", "ZRANGE u1 0 -1 WITHSCORES", "ZUNIONSTORE d 0 u1", "ZUNIONSTORE d 3 u1 u2",
		"ZUNIONSTORE d x u1", "ZINTERCARD 2 u1 u2", "ZINTERCARD 2 u1 u2 LIMIT 1", "ZINTERCARD 2 u1 u2 LIMIT 0",
		"ZINTERCARD 2 u1 u2 LIMIT -1", "ZINTERCARD 2 u1 u2 LIMIT x", "ZINTERCARD 0 u1", "ZINTERCARD 3 u1 u2",
		"ZINTERCARD 1 s", "ZINTERCARD 2 u1 u2 WITHSCORES", "ZINTERCARD 2 u1 u2 LIMIT",
		// SINTERCARD and LMPOP.
		"SADD sa a b c d", "SADD sb b c d e", "SINTERCARD 2 sa sb", "SINTERCARD 2 sa sb LIMIT 2", "SINTERCARD 2 sa sb LIMIT 0",
		"SINTERCARD 2 sa sb LIMIT -1", "SINTERCARD 2 sa nokey", "SINTERCARD 0 sa", "SINTERCARD 3 sa sb", "SINTERCARD 2 sa s",
		"SINTERCARD 2 sa sb LIMIT", "SINTERCARD 1 sa bogus 1", "SINTERCARD x sa",
		"RPUSH la 1 2 3", "RPUSH lb 4", "LMPOP 2 nokey la LEFT", "LMPOP 2 la lb RIGHT COUNT 5", "LMPOP 1 lb LEFT COUNT 3",
		"LMPOP 1 la LEFT", "LMPOP 1 la up", "LMPOP 1 la LEFT COUNT 0", "LMPOP 0 la LEFT", "LMPOP 2 la LEFT", "LMPOP 2 s la LEFT",
		// The keyspace commands on sorted sets.
		"ZADD k 1 a", "TYPE k", "OBJECT ENCODING k", "GET k", "LPUSH k x", "SADD k x", "HSET k f v", "ZADD s 1 a",
		"ZSCORE s a", "ZCARD s", "ZRANGE s 0 -1", "EXPIRE k 100", "TTL k", "RENAME k k2", "ZRANGE k2 0 -1 WITHSCORES",
		"COPY k2 k3", "ZRANGE k3 0 -1", "DEL k2 k3", "EXISTS k2 k3",
		"COMMAND GETKEYS ZUNIONSTORE d 2 a b WEIGHTS 1 2", "COMMAND GETKEYS ZINTERCARD 2 a b", "COMMAND GETKEYS ZMPOP 1 a MIN",
		"COMMAND GETKEYS ZINTERCARD 0 a", "COMMAND GETKEYS ZINTERCARD x a", "COMMAND GETKEYS ZINTERCARD 3 a",
		"COMMAND GETKEYS SINTERCARD 2 a b", "COMMAND GETKEYS LMPOP 2 a b LEFT", "COMMAND GETKEYSANDFLAGS ZUNIONSTORE d 2 a b",
		"COMMAND GETKEYS ZRANGESTORE d s 0 1",
		// More edges: GT/LT on new members, NaN weights, duplicate inputs, offsets past the end.
		"ZADD e GT 5 new1", "ZADD e LT INCR 3 new2", "ZADD e GT CH 1 new1", "ZINCRBY e inf new1", "ZINCRBY e -inf new1",
		"ZRANGEBYSCORE e (inf +inf", "ZRANGEBYSCORE e -inf (-inf", "ZADD e2 -inf a 1 b", "ZUNION 2 e2 e2 WEIGHTS 0 inf WITHSCORES",
		"ZINTER 2 e2 e2 WEIGHTS inf -inf WITHSCORES", "ZINTERCARD 3 e2 e2 e2", "ZUNION 1 e2 WEIGHTS nan", "ZRANGE e2 +inf -inf BYSCORE REV LIMIT 5 1",
		"ZRANGE e2 0 -1 BYSCORE LIMIT 1 1", "ZRANGESTORE e3 lex + - BYLEX REV LIMIT 1 2", "ZRANGE e3 0 -1", "ZMPOP 1 e2 MAX COUNT 10",
		"ZADD e4 1 a", "ZREVRANGE e4 0 0 WITHSCORES", "ZRANK e4 a", "ZRANGE e4 -1 -1", "ZRANGE e4 1 0", "ZRANGE e4 0 0 BYLEX",
	}
}

// TestSortedSetsAgainstRedis: every sorted-set command, RESP2 and RESP3,
// byte for byte, then across the listpack→skiplist conversion (both the
// entries and the value-length threshold) with the same commands.
func TestSortedSetsAgainstRedis(t *testing.T) {
	s := script(zsetScript()...)
	for _, args := range [][]string{{"ZADD", "z", " 1", "sp"}, {"ZCOUNT", "z", "", "1"}, {"ZCOUNT", "z", " 1", "2"},
		{"ZCOUNT", "z", "1\x002", "3"}, {"ZADD", "z", "1\x002", "nul"}, {"ZRANGE", "z", "(", "+inf", "BYSCORE"}} {
		s = append(s, oracleCase{args: args, notSBE: true})
	}
	s = append(s, oracleCase{args: strings.Fields("SCAN 0 TYPE zset COUNT 1000"), norm: sortScan, notSBE: true})
	// Past zset-max-listpack-entries (128) and -value (64).
	args := "ZADD big"
	for i := 0; i < 128; i++ {
		args += " " + strconv.Itoa(i%13) + " m" + strconv.Itoa(i)
	}
	long := strings.Repeat("y", 65)
	s = append(s, c(args), c("OBJECT ENCODING big"), c("ZADD big 5 last"), c("OBJECT ENCODING big"),
		c("ZCARD big"), c("ZRANGE big 0 20 WITHSCORES"), c("ZRANGE big -5 -1 REV WITHSCORES"), c("ZRANK big m77"),
		c("ZREVRANK big m77"), c("ZSCORE big m77"), c("ZCOUNT big (3 7"), c("ZRANGEBYSCORE big 4 5 LIMIT 2 3 WITHSCORES"),
		c("ZREVRANGEBYSCORE big 9 (4 LIMIT 1 4"), c("ZRANGE big 11 +inf BYSCORE"), c("ZINCRBY big 100 m3"),
		c("ZRANGE big -2 -1 WITHSCORES"), c("ZREM big m3 m4 nope"), c("ZREMRANGEBYRANK big 0 4"),
		c("ZREMRANGEBYSCORE big 12 12"), c("ZCARD big"), c("ZPOPMIN big 3"), c("ZPOPMAX big 2"), c("ZMSCORE big m50 m51 nope"),
		c("ZADD big -0 negzero"), c("ZSCORE big negzero"), c("ZRANGE big 0 1 WITHSCORES"), c("ZADD big 0 poszero"),
		c("ZRANGEBYSCORE big 0 0 WITHSCORES"), c("ZRANDMEMBER big 0"), c("ZRANGESTORE small big 0 2"),
		c("OBJECT ENCODING small"), c("ZRANGESTORE bigcopy big 0 -1"), c("OBJECT ENCODING bigcopy"),
		c("ZUNIONSTORE u 1 big"), c("OBJECT ENCODING u"), c("ZINTERSTORE u 2 big small"), c("OBJECT ENCODING u"),
		c("ZRANGE u 0 -1 WITHSCORES"), c("ZINTERCARD 2 big bigcopy"), c("ZADD lng 1 "+long), c("OBJECT ENCODING lng"),
		c("ZADD lng2 1 a"), c("ZADD lng2 2 "+long), c("OBJECT ENCODING lng2"), c("ZRANGE lng2 0 -1 WITHSCORES"),
		c("ZREMRANGEBYRANK big 0 -1"), c("EXISTS big"),
		c("ZADD lexbig 0 "+long), c("ZADD lexbig 0 a 0 b 0 c 0 d"), c("ZRANGEBYLEX lexbig [b [d"),
		c("ZLEXCOUNT lexbig (a +"), c("ZREMRANGEBYLEX lexbig - [b"), c("ZRANGE lexbig 0 -1"),
		c("CONFIG SET zset-max-listpack-entries 2"), c("ZADD tiny 1 a 2 b"), c("OBJECT ENCODING tiny"),
		c("ZADD tiny 3 c"), c("OBJECT ENCODING tiny"), c("CONFIG GET zset-max-ziplist-entries"),
		c("CONFIG SET zset-max-ziplist-value 3"), c("CONFIG GET zset-max-listpack-value"), c("ZADD tiny2 1 abcd"),
		c("OBJECT ENCODING tiny2"), c("CONFIG SET zset-max-listpack-entries 0"), c("ZADD tiny3 1 a"), c("OBJECT ENCODING tiny3"),
		c("CONFIG SET zset-max-listpack-entries 128"), c("CONFIG SET zset-max-listpack-value 64"))
	// A large set's ZSCAN walks its index in hash order: compare sorted.
	s = append(s, c(args), c("ZADD big 1 over"), oracleCase{args: strings.Fields("ZSCAN big 0 COUNT 1000"), norm: sortScan, notSBE: true})
	compareWithRedis(t, s, true)
}

// TestZSetKeyspaceAgainstRedis: the keyspace commands on sorted sets: COPY,
// MOVE, SWAPDB, EXPIRE, UNLINK, MULTI, and DUMP, whose payload is Redis's
// byte for byte for both encodings (a listpack, type 17, and a skiplist,
// type 5 ZSET_2, written from the highest score down), then RESTORE of
// Redis's own payloads of both.
func TestZSetKeyspaceAgainstRedis(t *testing.T) {
	long := strings.Repeat("y", 70)
	big := "ZADD big"
	for i := 0; i < 200; i++ {
		big += " " + strconv.Itoa(i*7%31) + ".25 m" + strconv.Itoa(i)
	}
	s := script(
		"ZADD z 1 a 2.5 b -3 c 0.1 d inf e -inf f 1e17 g 4611686018427387904 h -0 i 123 j", "DUMP z",
		"COPY z z2", "ZRANGE z2 0 -1 WITHSCORES", "COPY z z2", "ZADD z2 9 k", "COPY z2 z REPLACE", "ZRANGE z 0 -1",
		"COPY z z3 DB 1", "SELECT 1", "ZRANGE z3 0 -1 WITHSCORES", "TYPE z3", "SELECT 0", "MOVE z2 1", "EXISTS z2",
		"ZADD m 1 x", "SWAPDB 0 1", "ZRANGE z2 0 -1", "ZRANGE m 0 -1", "SWAPDB 0 1", "EXPIRE z 100", "TTL z",
		"PERSIST z", "TTL z", "DEL z nope", "EXISTS z", "ZADD u 1 a", "UNLINK u", "EXISTS u", "ZADD w 1 f",
		"MULTI", "ZSCORE w f", "ZADD w 2 f", "EXEC", "ZADD one 5 only", "DUMP one",
		"ZADD lng 1 "+long, "OBJECT ENCODING lng", "DUMP lng", big, "OBJECT ENCODING big", "DUMP big",
		"ZADD bigneg -1.5 n1 -inf n2 inf n3", "DUMP big", "MEMORY USAGE nope",
		// A collection shrunk below its thresholds keeps its large encoding,
		// and DUMP writes that encoding, as Redis does.
		big, "ZREMRANGEBYRANK big 0 194", "OBJECT ENCODING big", "DUMP big",
		"HSET hs a 1 b "+long, "HDEL hs b", "OBJECT ENCODING hs", "DUMP hs",
		"SADD ss 1 x", "SREM ss x", "OBJECT ENCODING ss", "DUMP ss",
	)
	compareWithRedis(t, s, true)

	// RESTORE of Redis's own payloads: a listpack and a skiplist.
	r := dialRedis(t)
	redisDo(t, r, "FLUSHALL")
	redisDo(t, r, "ZADD", "lp", "1", "a", "2.5", "b", "-inf", "c", "12", "d")
	redisDo(t, r, "ZADD", "sk", "1", long, "2", "x", "3", "12", "inf", "top")
	e, _ := newEngine(t, Options{})
	ses := NewSession(0, nil)
	for _, k := range []string{"lp", "sk"} {
		p := redisDo(t, r, "DUMP", k).str
		if got := do(t, e, ses, "RESTORE", k, "0", string(p)); got != "+OK" {
			t.Fatalf("RESTORE of redis's %s: %s", k, got)
		}
		if got, want := do(t, e, ses, "OBJECT", "ENCODING", k), "$"+string(redisDo(t, r, "OBJECT", "ENCODING", k).str); got != want {
			t.Errorf("OBJECT ENCODING %s after RESTORE: %s, redis %s", k, got, want)
		}
		in := resp.AppendCommandString(nil, "ZRANGE", k, "0", "-1", "WITHSCORES")
		_, ours, _ := e.ServeStream(ses, in, nil)
		if theirs := roundTrip(t, r, in); string(ours) != string(theirs) {
			t.Errorf("ZRANGE %s after RESTORE: goblin %q, redis %q", k, ours, theirs)
		}
		if ours := do(t, e, ses, "DUMP", k); ours != "$"+string(p) {
			t.Errorf("DUMP %s after RESTORE of redis's payload:\ngoblin %q\n redis %q", k, ours, p)
		}
	}
	if err := e.st.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestWatchSeesZSetWrites: a sorted-set write by another client (ZADD,
// ZUNIONSTORE's destination, ZMPOP) aborts a transaction watching the key;
// a ZADD that changes nothing, or a read, does not.
func TestWatchSeesZSetWrites(t *testing.T) {
	e, _ := newEngine(t, Options{})
	a, b := NewSession(0, nil), NewSession(0, nil)
	do(t, e, a, "ZADD", "w", "1", "m")
	for _, tc := range []struct {
		write []string
		abort bool
	}{
		{[]string{"ZADD", "w", "1", "m"}, false},
		{[]string{"ZRANGE", "w", "0", "-1"}, false},
		{[]string{"ZADD", "w", "2", "m"}, true},
		{[]string{"ZUNIONSTORE", "w", "1", "src"}, true},
		{[]string{"ZADD", "w", "1", "m"}, true},
		{[]string{"ZMPOP", "2", "nokey", "w", "MIN"}, true},
	} {
		do(t, e, a, "WATCH", "w")
		do(t, e, b, tc.write...)
		do(t, e, a, "MULTI")
		do(t, e, a, "ZCARD", "w")
		got := do(t, e, a, "EXEC")
		if (got == "nil") != tc.abort {
			t.Errorf("EXEC after %q by another client: %s, abort %v", tc.write, got, tc.abort)
		}
	}
}

// TestKeynumACLAgainstRedis: ACL key patterns see exactly the counted keys
// of the keynum commands (ZUNION, ZUNIONSTORE, ZINTERCARD, ZMPOP,
// SINTERCARD, LMPOP), in ACL DRYRUN and in a live check, as Redis does.
func TestKeynumACLAgainstRedis(t *testing.T) {
	cleanup := script("AUTH default x", "ACL DELUSER zed")
	s := append(cleanup, script(
		"ACL SETUSER zed on >pw ~z:* +@all",
		"ACL DRYRUN zed ZUNION 1 z:a WEIGHTS 1", "ACL DRYRUN zed ZUNION 2 z:a other",
		"ACL DRYRUN zed ZUNIONSTORE other 1 z:a", "ACL DRYRUN zed ZUNIONSTORE z:d 1 z:a AGGREGATE MIN",
		"ACL DRYRUN zed ZINTERCARD 2 z:a z:b LIMIT 1", "ACL DRYRUN zed ZMPOP 1 z:a MIN", "ACL DRYRUN zed LMPOP 2 z:a b LEFT",
		"ACL DRYRUN zed SINTERCARD 1 z:a", "AUTH zed pw", "ZUNION 1 z:a WEIGHTS 1", "ZUNION 2 z:a other",
		"ZUNIONSTORE other 1 z:a", "ZINTERCARD 2 z:a z:b", "ZMPOP 2 z:a other MIN", "LMPOP 1 z:l LEFT", "SINTERCARD 2 other z:a",
	)...)
	s = append(s, cleanup...)
	compareWithRedis(t, respOnly(s), false)
}
