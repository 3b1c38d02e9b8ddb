package aeron

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/goblin-kv/goblin/aeron/driver"
)

// embedded is a media driver inside this process (package aeron/driver)
// with no thread of its own: the store loop runs its duty cycle from
// Server.Poll, and any goroutine of this process that waits on it (the
// server's manager adding a publication, an in-process client dialing)
// runs a cycle while it waits. Whoever holds mu runs the cycle, so cycles
// never overlap and a contended call simply skips its turn.
type embedded struct {
	dir   string
	d     *driver.Driver
	start time.Time
	mu    sync.Mutex // held while running a duty cycle or closing
	gone  bool       // closed (under mu)
	refs  int        // listeners using it (under embeddedDrivers.mu)
}

// embeddedDrivers are this process's in-process drivers by directory.
var embeddedDrivers = struct {
	mu sync.Mutex
	m  map[string]*embedded
}{m: map[string]*embedded{}}

// acquireEmbedded returns this process's driver in dir, creating it the
// first time; each acquire needs a release.
func acquireEmbedded(dir, group string, log *slog.Logger) (*embedded, error) {
	dir = absDir(dir)
	embeddedDrivers.mu.Lock()
	defer embeddedDrivers.mu.Unlock()
	if e := embeddedDrivers.m[dir]; e != nil {
		e.refs++
		return e, nil
	}
	d, err := driver.New(driver.Options{
		Dir:                 dir,
		DirDeleteOnShutdown: true,
		Group:               group,
		Warn:                func(msg string) { log.Warn("aeron driver: " + msg) },
		ErrorHandler:        func(err error) { log.Debug("aeron driver refused a command", "err", err) },
	})
	if err != nil {
		return nil, fmt.Errorf("aeron transport: start the in-process media driver in %s: %w", dir, err)
	}
	e := &embedded{dir: dir, d: d, start: time.Now(), refs: 1}
	embeddedDrivers.m[dir] = e
	return e, nil
}

// findEmbedded returns this process's driver in dir, or nil.
func findEmbedded(dir string) *embedded {
	embeddedDrivers.mu.Lock()
	defer embeddedDrivers.mu.Unlock()
	return embeddedDrivers.m[absDir(dir)]
}

func absDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// release drops one reference; the last closes the driver (its logs go
// and its CnC is marked shut down for other processes' clients).
func (e *embedded) release() error {
	embeddedDrivers.mu.Lock()
	e.refs--
	last := e.refs == 0
	if last {
		delete(embeddedDrivers.m, e.dir)
	}
	embeddedDrivers.mu.Unlock()
	if !last {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.gone = true
	return e.d.Close()
}

// work runs one duty cycle unless another goroutine is running one, and
// returns the work it did. It allocates nothing.
func (e *embedded) work() int {
	if !e.mu.TryLock() {
		return 0
	}
	n := 0
	if !e.gone {
		n = e.d.DoWork(int64(time.Since(e.start)))
	}
	e.mu.Unlock()
	return n
}

// assistFor is the aeron client hook for a client of the driver in dir:
// when that driver runs inside this process, a goroutine waiting on it
// runs its duty cycle (nil otherwise).
func assistFor(dir string) func() int {
	if e := findEmbedded(dir); e != nil {
		return e.work
	}
	return nil
}
