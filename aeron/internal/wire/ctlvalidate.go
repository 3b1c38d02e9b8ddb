package wire

import "github.com/goblin-kv/goblin/internal/shm"

// ControlFrame checks the frame a sender's control socket read, before
// any field of it is trusted (aeron_send_channel_endpoint_dispatch, a
// little stricter): the datagram holds a frame of the current version
// whose length field is at least the header length of its type and at
// most the datagram's length; a status message's window is not negative;
// an ERR frame's message fits its frame and
// ErrMaxMessageLength. It returns the frame cut to its
// length (an SM's to its fixed part unless it carries exactly a group
// tag, so the tag is read only when there is one),
// and ok false for a malformed frame of a type a sender reads, which the
// caller drops and counts as an invalid packet. Frames of other types
// come back whole with ok true: a sender ignores them.
func ControlFrame(p []byte) (frame []byte, ok bool) {
	if !Valid(p) {
		return nil, false
	}
	var min int
	switch Header(p).Type() {
	case TypeNak:
		min = NakLength
	case TypeSM:
		min = SMLength
	case TypeErr:
		min = ErrHeaderLength
	case TypeRTTM:
		min = RTTMLength
	case TypeRspSetup:
		min = RspSetupLength
	default:
		return p, true
	}
	n := int(Header(p).FrameLength())
	if n < min || n > len(p) {
		return nil, false
	}
	frame = p[:n:n]
	switch Header(p).Type() {
	case TypeSM:
		if SM(frame).ReceiverWindow() < 0 {
			return nil, false
		}
		if n != SMLengthWithGroupTag {
			// Application-specific feedback other than a group tag is
			// not read (StatusMessageFlyweight.groupTag).
			frame = frame[:SMLength:SMLength]
		}
	case TypeErr:
		if l := shm.GetInt32(frame, ErrMessageLengthOffset); l < 0 || l > ErrMaxMessageLength || int(l) > n-ErrMessageOffset {
			return nil, false
		}
	}
	return frame, true
}
