package glob

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// TestMatchAgainstRedis holds the reference matcher FuzzMatch trusts, and
// Match, to redis-server 7.0's KEYS: random patterns over the characters
// that mean something to a glob (and a few that do not) against a
// keyspace of random short keys, every key's answer compared.
func TestMatchAgainstRedis(t *testing.T) {
	bin := testkit.Need(t, "redis-server", "the real glob matcher (KEYS) the reference is checked against")
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	testproc.Start(t, bin, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", dir)
	testproc.WaitDial(t, "unix", sock, 30*time.Second)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 1, Protocol: 2})
	defer c.Close()

	rng := rand.New(rand.NewPCG(15, 42))
	word := func(alphabet string, most int) string {
		b := make([]byte, rng.IntN(most+1))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	const keyChars, patChars = "ab-]^\\[*?z", "ab*?[]^-\\z"
	keys := map[string]bool{"": true}
	for len(keys) < 300 {
		keys[word(keyChars, 5)] = true
	}
	pipe := c.Pipeline()
	for k := range keys {
		pipe.Set(ctx, k, "v", 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	patterns := []string{"", "*", "[", "]", "\\", "[]]", "[^]]", "[a-", "[z-a]", "a\\", "[\\]"}
	for len(patterns) < 1500 {
		patterns = append(patterns, word(patChars, 7))
	}
	mismatches := 0
	for _, p := range patterns {
		got, err := c.Keys(ctx, p).Result()
		if err != nil {
			t.Fatalf("KEYS %q: %v", p, err)
		}
		if p == "*" {
			// KEYS * lists every key without matching, the empty key
			// too, which the matcher itself does not match (the engine
			// does the same: command's oracle).
			if len(got) != len(keys) {
				t.Errorf("KEYS * listed %d of %d keys", len(got), len(keys))
			}
			continue
		}
		matched := map[string]bool{}
		for _, k := range got {
			matched[k] = true
		}
		for k := range keys {
			ref, ours := reference([]byte(p), []byte(k), false), Match([]byte(p), []byte(k))
			if ref != matched[k] || ours != matched[k] {
				t.Errorf("pattern %q, key %q: redis %v, reference %v, Match %v", p, k, matched[k], ref, ours)
				if mismatches++; mismatches > 20 {
					t.FailNow()
				}
			}
		}
	}
}
