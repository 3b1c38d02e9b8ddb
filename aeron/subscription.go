package aeron

import (
	"sync/atomic"

	"github.com/goblin-kv/goblin/aeron/internal/command"
)

// Subscription receives a stream (channel + stream id) from every publisher
// the driver connects it to, one Image per publisher session. Poll,
// ControlledPoll, NextMessage and Images may be called by one goroutine at a
// time (the poller); the conductor adds and removes images concurrently by
// swapping an immutable image list.
type Subscription struct {
	client         *Client
	channel        string
	streamID       int32
	registrationID int64
	statusID       int32
	images         atomic.Pointer[[]*Image]
	roundRobin     int
	closed         atomic.Bool
	onAvailable    func(*Image)
	onUnavailable  func(*Image)
}

// Channel is the channel URI the subscription was added with.
func (s *Subscription) Channel() string { return s.channel }

// StreamID is the subscription's stream id.
func (s *Subscription) StreamID() int32 { return s.streamID }

// RegistrationID is the driver's id for the subscription. A request
// publication names it in response-correlation-id to ask for responses on
// this (control-mode=response) subscription.
func (s *Subscription) RegistrationID() int64 { return s.registrationID }

// ChannelStatusID is the channel status counter id (−1 for IPC).
func (s *Subscription) ChannelStatusID() int32 { return s.statusID }

// IsClosed reports whether the subscription was closed.
func (s *Subscription) IsClosed() bool { return s.closed.Load() }

// Images returns the current images. The slice is shared and must not be
// modified; it does not allocate.
func (s *Subscription) Images() []*Image {
	if p := s.images.Load(); p != nil {
		return *p
	}
	return nil
}

// ImageCount is the number of connected images.
func (s *Subscription) ImageCount() int { return len(s.Images()) }

// IsConnected reports whether at least one image is connected.
func (s *Subscription) IsConnected() bool {
	for _, img := range s.Images() {
		if !img.IsClosed() {
			return true
		}
	}
	return false
}

// ImageBySessionID returns the image of the given publisher session, or nil.
func (s *Subscription) ImageBySessionID(sessionID int32) *Image {
	for _, img := range s.Images() {
		if img.sessionID == sessionID {
			return img
		}
	}
	return nil
}

// Poll delivers up to limit fragments from the images, starting at a
// different image each call for fairness, and returns how many it delivered.
// It does not allocate.
func (s *Subscription) Poll(fn FragmentHandler, limit int) int {
	imgs := s.Images()
	n := len(imgs)
	if n == 0 {
		return 0
	}
	start := s.nextStart(n)
	read := 0
	for i := start; i < n && read < limit; i++ {
		read += imgs[i].Poll(fn, limit-read)
	}
	for i := 0; i < start && read < limit; i++ {
		read += imgs[i].Poll(fn, limit-read)
	}
	return read
}

// nextStart returns the image (of n > 0) a poll starts at and moves the
// round robin on by one. It is small enough to inline into the poll loops.
func (s *Subscription) nextStart(n int) int {
	start := s.roundRobin
	s.roundRobin++
	if start >= n {
		start = 0
		s.roundRobin = 1
	}
	return start
}

// ControlledPoll is Poll with a ControlledFragmentHandler.
func (s *Subscription) ControlledPoll(fn ControlledFragmentHandler, limit int) int {
	imgs := s.Images()
	n := len(imgs)
	if n == 0 {
		return 0
	}
	start := s.nextStart(n)
	read := 0
	for i := start; i < n && read < limit; i++ {
		read += imgs[i].ControlledPoll(fn, limit-read)
	}
	for i := 0; i < start && read < limit; i++ {
		read += imgs[i].ControlledPoll(fn, limit-read)
	}
	return read
}

// NextMessage appends the next complete message from any image to dst (see
// Image.NextMessage) and returns the image it came from, or ok = false.
func (s *Subscription) NextMessage(dst []byte) (msg []byte, img *Image, ok bool) {
	imgs := s.Images()
	n := len(imgs)
	if n == 0 {
		return dst, nil, false
	}
	start := s.nextStart(n)
	for k := 0; k < n; k++ {
		im := imgs[(start+k)%n]
		if m, ok := im.NextMessage(dst); ok {
			return m, im, true
		}
	}
	return dst, nil, false
}

// AddDestination adds a receive destination (e.g.
// "aeron:udp?endpoint=host:port") to a multi-destination subscription, one
// whose channel has control-mode=manual. It waits for the driver's reply.
func (s *Subscription) AddDestination(channel string) error {
	return s.client.destination(command.AddRcvDestination, s.registrationID, channel)
}

// RemoveDestination removes a destination added with AddDestination.
func (s *Subscription) RemoveDestination(channel string) error {
	return s.client.destination(command.RemoveRcvDestination, s.registrationID, channel)
}

// Close removes the subscription from the driver and closes its images.
func (s *Subscription) Close() error {
	if s.closed.Load() {
		return nil
	}
	return s.client.releaseSubscription(s)
}

// addImage and removeImage run on the conductor (under the client lock);
// the copy-on-write swap publishes the new list to the poller.
func (s *Subscription) addImage(img *Image) {
	old := s.Images()
	next := make([]*Image, len(old), len(old)+1)
	copy(next, old)
	next = append(next, img)
	s.images.Store(&next)
}

func (s *Subscription) removeImage(correlationID int64) *Image {
	old := s.Images()
	for k, img := range old {
		if img.correlationID == correlationID {
			next := make([]*Image, 0, len(old)-1)
			next = append(next, old[:k]...)
			next = append(next, old[k+1:]...)
			s.images.Store(&next)
			return img
		}
	}
	return nil
}
