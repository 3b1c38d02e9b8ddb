package aeronsource

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// waiter is what the store loop parks on for a Source (its WaitFD): an
// epoll set of the link's descriptor (the TCP phase), the media driver's
// WorkFD (rung by the driver's goroutine after a duty cycle that did work,
// such as writing a datagram of the stream into the image, once armed) and
// an eventfd of its own (rung by PrepareToWait itself when a message waits
// already). Without the driver's bell a parked loop saw the live stream
// only when its park ended: up to the loop's longest park (1 ms) on every
// write that came to an idle replica.
type waiter struct {
	epfd   int
	selfFD int
	// selfRung: selfFD was written and not yet drained (loop goroutine
	// only, as every method of the Source).
	selfRung bool
}

func newWaiter(linkFD, workFD int) (*waiter, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("aeronsource: epoll_create: %w", err)
	}
	self, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("aeronsource: eventfd: %w", err)
	}
	w := &waiter{epfd: epfd, selfFD: self}
	for _, fd := range []int{linkFD, workFD, self} {
		if fd < 0 {
			continue
		}
		if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}); err != nil {
			w.close()
			return nil, fmt.Errorf("aeronsource: epoll_ctl on descriptor %d: %w", fd, err)
		}
	}
	return w, nil
}

func (w *waiter) close() {
	unix.Close(w.epfd)
	unix.Close(w.selfFD)
}

// PrepareToWait implements server.WaitPreparer: the loop is about to park
// on WaitFD. It arms the driver's bell, then looks once more for a message
// in the subscription's images: one the driver wrote before the arm rings
// nothing, so the look rings the Source's own eventfd and the park ends
// at once. (The arm is a store the driver's CompareAndSwap after its
// cycle is ordered with: either that cycle sees the arm and rings, or this
// look sees its frames.)
func (s *Source) PrepareToWait() {
	s.media.Driver.ArmWorkFD()
	if s.sub == nil {
		return
	}
	for _, img := range s.sub.Images() {
		// A view, not a copy (a fragmented message, rare, is copied).
		if _, ok := img.PeekMessage(nil); ok {
			one := [8]byte{1}
			unix.Write(s.wait.selfFD, one[:])
			s.wait.selfRung = true
			return
		}
	}
}

// unpark drains whichever bell rang, at the start of every Poll (two
// atomic loads when none did).
func (s *Source) unpark() {
	s.media.Driver.DrainWorkFD()
	if s.wait.selfRung {
		s.wait.selfRung = false
		var buf [8]byte
		unix.Read(s.wait.selfFD, buf[:])
	}
}
