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
	roundRobinNext int
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
	imgs, start := s.roundRobin()
	read := 0
	for k := 0; k < len(imgs) && read < limit; k++ {
		read += imgs[wrap(start+k, len(imgs))].Poll(fn, limit-read)
	}
	return read
}

// ControlledPoll is Poll with a ControlledFragmentHandler.
func (s *Subscription) ControlledPoll(fn ControlledFragmentHandler, limit int) int {
	imgs, start := s.roundRobin()
	read := 0
	for k := 0; k < len(imgs) && read < limit; k++ {
		read += imgs[wrap(start+k, len(imgs))].ControlledPoll(fn, limit-read)
	}
	return read
}

// NextMessage appends the next complete message from any image to dst (see
// Image.NextMessage) and returns the image it came from, or ok = false.
func (s *Subscription) NextMessage(dst []byte) (msg []byte, img *Image, ok bool) {
	imgs, start := s.roundRobin()
	for k := range imgs {
		im := imgs[wrap(start+k, len(imgs))]
		if m, ok := im.NextMessage(dst); ok {
			return m, im, true
		}
	}
	return dst, nil, false
}

// roundRobin returns the images and the one a poll starts at, and moves
// the round robin on by one: the three polls visit the images from start
// (wrapping round) so that each gets the first turn in its turn. It is
// small enough to inline into them.
func (s *Subscription) roundRobin() (imgs []*Image, start int) {
	imgs = s.Images()
	if len(imgs) == 0 {
		return nil, 0
	}
	start = s.roundRobinNext
	s.roundRobinNext++
	if start >= len(imgs) {
		start = 0
		s.roundRobinNext = 1
	}
	return imgs, start
}

// wrap is i modulo n for 0 <= i < 2n, without a division.
func wrap(i, n int) int {
	if i >= n {
		i -= n
	}
	return i
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
