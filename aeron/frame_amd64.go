//go:build amd64 && !race

package aeron

import "unsafe"

// appendFrame is implemented in frame_amd64.s; see appendUnfragmented.
//
//go:noescape
func appendFrame(tail *int64, rawTail int64, frame *byte, w0, w1, w2 int64, a *byte, na int, b *byte, nb int, frameLength int32)

// offerFast is implemented in frame_amd64.s.
//
//go:noescape
func offerFast(s *appendState, a *byte, na int, b *byte, nb int) int64

// offerFast appends a and b as one frame when that is the simple case (not
// back-pressured, one frame, room left in the active term) and returns the
// new position; otherwise it writes nothing and returns 0, and the caller
// takes offer2. The caller has checked that the publication is open.
func (p *ExclusivePublication) offerFast(a, b []byte) int64 {
	return offerFast(&p.appendState, unsafe.SliceData(a), len(a), unsafe.SliceData(b), len(b))
}
