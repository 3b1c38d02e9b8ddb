package aeron

import (
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron/driver"
)

// TestIdleRunnerLooksRarelyWhileAConnectionWorks: while a connection works
// a client's driver, the idle runner only looks now and then whether it
// stopped (each look takes a core for a moment, which slows a round trip
// of the spinning connection on two cores): every idleCheck (16 ms), not
// every idleAfter (2 ms, 500 looks a second before). Sleeps only ever
// last longer than asked, so load cannot make this fail.
func TestIdleRunnerLooksRarelyWhileAConnectionWorks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "aeron")
	d, err := driver.New(driver.Options{Dir: dir, DirDeleteOnShutdown: true})
	if err != nil {
		t.Fatal(err)
	}
	e := &embedded{dir: dir, d: d, start: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	var looks atomic.Int64
	e.begin() // a connection works the driver from the start
	go e.idleRunner(func(d time.Duration) {
		looks.Add(1)
		time.Sleep(d)
	})
	const busy = 300 * time.Millisecond
	time.Sleep(busy)
	n := looks.Load()
	e.end()
	close(e.stop)
	<-e.done
	if err := d.Close(); err != nil {
		t.Error(err)
	}
	// One look per 10 ms at most: 2 ms looks would be 150 here.
	if limit := int64(busy / (10 * time.Millisecond)); n > limit {
		t.Errorf("the idle runner looked %d times in %v while a connection worked the driver, want at most %d (one per 10 ms)", n, busy, limit)
	}
	if n == 0 {
		t.Error("the idle runner never looked")
	}
}
