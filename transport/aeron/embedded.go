package aeron

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goblin-kv/goblin/aeron/driver"
)

// embedded is a media driver inside this process (package aeron/driver)
// with no thread of its own: the store loop runs its duty cycle from
// Server.Poll, and any goroutine of this process that waits on it (the
// server's manager adding a publication, an in-process client dialing, a
// UDP client waiting for a reply) runs a cycle while it waits. Whoever
// holds mu runs the cycle, so cycles never overlap and a contended call
// simply skips its turn. A client's driver has, besides, an idle runner:
// a goroutine that keeps the driver's timers (status messages, heartbeats)
// going while no connection works it.
type embedded struct {
	dir   string
	d     *driver.Driver
	start time.Time
	mu    sync.Mutex // held while running a duty cycle or closing
	gone  bool       // closed (under mu)
	// lastNow is the clock of the last duty cycle (under mu).
	lastNow int64
	refs    int // users (under embeddedDrivers.mu, or clientDriver.mu for a client's)

	// A client's driver: connections working it now, and when the last of
	// them stopped (on the driver's clock); the idle runner takes over
	// once none has worked it for idleAfter.
	active     atomic.Int32
	lastActive atomic.Int64
	stop       chan struct{}
	done       chan struct{}
	ownDir     string // a client's driver's private directory, removed at close
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
		log.Debug("aeron listener shares this process's in-process media driver", "dir", dir, "driver", "go", "listeners", e.refs)
		return e, nil
	}
	o := driver.Options{
		Dir:                 dir,
		DirDeleteOnShutdown: true,
		Group:               group,
		Warn:                func(msg string) { log.Warn("aeron driver: " + msg) },
		ErrorHandler:        func(err error) { log.Debug("aeron driver refused a command", "err", err) },
	}
	// The limits on what senders on the network can make it allocate
	// (docs/aeron.md, "Trust model") come from the AERON_* environment.
	if err := driver.PropertiesFromEnv(os.Environ()).ApplyImageLimits(&o); err != nil {
		return nil, fmt.Errorf("aeron transport: the in-process media driver's image limits: %w", err)
	}
	d, err := driver.New(o)
	if err != nil {
		return nil, fmt.Errorf("aeron transport: start the in-process media driver in %s: %w", dir, err)
	}
	e := &embedded{dir: dir, d: d, start: time.Now(), refs: 1}
	embeddedDrivers.m[dir] = e
	log.Info("aeron media driver running in-process", "dir", dir, "driver", "go")
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
	return e.close()
}

func (e *embedded) close() error {
	if e.stop != nil {
		close(e.stop)
		<-e.done
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.gone = true
	err := e.d.Close()
	if e.ownDir != "" {
		os.RemoveAll(e.ownDir)
	}
	return err
}

// now is the driver's clock: nanoseconds since the driver started.
func (e *embedded) now() int64 { return int64(time.Since(e.start)) }

// work runs one duty cycle unless another goroutine is running one, and
// returns the work it did. It allocates nothing.
func (e *embedded) work() int { return e.workAt(e.now()) }

// workAt is work at now, the driver's clock as the caller read it or
// derived it from its own (the server's loop), which saves a cycle a
// clock read. Goroutines read the clock at slightly different moments, so
// a now before the last cycle's runs as the last cycle's: the driver's
// clock never goes back.
func (e *embedded) workAt(now int64) int {
	if !e.mu.TryLock() {
		return 0
	}
	n := 0
	if !e.gone {
		now = max(now, e.lastNow)
		e.lastNow = now
		n = e.d.DoWork(now)
	}
	e.mu.Unlock()
	return n
}

// deadline is when the driver must run again (its Deadline, on the
// server's clock), at most limit; when another goroutine is running a
// cycle right now, soon.
func (e *embedded) deadline(limit int64) int64 {
	if !e.mu.TryLock() {
		return e.now() + int64(driverMinGap)
	}
	if !e.gone {
		limit = min(limit, e.d.Deadline())
	}
	e.mu.Unlock()
	return limit
}

// begin and end bracket a connection's call that works the driver itself
// (it runs work while it waits): meanwhile the idle runner stays away.
func (e *embedded) begin() { e.active.Add(1) }

func (e *embedded) end() {
	e.lastActive.Store(e.now())
	e.active.Add(-1)
}

// The process's own UDP client driver: one in-process Go driver shared by
// the process's UDP connections that name no dir, started with the first
// and closed with the last (the two-driver case, the client's half).
var clientDriver struct {
	mu sync.Mutex
	e  *embedded
}

// idleAfter is how long no connection may have worked a client's driver
// before its idle runner does; idleCheck is how often the runner looks
// while a connection works it, and idlePark bounds one of its parks on the
// driver's sockets. Each look takes a core for a moment, which on two
// cores busy with spinning threads slows a round trip: idleCheck is the
// Aeron client conductor's idle sleep, not idleAfter (at 2 ms the looks
// were 500 a second).
const (
	idleAfter = 2 * time.Millisecond
	idleCheck = 16 * time.Millisecond
	idlePark  = 50 * time.Millisecond
)

// acquireClientDriver returns the process's UDP client driver, starting
// it (in a private directory under /dev/shm) the first time.
func acquireClientDriver() (*embedded, error) {
	clientDriver.mu.Lock()
	defer clientDriver.mu.Unlock()
	if e := clientDriver.e; e != nil {
		e.refs++
		return e, nil
	}
	base := os.TempDir()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		base = "/dev/shm"
	}
	own, err := os.MkdirTemp(base, "goblin-aeron-client-")
	if err != nil {
		return nil, fmt.Errorf("aeron transport: the client's media driver directory: %w", err)
	}
	dir := filepath.Join(own, "aeron")
	d, err := driver.New(driver.Options{Dir: dir, DirDeleteOnShutdown: true})
	if err != nil {
		os.RemoveAll(own)
		return nil, fmt.Errorf("aeron transport: start the client's in-process media driver in %s: %w", dir, err)
	}
	e := &embedded{dir: dir, d: d, start: time.Now(), refs: 1, ownDir: own,
		stop: make(chan struct{}), done: make(chan struct{})}
	embeddedDrivers.mu.Lock()
	embeddedDrivers.m[dir] = e
	embeddedDrivers.mu.Unlock()
	go e.idleRunner(time.Sleep)
	clientDriver.e = e
	return e, nil
}

// releaseClient drops one reference to the process's client driver; the
// last closes it.
func (e *embedded) releaseClient() {
	clientDriver.mu.Lock()
	e.refs--
	last := e.refs == 0
	if last {
		clientDriver.e = nil
	}
	clientDriver.mu.Unlock()
	if !last {
		return
	}
	embeddedDrivers.mu.Lock()
	delete(embeddedDrivers.m, e.dir)
	embeddedDrivers.mu.Unlock()
	e.close()
}

// idleRunner keeps a client's driver going while no connection works it:
// it parks on the driver's sockets until a datagram comes or a timer of
// the driver is due, then runs a duty cycle. While a connection works the
// driver it only looks every idleCheck, and after one stopped it waits
// until idleAfter has passed, so it never competes with a spinning
// connection for the driver or the CPU. It waits with sleep (time.Sleep;
// tests count the looks).
func (e *embedded) idleRunner(sleep func(time.Duration)) {
	defer close(e.done)
	events := make([]unix.EpollEvent, 1)
	for {
		select {
		case <-e.stop:
			return
		default:
		}
		now := e.now()
		if e.active.Load() > 0 {
			sleep(idleCheck)
			continue
		}
		if quiet := time.Duration(now - e.lastActive.Load()); quiet < idleAfter {
			sleep(idleAfter - quiet)
			continue
		}
		e.work()
		deadline := e.now() + int64(idlePark)
		if e.mu.TryLock() {
			if !e.gone {
				deadline = e.d.Deadline()
			}
			e.mu.Unlock()
		}
		wait := time.Duration(deadline - e.now())
		wait = max(min(wait, idlePark), time.Millisecond)
		e.d.PrepareToWait() // a failure leaves a blind park of at most wait
		unix.EpollWait(e.d.WaitFD(), events, int(wait/time.Millisecond))
	}
}
