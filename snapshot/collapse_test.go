package snapshot

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/store"
)

// TestCollapseOnlyAfterAWholeLoad: a load given up (Close before its end:
// a shutdown, a full resync replacing it) starts no collapse, its chunks
// about to be flushed; a load that completes starts one, on a thread that
// ends with it, and every region it took is counted.
func TestCollapseOnlyAfterAWholeLoad(t *testing.T) {
	src := newStores(t, 1)[0]
	val := bytes.Repeat([]byte("v"), 100)
	for i := range 100_000 { // ~11 MB of chunks: beyond the arena's Go-heap chunks
		src.Set(nil, []byte("k"+strconv.Itoa(i)), val, store.SetOptions{})
	}
	b := saveBytes(t, src, Options{})
	load := func(whole bool) {
		dst := newStores(t, 1)[0]
		l := NewLoader(bytes.NewReader(b), func(int) (*store.Store, error) { return dst, nil }, LoadOptions{})
		lim := StepLimit{}
		if !whole {
			lim.Bytes = int64(len(b)) * 3 / 4
		}
		done, err := l.Step(lim)
		if err != nil || done != whole {
			t.Fatalf("step: done %v, %v; want done %v", done, err, whole)
		}
		l.Close()
		if !whole {
			dst.Flush()
		}
	}
	before := ReadCollapseStats()
	load(false)
	if st := ReadCollapseStats(); st.Started != before.Started {
		t.Fatalf("a load given up started a collapse: %+v, before %+v", st, before)
	}
	load(true)
	var st CollapseStats
	testkit.Eventually(t, 20*time.Second, "the collapse after a whole load to end", func() (bool, string) {
		st = ReadCollapseStats()
		return st.Started == before.Started+1 && st.Running == 0, fmt.Sprintf("collapse counts %+v (started before: %d)", st, before.Started)
	})
	if st.Collapsed+st.Failed == before.Collapsed+before.Failed {
		t.Fatalf("the collapse tried no region: %+v, before %+v", st, before)
	}
	t.Logf("%+v", st)
}
