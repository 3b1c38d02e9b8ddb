package driver

import (
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// doorbells let a process that embeds a Start-ed driver wake its parked
// goroutine at once instead of waiting out the park (up to MaxPark, 1 ms):
//
//   - Wake: a client of this process has just offered on a publication.
//     The sender looks at a publication's log only on its duty cycle, so
//     without the doorbell a message offered to a parked driver waits for
//     the park to end before it leaves (half a park on average);
//   - WorkFD: the other way round, for an owner that parks on descriptors
//     of its own (the store loop of a replica subscribing through the
//     driver): an eventfd the driver rings after a duty cycle that did
//     work (a datagram written into an image) once the owner armed it.
//
// Both are a pair of flags and an eventfd, in the Dekker pattern: each
// side stores its flag, then loads the other's, so at least one of them
// sees the other's store (Go's atomics are sequentially consistent; the
// stores of the log's frames that come before are ordered with them by
// the locked instructions of Store, Swap and CompareAndSwap).
type doorbells struct {
	// Wake's side. pending: a client offered since the goroutine last
	// looked (written by Wake, any goroutine; cleared by the driver's
	// goroutine before each duty cycle). parked: the driver's goroutine is
	// parked or about to (written by it; cleared by whichever Wake rings
	// wakeFD). rung: wakeFD was written and not yet drained (set by the
	// Wake that wrote it, after the write; cleared by the driver's
	// goroutine, which then reads wakeFD).
	pending atomic.Bool
	_       [60]byte // 64 bytes from pending: the flags the two sides write on two cache lines
	parked  atomic.Bool
	rung    atomic.Bool
	wakeFD  int      // in the poller's epoll set for the driver's life
	_       [48]byte // workArmed 64 bytes from parked

	// WorkFD's side. workArmed: the owner is about to park on workFD
	// (set by ArmWorkFD, any goroutine; cleared by the duty cycle that
	// rings). workRung: workFD was written and not yet drained (set by
	// the driver's goroutine after the write; cleared by DrainWorkFD).
	workArmed atomic.Bool
	workRung  atomic.Bool
	workFD    int
	// workUsed: ArmWorkFD was ever called (set once by it, read by the
	// driver's goroutine after each cycle that did work), so a driver
	// nobody parks beside (aeronmd) skips afterWork's locked instruction.
	// A cycle that reads it stale, just after the very first arm, rings
	// nothing: that owner waits out one park.
	workUsed atomic.Bool
}

// newDoorbells makes the two eventfds and puts the wake one in the
// driver's poller set (it stays there: unlike a socket, an eventfd costs
// nothing while nobody writes it).
func newDoorbells(pollFD int) (*doorbells, error) {
	wake, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	work, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(wake)
		return nil, err
	}
	if err := unix.EpollCtl(pollFD, unix.EPOLL_CTL_ADD, wake, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wake)}); err != nil {
		unix.Close(wake)
		unix.Close(work)
		return nil, err
	}
	return &doorbells{wakeFD: wake, workFD: work}, nil
}

func (b *doorbells) close() {
	unix.Close(b.wakeFD)
	unix.Close(b.workFD)
}

var one = [8]byte{1} // an eventfd's increment, native (little-endian) order

// ring writes an eventfd (a full counter, EAGAIN, is as good as a write).
func ring(fd int) { unix.Write(fd, one[:]) }

// drain reads an eventfd back to zero.
func drain(fd int) {
	var buf [8]byte
	unix.Read(fd, buf[:])
}

// Wake tells a Start-ed driver that a client of this process has just
// offered on a publication: a parked driver wakes at once and sends it.
// Any goroutine may call it; on a driver that is not parked it costs an
// atomic store and load, and on a New driver (whose owner runs the duty
// cycle) or one with an idle strategy of its own it does nothing.
func (d *Driver) Wake() {
	b := d.bells
	if b == nil {
		return
	}
	b.pending.Store(true)
	if b.parked.Load() && b.parked.CompareAndSwap(true, false) {
		ring(b.wakeFD)
		b.rung.Store(true)
	}
}

// WorkFD is an eventfd that polls readable after a duty cycle of a
// Start-ed driver did work (read datagrams into an image, sent, answered
// a client) once ArmWorkFD armed it: an owner that parks on descriptors
// of its own puts it in its set. −1 for a New driver.
func (d *Driver) WorkFD() int {
	if d.bells == nil {
		return -1
	}
	return d.bells.workFD
}

// ArmWorkFD arms WorkFD for the next duty cycle that does work. Call it
// just before parking, then look once more at what the driver feeds (the
// images): a cycle that ran between that look and the arm is seen by the
// look, one after it rings. Any goroutine.
func (d *Driver) ArmWorkFD() {
	if b := d.bells; b != nil {
		if !b.workUsed.Load() {
			b.workUsed.Store(true)
		}
		b.workArmed.Store(true)
	}
}

// DrainWorkFD makes WorkFD unreadable again after it rang (a read only
// then). Call it when the park ends.
func (d *Driver) DrainWorkFD() {
	b := d.bells
	if b != nil && b.workRung.Load() {
		b.workRung.Store(false)
		drain(b.workFD)
	}
}

// beforeCycle: the duty cycle about to run looks at every publication,
// so what was offered so far needs no wake.
func (b *doorbells) beforeCycle() {
	if b.pending.Load() {
		b.pending.Store(false)
	}
}

// afterWork rings WorkFD if it is armed. The CompareAndSwap is a full
// barrier even when it fails: the frames the cycle wrote are visible
// before the flag is read.
func (b *doorbells) afterWork() {
	if !b.workUsed.Load() {
		return
	}
	if b.workArmed.CompareAndSwap(true, false) {
		ring(b.workFD)
		b.workRung.Store(true)
	}
}

// park announces the park and reports whether to go ahead: false when a
// client offered since the last cycle (the cycle may have missed it).
func (b *doorbells) park() bool {
	b.parked.Store(true)
	if b.pending.Load() {
		b.parked.Store(false)
		return false
	}
	return true
}

// unparked ends a park: a Wake that rang is drained.
func (b *doorbells) unparked() {
	b.parked.Store(false)
	if b.rung.Load() {
		b.rung.Store(false)
		drain(b.wakeFD)
	}
}
