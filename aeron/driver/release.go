package driver

import "fmt"

// releaseQueueLength is how many logs may wait for the releaser; a log
// that finds the queue full stays in Driver.endOfLife for a later cycle.
const releaseQueueLength = 32

// logReleaser unmaps and deletes the logs of closed resources on a
// goroutine of its own, so that the duty cycle hands a log over and goes
// on. Freeing a log is kernel work in proportion to its size: for the
// default IPC log (three 64 MiB terms, every page touched) munmap takes
// ~35 ms and the unlink that frees its tmpfs pages ~55 ms on the 2-vCPU
// test machine. Done in the duty cycle (as the Java driver's conductor
// does it), that is ~90 ms in which no limit moves, no command is read
// and no datagram is sent: a publisher of another stream that reaches its
// limit waits that long (BenchmarkGoDriverThroughput's rounds start while
// the previous round's log is freed, and its publisher sat at its limit
// for 50–110 ms of them).
//
// Ownership: the conductor hands a log over on queue and never touches it
// again (the channel orders the conductor's last writes before the
// releaser's reads); a log whose release failed comes back on failed and
// is the conductor's again, to count, report and retry. A freed log that
// an image's budget still charges (rawLog.imageCharge) comes back on
// freed, so the conductor takes it out of the images length only once its
// file and pages are really gone: until then a stranger's new SETUP can
// not take the directory past aeron.image.buffers.max.length.
type logReleaser struct {
	queue   chan *rawLog
	failed  chan releaseFailure
	freed   chan *rawLog
	done    chan struct{}
	release func(*rawLog) error // (*rawLog).release; tests block it
}

// releaseFailure is a log the releaser could not free and why.
type releaseFailure struct {
	log *rawLog
	err error
}

func newLogReleaser() *logReleaser {
	r := &logReleaser{
		queue:   make(chan *rawLog, releaseQueueLength),
		failed:  make(chan releaseFailure, releaseQueueLength),
		freed:   make(chan *rawLog, releaseQueueLength),
		done:    make(chan struct{}),
		release: (*rawLog).release,
	}
	go r.run()
	return r
}

func (r *logReleaser) run() {
	defer close(r.done)
	for l := range r.queue {
		if err := r.release(l); err != nil {
			r.failed <- releaseFailure{log: l, err: err}
		} else if l.imageCharge != 0 {
			r.freed <- l
		}
	}
}

// hand queues l for release; false when the queue is full. It never
// blocks and allocates nothing.
func (r *logReleaser) hand(l *rawLog) bool {
	select {
	case r.queue <- l:
		return true
	default:
		return false
	}
}

// stop releases what is queued, ends the goroutine and returns the logs
// whose release failed (undelivered failures included). Undelivered
// completions are dropped: the driver is closing.
func (r *logReleaser) stop() []releaseFailure {
	close(r.queue)
	var failures []releaseFailure
	for {
		select {
		case f := <-r.failed:
			failures = append(failures, f)
		case <-r.freed:
		case <-r.done:
			for {
				select {
				case f := <-r.failed:
					failures = append(failures, f)
				case <-r.freed:
				default:
					return failures
				}
			}
		}
	}
}

// freeEndOfLife hands up to limit closed resources' logs to the releaser
// (a full queue leaves the rest for a later cycle), after taking back
// the logs whose release failed: each is counted (counter 17), reported
// and queued again, as the Java driver retries a failed free. The images'
// logs the releaser has freed leave the images length here.
func (c *conductor) freeEndOfLife(limit int) int {
	for {
		select {
		case l := <-c.releaser.freed:
			c.imagesLength -= l.imageCharge
			l.imageCharge = 0
			continue
		default:
		}
		break
	}
	for {
		select {
		case f := <-c.releaser.failed:
			c.counters.AddValue(sysFreeFails, 1)
			c.recordError(fmt.Errorf("free log buffer %s: %w", f.log.path, f.err))
			c.endOfLife = append(c.endOfLife, f.log)
			continue
		default:
		}
		break
	}
	n := 0
	for n < limit && len(c.endOfLife) > 0 {
		l := c.endOfLife[0]
		c.unaccountMapping(l)
		if !c.releaser.hand(l) {
			break
		}
		copy(c.endOfLife, c.endOfLife[1:])
		c.endOfLife[len(c.endOfLife)-1] = nil
		c.endOfLife = c.endOfLife[:len(c.endOfLife)-1]
		n++
	}
	return n
}
