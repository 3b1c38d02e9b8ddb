package main

// go-redis v9's own API for each string, collection, keyspace, database,
// transaction and connection command goblin answers, called against
// goblin-server and against redis-server 7.0 in the same way, in RESP2 and
// RESP3: what go-redis returns (value or error) must be the same.

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// startRedisServer starts a redis-server 7.0 on a Unix socket in a temp
// directory, saving nothing, and returns the socket's path.
func startRedisServer(t *testing.T) string {
	t.Helper()
	bin := testkit.Need(t, "redis-server", "the reference server go-redis's results are compared with")
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	testproc.Start(t, bin, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", dir)
	testproc.WaitDial(t, "unix", sock, startTimeout)
	return sock
}

// apiCase is one go-redis call; its Cmders are rendered with String (the
// command, then its value or error) and compared between the servers.
type apiCase func(ctx context.Context, c *redis.Client) []redis.Cmder

func one(f func(ctx context.Context, c *redis.Client) redis.Cmder) apiCase {
	return func(ctx context.Context, c *redis.Client) []redis.Cmder { return []redis.Cmder{f(ctx, c)} }
}

// goRedisCases call go-redis's method for every string, hash, set, list,
// keyspace, database, transaction and connection command whose answer
// does not depend on the process (TIME, CLIENT ID and the like are checked
// in TestGoRedisAPIServerCommands).
func goRedisCases() []apiCase {
	bg := func(c *redis.Client, f func(redis.Pipeliner)) []redis.Cmder {
		cmds, _ := c.TxPipelined(context.Background(), func(p redis.Pipeliner) error { f(p); return nil })
		return cmds
	}
	return []apiCase{
		// Strings.
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.SetNX(ctx, "nx", "v", 0) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.SetNX(ctx, "nx", "w", 0) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.SetNX(ctx, "nx2", "v", time.Minute) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.TTL(ctx, "nx2") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			//lint:ignore SA1019 goblin answers SETEX as Redis does, deprecated or not
			return c.SetEx(ctx, "ex", "v", 100*time.Second)
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.TTL(ctx, "ex") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			//lint:ignore SA1019 goblin answers SETEX as Redis does, deprecated or not
			return c.SetEx(ctx, "ex", "v", 1500*time.Millisecond)
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Do(ctx, "PSETEX", "px", 100000, "v") }),
		//lint:ignore SA1019 goblin answers SETEX and GETSET as Redis does, deprecated or not
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.GetSet(ctx, "nx", "new") }),
		//lint:ignore SA1019 goblin answers SETEX and GETSET as Redis does, deprecated or not
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.GetSet(ctx, "nope", "x") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.GetDel(ctx, "nope") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.GetDel(ctx, "nx") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.GetDel(ctx, "nx") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.GetEx(ctx, "ex", 200*time.Second) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.TTL(ctx, "ex") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.GetEx(ctx, "ex", 0) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Append(ctx, "a", "hello") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Append(ctx, "a", " world") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.StrLen(ctx, "a") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.GetRange(ctx, "a", -5, -1) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Do(ctx, "SUBSTR", "a", 0, 4) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.SetRange(ctx, "a", 6, "WORLD") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.SetRange(ctx, "r", 3, "x") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Get(ctx, "r") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.IncrByFloat(ctx, "f", 10.5) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.IncrByFloat(ctx, "f", 0.1) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.IncrByFloat(ctx, "a", 1) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.MSetNX(ctx, "m1", "1", "m2", "2") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.MSetNX(ctx, "m2", "x", "m3", "3") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.MGet(ctx, "m1", "m2", "m3") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Set(ctx, "l1", "ohmytext", 0) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Set(ctx, "l2", "mynewtext", 0) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.LCS(ctx, &redis.LCSQuery{Key1: "l1", Key2: "l2"})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.LCS(ctx, &redis.LCSQuery{Key1: "l1", Key2: "l2", Len: true})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.LCS(ctx, &redis.LCSQuery{Key1: "l1", Key2: "l2", Idx: true, MinMatchLen: 2, WithMatchLen: true})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.SetBit(ctx, "b", 7, 1) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.SetBit(ctx, "b", 100, 1) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.GetBit(ctx, "b", 7) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.GetBit(ctx, "b", 6) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Set(ctx, "s", "foobar", 0) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.BitCount(ctx, "s", nil) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.BitCount(ctx, "s", &redis.BitCount{Start: 5, End: 30, Unit: redis.BitCountIndexBit})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.BitPos(ctx, "s", 1) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.BitPos(ctx, "s", 0, 1, 2) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.BitPosSpan(ctx, "s", 1, 7, 15, "bit") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.BitOpAnd(ctx, "d", "s", "b") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.BitOpOr(ctx, "d", "s", "b") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.BitOpXor(ctx, "d", "s", "b") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.BitOpNot(ctx, "d", "s") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Get(ctx, "d") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.BitField(ctx, "bf", "SET", "i8", 0, 100, "INCRBY", "i8", 0, 100, "GET", "u4", 0)
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.BitField(ctx, "bf", "OVERFLOW", "SAT", "INCRBY", "u8", 8, 300, "OVERFLOW", "FAIL", "INCRBY", "i8", 0, 100)
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.BitFieldRO(ctx, "bf", "u8", 0, "i16", 4)
		}),
		// Keyspace.
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.MSet(ctx, "user:1", "a", "user:2", "b", "user:10", "c", "other", "d")
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return sortedStrings(c.Keys(ctx, "user:?")) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return sortedStrings(c.Keys(ctx, "user:[^1]*"))
		}),
		func(ctx context.Context, c *redis.Client) []redis.Cmder {
			// Every key once, whatever the cursors.
			var keys []string
			it := c.Scan(ctx, 0, "user:*", 2).Iterator()
			for it.Next(ctx) {
				keys = append(keys, it.Val())
			}
			return []redis.Cmder{sortedStrings(redis.NewStringSliceResult(keys, it.Err()))}
		},
		func(ctx context.Context, c *redis.Client) []redis.Cmder {
			keys, cur, err := c.ScanType(ctx, 0, "*", 1000, "string").Result()
			slices.Sort(keys)
			return []redis.Cmder{redis.NewStringSliceResult(keys, err), redis.NewIntResult(int64(cur), nil)}
		},
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Unlink(ctx, "user:10", "nope") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.Touch(ctx, "user:1", "user:2", "nope")
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Rename(ctx, "user:1", "u1") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Rename(ctx, "nope", "u1") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.RenameNX(ctx, "u1", "user:2") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.RenameNX(ctx, "u1", "u2") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Copy(ctx, "u2", "u3", 0, false) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Copy(ctx, "u2", "u3", 0, false) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Copy(ctx, "other", "u3", 0, true) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Copy(ctx, "u3", "in5", 5, false) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Get(ctx, "u3") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.ExpireAt(ctx, "u2", time.Unix(4102444800, 0))
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ExpireTime(ctx, "u2") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.PExpireAt(ctx, "u2", time.UnixMilli(4102444800500))
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.PExpireTime(ctx, "u2") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ExpireTime(ctx, "nope") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ExpireAt(ctx, "u3", time.Unix(1, 0)) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Exists(ctx, "u3") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Set(ctx, "n", "12", 0) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ObjectEncoding(ctx, "n") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ObjectEncoding(ctx, "a") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ObjectRefCount(ctx, "a") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ObjectFreq(ctx, "a") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ObjectIdleTime(ctx, "nope") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.MemoryUsage(ctx, "nope") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Dump(ctx, "nope") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Restore(ctx, "r2", 0, "garbage") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Type(ctx, "a") }),
		// Databases.
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Move(ctx, "a", 3) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Move(ctx, "nope", 3) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.DBSize(ctx) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Do(ctx, "SWAPDB", 0, 3) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Get(ctx, "a") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.DBSize(ctx) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Do(ctx, "SWAPDB", 0, 16) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Do(ctx, "SWAPDB", 0, 3) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Move(ctx, "n", 5) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.FlushDB(ctx) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.DBSize(ctx) }),
		// Transactions: TxPipelined is MULTI ... EXEC.
		func(ctx context.Context, c *redis.Client) []redis.Cmder {
			return bg(c, func(p redis.Pipeliner) {
				p.Set(ctx, "t", "1", 0)
				p.Incr(ctx, "t")
				p.IncrByFloat(ctx, "t", 0.5)
				p.Get(ctx, "t")
			})
		},
		func(ctx context.Context, c *redis.Client) []redis.Cmder {
			return bg(c, func(p redis.Pipeliner) {
				p.Set(ctx, "t", "x", 0)
				p.Incr(ctx, "t") // fails at EXEC; the rest runs
				p.Get(ctx, "t")
			})
		},
		func(ctx context.Context, c *redis.Client) []redis.Cmder {
			return bg(c, func(p redis.Pipeliner) {
				p.Set(ctx, "t", "y", 0)
				p.Do(ctx, "NOSUCH") // a queueing error: EXECABORT
			})
		},
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Get(ctx, "t") }),
		// WATCH: a transaction whose watched key another client changed
		// fails with TxFailedErr; untouched, it runs.
		func(ctx context.Context, c *redis.Client) []redis.Cmder {
			other := redis.NewClient(c.Options())
			defer other.Close()
			var out []redis.Cmder
			for _, touch := range []bool{true, false} {
				err := c.Watch(ctx, func(tx *redis.Tx) error {
					if touch {
						out = append(out, other.Set(ctx, "w", "theirs", 0))
					}
					_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
						p.Set(ctx, "w", "mine", 0)
						return nil
					})
					return err
				}, "w")
				out = append(out, redis.NewStatusResult(fmt.Sprint(err), nil), c.Get(ctx, "w"))
			}
			return out
		},
		// Connection and server commands with fixed answers.
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ClientGetName(ctx) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Wait(ctx, 0, 0) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ConfigResetStat(ctx) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ConfigSet(ctx, "maxmemory", "100mb") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ConfigGet(ctx, "maxmemory") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ConfigSet(ctx, "maxmemory", "0") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ConfigSet(ctx, "nosuch", "1") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ConfigGet(ctx, "maxmemory-policy") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.CommandGetKeys(ctx, "MSET", "a", "1", "b", "2")
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.CommandGetKeys(ctx, "COPY", "a", "b", "REPLACE")
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.CommandGetKeys(ctx, "BITOP", "AND", "d", "x", "y")
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.CommandGetKeys(ctx, "PING") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ClientPause(ctx, 0) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ClientUnpause(ctx) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.ClientKillByFilter(ctx, "ID", "999999")
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.FunctionFlush(ctx) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.FunctionList(ctx, redis.FunctionListQuery{})
		}),
		// Hashes, sets and lists.
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.HSet(ctx, "h", "f1", "v1", "f2", 2) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.HSetNX(ctx, "h", "f1", "x") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.HSetNX(ctx, "h", "f3", 3) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.HMSet(ctx, "h", map[string]any{"f4": "4"})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.HGet(ctx, "h", "f1") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.HGet(ctx, "h", "nope") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.HMGet(ctx, "h", "f1", "nope", "f3") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.HGetAll(ctx, "h") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.HKeys(ctx, "h") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.HVals(ctx, "h") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.HLen(ctx, "h") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.HExists(ctx, "h", "f2") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.HIncrBy(ctx, "h", "f2", 40) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.HIncrByFloat(ctx, "h", "fl", 1.25) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.HIncrBy(ctx, "h", "f1", 1) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Do(ctx, "HSTRLEN", "h", "f1") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.HRandField(ctx, "h", 100) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.HRandFieldWithValues(ctx, "h", 100) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.HDel(ctx, "h", "f1", "nope") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Type(ctx, "h") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ObjectEncoding(ctx, "h") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.SAdd(ctx, "s", 3, 1, 2) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.SAdd(ctx, "t", 2, 3, 4) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.SMembers(ctx, "s") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.SCard(ctx, "s") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.SIsMember(ctx, "s", 2) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.SMIsMember(ctx, "s", 1, 9) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.SInter(ctx, "s", "t") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.SUnion(ctx, "s", "t") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.SDiff(ctx, "s", "t") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.SInterStore(ctx, "d", "s", "t") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.SUnionStore(ctx, "d", "s", "t") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.SDiffStore(ctx, "d", "s", "t") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.SMove(ctx, "s", "t", 1) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.SRandMemberN(ctx, "t", 10) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.SRem(ctx, "t", 4, 9) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.SPopN(ctx, "t", 10) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Exists(ctx, "t") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.SMembersMap(ctx, "s") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ObjectEncoding(ctx, "s") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.RPush(ctx, "l", "a", "b", "c", "a") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.LPush(ctx, "l", "z") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.LPushX(ctx, "nol", "x") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.RPushX(ctx, "l", "y") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.LRange(ctx, "l", 0, -1) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.LLen(ctx, "l") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.LIndex(ctx, "l", -1) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.LSet(ctx, "l", 0, "first") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.LPos(ctx, "l", "a", redis.LPosArgs{}) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.LPosCount(ctx, "l", "a", 0, redis.LPosArgs{Rank: -1})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.LInsertBefore(ctx, "l", "b", "before")
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.LInsertAfter(ctx, "l", "nope", "x") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.LRem(ctx, "l", -1, "a") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.LPop(ctx, "l") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.RPop(ctx, "l") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.LPopCount(ctx, "l", 2) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.RPopCount(ctx, "nol", 2) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.LMove(ctx, "l", "l2", "RIGHT", "LEFT")
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			//lint:ignore SA1019 goblin answers RPOPLPUSH as Redis does, deprecated or not
			return c.RPopLPush(ctx, "l", "l2")
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.LRange(ctx, "l2", 0, -1) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.LTrim(ctx, "l2", 0, 0) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.LRange(ctx, "l2", 0, -1) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Type(ctx, "l2") }),
		// Sorted sets, SINTERCARD and LMPOP.
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.ZAdd(ctx, "z", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2.5, Member: "b"}, redis.Z{Score: -3, Member: "c"})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.ZAddNX(ctx, "z", redis.Z{Score: 9, Member: "a"}, redis.Z{Score: 4, Member: "d"})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.ZAddXX(ctx, "z", redis.Z{Score: 5, Member: "a"}, redis.Z{Score: 4, Member: "e"})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.ZAddGT(ctx, "z", redis.Z{Score: 1, Member: "a"})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.ZAddLT(ctx, "z", redis.Z{Score: 1, Member: "a"})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.ZAddArgs(ctx, "z", redis.ZAddArgs{Ch: true, Members: []redis.Z{{Score: 7, Member: "b"}, {Score: 8, Member: "f"}}})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.ZAddArgsIncr(ctx, "z", redis.ZAddArgs{Members: []redis.Z{{Score: 0.5, Member: "a"}}})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ZIncrBy(ctx, "z", 2, "c") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ZCard(ctx, "z") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ZCount(ctx, "z", "(1", "+inf") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ZLexCount(ctx, "z", "-", "+") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ZScore(ctx, "z", "a") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ZMScore(ctx, "z", "a", "nope", "b") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ZRank(ctx, "z", "b") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ZRevRank(ctx, "z", "b") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ZRange(ctx, "z", 0, -1) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ZRangeWithScores(ctx, "z", 0, 2) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			//lint:ignore SA1019 goblin answers ZREVRANGE as Redis does, deprecated or not
			return c.ZRevRange(ctx, "z", 0, 1)
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ZRevRangeWithScores(ctx, "z", 0, 1) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			//lint:ignore SA1019 goblin answers ZRANGEBYSCORE as Redis does, deprecated or not
			return c.ZRangeByScore(ctx, "z", &redis.ZRangeBy{Min: "-inf", Max: "5", Offset: 1, Count: 2})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.ZRangeByScoreWithScores(ctx, "z", &redis.ZRangeBy{Min: "(0", Max: "+inf"})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			//lint:ignore SA1019 goblin answers ZREVRANGEBYSCORE as Redis does, deprecated or not
			return c.ZRevRangeByScore(ctx, "z", &redis.ZRangeBy{Min: "-inf", Max: "+inf"})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.ZRevRangeByScoreWithScores(ctx, "z", &redis.ZRangeBy{Min: "1", Max: "8"})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			//lint:ignore SA1019 goblin answers ZRANGEBYLEX as Redis does, deprecated or not
			return c.ZRangeByLex(ctx, "z", &redis.ZRangeBy{Min: "-", Max: "+"})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			//lint:ignore SA1019 goblin answers ZREVRANGEBYLEX as Redis does, deprecated or not
			return c.ZRevRangeByLex(ctx, "z", &redis.ZRangeBy{Min: "-", Max: "+", Count: 2})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.ZRangeArgs(ctx, redis.ZRangeArgs{Key: "z", Start: "(1", Stop: "+inf", ByScore: true, Rev: false, Offset: 0, Count: 3})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.ZRangeArgsWithScores(ctx, redis.ZRangeArgs{Key: "z", Start: 0, Stop: -1, Rev: true})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.ZRangeStore(ctx, "zd", redis.ZRangeArgs{Key: "z", Start: 0, Stop: 2})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ZRandMember(ctx, "zd", 10) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ZRandMemberWithScores(ctx, "zd", 10) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ZScan(ctx, "z", 0, "", 0) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.ZAdd(ctx, "z2", redis.Z{Score: 10, Member: "a"}, redis.Z{Score: 20, Member: "x"})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.ZUnion(ctx, redis.ZStore{Keys: []string{"z", "z2"}, Weights: []float64{1, 2}})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.ZUnionWithScores(ctx, redis.ZStore{Keys: []string{"z", "z2"}, Aggregate: "MAX"})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.ZInter(ctx, &redis.ZStore{Keys: []string{"z", "z2"}})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.ZInterWithScores(ctx, &redis.ZStore{Keys: []string{"z", "z2"}, Aggregate: "MIN"})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ZInterCard(ctx, 1, "z", "z2") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ZDiff(ctx, "z", "z2") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ZDiffWithScores(ctx, "z", "z2") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.ZUnionStore(ctx, "zu", &redis.ZStore{Keys: []string{"z", "z2"}})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.ZInterStore(ctx, "zi", &redis.ZStore{Keys: []string{"z", "z2"}, Weights: []float64{2, 3}})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ZDiffStore(ctx, "zf", "z", "z2") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ZRangeWithScores(ctx, "zi", 0, -1) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ZRem(ctx, "z", "a", "nope") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ZRemRangeByRank(ctx, "zu", 0, 1) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.ZRemRangeByScore(ctx, "zu", "-inf", "(3")
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ZRemRangeByLex(ctx, "zd", "-", "[b") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ZPopMin(ctx, "zu", 2) }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ZPopMax(ctx, "zu") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ZMPop(ctx, "max", 2, "nope", "z") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.SInterCard(ctx, 0, "s", "t") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.RPush(ctx, "lm", "1", "2", "3") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.LMPop(ctx, "left", 2, "nope", "lm") }),
		// The blocking pops: served at once, timed out, and served by
		// another client's push while blocked.
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.RPush(ctx, "bl", "1", "2", "3", "4") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.BLPop(ctx, time.Second, "nope", "bl") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.BRPop(ctx, time.Second, "bl") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.BLMove(ctx, "bl", "bl2", "LEFT", "RIGHT", time.Second)
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			//lint:ignore SA1019 goblin answers BRPOPLPUSH as Redis does, deprecated or not
			return c.BRPopLPush(ctx, "bl2", "bl", time.Second)
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.BLMPop(ctx, time.Second, "left", 5, "bl")
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.ZAdd(ctx, "bz", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"}, redis.Z{Score: 3, Member: "c"})
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.BZPopMin(ctx, time.Second, "nope", "bz")
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.BZPopMax(ctx, time.Second, "bz") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder {
			return c.BZMPop(ctx, time.Second, "min", 5, "bz")
		}),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.BLPop(ctx, time.Second, "bl") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.BZPopMin(ctx, time.Second, "bz") }),
		func(ctx context.Context, c *redis.Client) []redis.Cmder {
			other := redis.NewClient(c.Options())
			defer other.Close()
			done := make(chan []redis.Cmder)
			go func() {
				done <- []redis.Cmder{c.BLPop(ctx, 5*time.Second, "bq"), c.BZPopMin(ctx, 5*time.Second, "bzq")}
			}()
			var out []redis.Cmder
			for _, push := range []func() redis.Cmder{
				func() redis.Cmder { return other.RPush(ctx, "bq", "v") },
				func() redis.Cmder { return other.ZAdd(ctx, "bzq", redis.Z{Score: 1.5, Member: "m"}) },
			} {
				for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
					if info := other.Info(ctx, "clients").Val(); strings.Contains(info, "blocked_clients:1") {
						break
					}
					if time.Now().After(deadline) {
						return []redis.Cmder{redis.NewStatusResult("", fmt.Errorf("the client never blocked (blocked_clients:1 in INFO)"))}
					}
				}
				out = append(out, push())
			}
			return append(out, <-done...)
		},
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Type(ctx, "z") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.ObjectEncoding(ctx, "z") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.HGet(ctx, "l2", "f") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Get(ctx, "h") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Del(ctx, "h", "s", "l2", "d") }),
		one(func(ctx context.Context, c *redis.Client) redis.Cmder { return c.Do(ctx, "RESET") }),
	}
}

func sortedStrings(c *redis.StringSliceCmd) *redis.StringSliceCmd {
	v, err := c.Result()
	slices.Sort(v)
	return redis.NewStringSliceResult(v, err)
}

// runAPICases runs cases on a new client of addr (database 0, then the
// cases' own SELECTs) after FLUSHALL and renders each result.
func runAPICases(t *testing.T, network, addr string, protocol int, cases []apiCase) []string {
	t.Helper()
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Network: network, Addr: addr, Protocol: protocol, PoolSize: 1})
	defer c.Close()
	if err := c.FlushAll(ctx).Err(); err != nil {
		t.Fatalf("FLUSHALL on %s: %v", addr, err)
	}
	var out []string
	for _, f := range cases {
		var parts []string
		for _, cmd := range f(ctx, c) {
			parts = append(parts, cmd.String())
		}
		out = append(out, strings.Join(parts, " | "))
	}
	return out
}

// TestGoRedisAPI: go-redis's typed call for each command gives the same
// value or error against goblin-server as against redis-server 7.0, over
// RESP2 and RESP3.
func TestGoRedisAPI(t *testing.T) {
	t.Parallel()
	theirs := startRedisServer(t)
	s := startServer(t)
	cases := goRedisCases()
	for _, protocol := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", protocol), func(t *testing.T) {
			want := runAPICases(t, "unix", theirs, protocol, cases)
			got := runAPICases(t, "unix", s.sock, protocol, cases)
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("case %d:\ngoblin %s\n redis %s", i, got[i], want[i])
				}
			}
		})
	}
}

// TestGoRedisAPIServerCommands: go-redis's calls whose answers depend on
// the process (TIME, LASTSAVE, CLIENT ID/INFO/LIST, COMMAND, INFO, MEMORY
// USAGE, DUMP/RESTORE) parse and hold what they must against goblin-server.
func TestGoRedisAPIServerCommands(t *testing.T) {
	t.Parallel()
	theirs := startRedisServer(t)
	s := startServer(t)
	ctx := context.Background()
	for _, protocol := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", protocol), func(t *testing.T) {
			c := redis.NewClient(&redis.Options{Network: "unix", Addr: s.sock, Protocol: protocol, PoolSize: 1, ClientName: "api"})
			defer c.Close()
			ref := redis.NewClient(&redis.Options{Network: "unix", Addr: theirs, Protocol: protocol, PoolSize: 1})
			defer ref.Close()
			if now, err := c.Time(ctx).Result(); err != nil || time.Since(now).Abs() > time.Minute {
				t.Errorf("TIME = %v, %v", now, err)
			}
			if ls, err := c.LastSave(ctx).Result(); err != nil || ls <= 0 || ls > time.Now().Unix() {
				t.Errorf("LASTSAVE = %d, %v", ls, err)
			}
			id, err := c.ClientID(ctx).Result()
			if err != nil || id <= 0 {
				t.Fatalf("CLIENT ID = %d, %v", id, err)
			}
			info, err := c.ClientInfo(ctx).Result()
			if err != nil || info.ID != id || info.Name != "api" || info.DB != 0 {
				t.Errorf("CLIENT INFO = %+v, %v (id %d)", info, err, id)
			}
			if list, err := c.ClientList(ctx).Result(); err != nil || !strings.Contains(list, fmt.Sprintf("id=%d ", id)) ||
				!strings.Contains(list, "name=api ") {
				t.Errorf("CLIENT LIST = %q, %v", list, err)
			}
			// COMMAND: every command go-redis parses from goblin is
			// described as Redis describes it.
			ours, err := c.Command(ctx).Result()
			if err != nil || len(ours) < 60 {
				t.Fatalf("COMMAND: %d commands, %v", len(ours), err)
			}
			refs, err := ref.Command(ctx).Result()
			if err != nil {
				t.Fatal(err)
			}
			for name, ci := range ours {
				r, ok := refs[name]
				if !ok {
					continue // goblin's Redis 7.2 additions (docs/commands.md)
				}
				a, b := *ci, *r
				pa, pb := fmt.Sprintf("%+v", a.CommandPolicy), fmt.Sprintf("%+v", b.CommandPolicy)
				if a.CommandPolicy != nil && b.CommandPolicy != nil { // the tips, as go-redis routes by them
					pa, pb = fmt.Sprintf("%+v", *a.CommandPolicy), fmt.Sprintf("%+v", *b.CommandPolicy)
				}
				a.CommandPolicy, b.CommandPolicy = nil, nil
				if fmt.Sprintf("%+v %s", a, pa) != fmt.Sprintf("%+v %s", b, pb) {
					t.Errorf("COMMAND's %s:\ngoblin %+v\n redis %+v", name, a, b)
				}
			}
			if n, err := c.Do(ctx, "COMMAND", "COUNT").Int(); err != nil || n != len(ours) {
				t.Errorf("COMMAND COUNT = %d, %v; COMMAND lists %d", n, err, len(ours))
			}
			names, err := c.CommandList(ctx, nil).Result()
			if err != nil || !slices.Contains(names, "getex") || !slices.Contains(names, "client|kill") {
				t.Errorf("COMMAND LIST = %d names, %v", len(names), err)
			}
			// INFO: the fields tools read.
			im, err := c.InfoMap(ctx).Result()
			if err != nil {
				t.Fatal(err)
			}
			for section, fields := range map[string][]string{
				"Server":      {"redis_version", "goblin_version", "process_id", "tcp_port", "uptime_in_seconds"},
				"Clients":     {"connected_clients", "blocked_clients"},
				"Memory":      {"used_memory", "used_memory_human", "maxmemory", "maxmemory_policy", "mem_allocator"},
				"Stats":       {"keyspace_hits", "keyspace_misses", "expired_keys", "evicted_keys", "total_commands_processed"},
				"Persistence": {"rdb_last_save_time"},
				"Replication": {"role"},
				"CPU":         {"used_cpu_sys", "used_cpu_user"},
			} {
				for _, f := range fields {
					if _, ok := im[section][f]; !ok {
						t.Errorf("INFO has no %s in # %s: %v", f, section, im[section])
					}
				}
			}
			if im["Replication"]["role"] != "master" {
				t.Errorf("INFO role = %q", im["Replication"]["role"])
			}
			if cs, err := c.InfoMap(ctx, "commandstats").Result(); err != nil ||
				!strings.HasPrefix(cs["Commandstats"]["cmdstat_client|id"], "calls=") {
				t.Errorf("INFO commandstats = %v, %v", cs, err)
			}
			// MEMORY USAGE: goblin's own accounting (docs/commands.md), at
			// least the key and the value.
			if err := c.Set(ctx, "mu", strings.Repeat("x", 1000), 0).Err(); err != nil {
				t.Fatal(err)
			}
			if n, err := c.MemoryUsage(ctx, "mu").Result(); err != nil || n < 1002 || n > 2000 {
				t.Errorf("MEMORY USAGE = %d, %v", n, err)
			}
			// DUMP/RESTORE: goblin's payload is Redis's, byte for byte;
			// it restores on goblin with its TTL and REPLACE, and each
			// server restores the other's.
			payload := setAndDump(t, c, "dumped", "12345")
			theirPayload := setAndDump(t, ref, "dumped", "12345")
			if payload != theirPayload {
				t.Errorf("DUMP: goblin %q, redis %q", payload, theirPayload)
			}
			c.Del(ctx, "restored")
			if err := c.Restore(ctx, "restored", time.Minute, payload).Err(); err != nil {
				t.Fatalf("RESTORE: %v", err)
			}
			if ttl, err := c.TTL(ctx, "restored").Result(); err != nil || ttl <= 0 || ttl > time.Minute {
				t.Errorf("TTL after RESTORE = %v, %v", ttl, err)
			}
			if err := c.Restore(ctx, "restored", 0, payload).Err(); err == nil || err.Error() != "BUSYKEY Target key name already exists." {
				t.Errorf("RESTORE onto a key: %v", err)
			}
			if err := c.RestoreReplace(ctx, "restored", 0, theirPayload).Err(); err != nil {
				t.Errorf("RESTORE REPLACE of Redis's payload: %v", err)
			}
			if v, err := c.Get(ctx, "restored").Result(); err != nil || v != "12345" {
				t.Errorf("restored %q, %v", v, err)
			}
			if enc, err := c.ObjectEncoding(ctx, "restored").Result(); err != nil || enc != "int" {
				t.Errorf("restored encoding %q, %v", enc, err)
			}
			if err := ref.RestoreReplace(ctx, "fromgoblin", 0, payload).Err(); err != nil {
				t.Errorf("Redis's RESTORE of goblin's payload: %v", err)
			} else if v, err := ref.Get(ctx, "fromgoblin").Result(); err != nil || v != "12345" {
				t.Errorf("on Redis, goblin's payload restored %q, %v", v, err)
			}
			bad := flipLastBit(payload)
			want := ref.RestoreReplace(ctx, "dumped", 0, bad).Err()
			if err := c.RestoreReplace(ctx, "restored", 0, bad).Err(); err == nil || want == nil || err.Error() != want.Error() {
				t.Errorf("RESTORE of a damaged payload: %v; Redis refuses it with %v", err, want)
			}
		})
	}
}

// setAndDump sets key to val on c and returns DUMP's payload.
func setAndDump(t *testing.T, c *redis.Client, key, val string) string {
	t.Helper()
	ctx := context.Background()
	if err := c.Set(ctx, key, val, 0).Err(); err != nil {
		t.Fatal(err)
	}
	payload, err := c.Dump(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	return payload
}

// TestGoRedisSelectDB: a go-redis client configured with DB 3 (SELECT 3
// on every connection) sees database 3 only.
func TestGoRedisSelectDB(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ctx := context.Background()
	c0 := redis.NewClient(&redis.Options{Network: "unix", Addr: s.sock, PoolSize: 2})
	defer c0.Close()
	c3 := redis.NewClient(&redis.Options{Network: "unix", Addr: s.sock, PoolSize: 2, DB: 3})
	defer c3.Close()
	if err := c3.Set(ctx, "k", "in3", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c0.Get(ctx, "k").Err(); err != redis.Nil {
		t.Fatalf("database 0 sees database 3's key: %v", err)
	}
	if n, err := c3.DBSize(ctx).Result(); err != nil || n != 1 {
		t.Fatalf("DBSIZE in 3 = %d, %v", n, err)
	}
	if im, err := c0.InfoMap(ctx, "keyspace").Result(); err != nil || !strings.HasPrefix(im["Keyspace"]["db3"], "keys=1,") {
		t.Fatalf("INFO keyspace = %v, %v", im, err)
	}
}

// TestRedisCLIKeyspaceTools runs redis-cli's keyspace tools against
// goblin-server: --scan (with --pattern), --bigkeys and --memkeys, in
// database 0 and with -n 3.
func TestRedisCLIKeyspaceTools(t *testing.T) {
	t.Parallel()
	cli := testkit.Need(t, "redis-cli", "redis-cli's --scan, --bigkeys and --memkeys against goblin-server")
	s := startServer(t)
	ctx := context.Background()
	c0 := redis.NewClient(&redis.Options{Network: "unix", Addr: s.sock, PoolSize: 1})
	defer c0.Close()
	c3 := redis.NewClient(&redis.Options{Network: "unix", Addr: s.sock, PoolSize: 1, DB: 3})
	defer c3.Close()
	var want0, want3 []string
	for i := range 300 { // several SCAN pages
		k := fmt.Sprintf("user:%d", i)
		if err := c0.Set(ctx, k, strings.Repeat("v", i%50), 0).Err(); err != nil {
			t.Fatal(err)
		}
		want0 = append(want0, k)
	}
	if err := c0.Set(ctx, "big", strings.Repeat("b", 5000), 0).Err(); err != nil {
		t.Fatal(err)
	}
	want0 = append(want0, "big")
	for i := range 5 {
		k := fmt.Sprintf("three:%d", i)
		if err := c3.Set(ctx, k, strings.Repeat("t", 10+i), 0).Err(); err != nil {
			t.Fatal(err)
		}
		want3 = append(want3, k)
	}
	// Database 5 holds collections: two hashes (a listpack and a hashtable),
	// a list and a set.
	c5 := redis.NewClient(&redis.Options{Network: "unix", Addr: s.sock, PoolSize: 1, DB: 5})
	defer c5.Close()
	for i := range 600 {
		if err := c5.HSet(ctx, "user:1", fmt.Sprintf("field:%d", i), "v").Err(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 10 {
		c5.HSet(ctx, "user:2", fmt.Sprintf("f%d", i), i)
	}
	for i := range 300 {
		c5.RPush(ctx, "jobs", i)
	}
	c5.SAdd(ctx, "tags", "a", "b", "c")
	run := func(args ...string) string {
		out, err := exec.Command(cli, append(strings.Fields("-s "+s.sock), args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("redis-cli %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	lines := func(out string) []string {
		l := strings.Fields(out)
		slices.Sort(l)
		return l
	}
	slices.Sort(want0)
	slices.Sort(want3)
	if got := lines(run("--scan")); !slices.Equal(got, want0) {
		t.Errorf("--scan: %d keys, want %d", len(got), len(want0))
	}
	if got := lines(run("--scan", "--pattern", "user:1?")); len(got) != 10 || got[0] != "user:10" || got[9] != "user:19" {
		t.Errorf("--scan --pattern user:1?: %q", got)
	}
	if got := lines(run("-n", "3", "--scan")); !slices.Equal(got, want3) {
		t.Errorf("-n 3 --scan: %q, want %q", got, want3)
	}
	if got := run("-n", "3", "DBSIZE"); got != "5\n" {
		t.Errorf("-n 3 DBSIZE: %q", got)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--bigkeys"}, []string{"Sampled 301 keys in the keyspace!", `Biggest string found '"big"' has 5000 bytes`,
			"301 strings with 12350 bytes (100.00% of keys"}},
		{[]string{"-n", "3", "--bigkeys"}, []string{"Sampled 5 keys in the keyspace!", `Biggest string found '"three:4"' has 14 bytes`,
			"5 strings with 60 bytes (100.00% of keys"}},
		{[]string{"--memkeys"}, []string{"Sampled 301 keys in the keyspace!", `Biggest string found '"big"' has `, "301 strings with "}},
		{[]string{"-n", "3", "--memkeys"}, []string{"Sampled 5 keys in the keyspace!", "5 strings with "}},
		{[]string{"-n", "5", "--bigkeys"}, []string{"Sampled 4 keys in the keyspace!", `Biggest   list found '"jobs"' has 300 items`,
			`Biggest   hash found '"user:1"' has 600 fields`, `Biggest    set found '"tags"' has 3 members`,
			"2 hashs with 610 fields (50.00% of keys", "1 lists with 300 items (25.00% of keys", "1 sets with 3 members (25.00% of keys"}},
		{[]string{"-n", "5", "--memkeys"}, []string{"Sampled 4 keys in the keyspace!", `Biggest   hash found '"user:1"' has `,
			"2 hashs with ", "1 lists with ", "1 sets with "}},
	} {
		out := run(c.args...)
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("redis-cli %s: no %q in\n%s", strings.Join(c.args, " "), w, out)
			}
		}
	}
}

// TestDatabasesFlag: --databases sets how many databases SELECT chooses
// from, and CONFIG GET databases says so; out of range it is refused at
// start.
func TestDatabasesFlag(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--databases", "4")
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: s.sock, PoolSize: 1})
	defer c.Close()
	if err := c.Do(ctx, "SELECT", "3").Err(); err != nil {
		t.Fatalf("SELECT 3 of 4: %v", err)
	}
	if err := c.Do(ctx, "SELECT", "4").Err(); err == nil || err.Error() != "ERR DB index is out of range" {
		t.Fatalf("SELECT 4 of 4: %v", err)
	}
	if got, err := c.ConfigGet(ctx, "databases").Result(); err != nil || got["databases"] != "4" {
		t.Fatalf("CONFIG GET databases = %v, %v", got, err)
	}
	for _, bad := range []string{"0", "1025"} {
		out, err := exec.Command(testproc.Build(t, "./cmd/goblin-server"), "--databases", bad, "--listen", "tcp://127.0.0.1:0").CombinedOutput()
		if err == nil || !strings.Contains(string(out), "--databases "+bad+": want 1 to 1024") {
			t.Errorf("--databases %s: %v, %s", bad, err, out)
		}
	}
}
