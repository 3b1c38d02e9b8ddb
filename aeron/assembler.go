package aeron

import (
	"github.com/goblin-kv/goblin/aeron/internal/logbuffer"
	"github.com/goblin-kv/goblin/internal/shm"
)

// FragmentAssembler reassembles fragmented messages, per publisher session,
// before passing them to the wrapped handler; whole messages pass straight
// through without copying. Use one per subscription poller (it is not safe
// for concurrent use). Steady-state reassembly does not allocate.
type FragmentAssembler struct {
	delegate FragmentHandler
	initial  int
	max      int // longest message reassembled; 0: no limit
	buffers  map[int32]*assembly
}

type assembly struct {
	buf        []byte
	nextOffset int32
	active     bool
}

// NewFragmentAssembler wraps fn. initialBufferSize (0 = 4096) sizes each
// session's reassembly buffer, which grows as needed.
func NewFragmentAssembler(fn FragmentHandler, initialBufferSize int) *FragmentAssembler {
	if initialBufferSize <= 0 {
		initialBufferSize = 4096
	}
	return &FragmentAssembler{delegate: fn, initial: initialBufferSize, buffers: make(map[int32]*assembly)}
}

// SetMaxLength drops any message that grows longer than n bytes (n ≤ 0:
// no limit, the default), as it drops one with a gap. A publisher that
// follows the protocol never sends a message longer than its stream's
// maximum message length (term length / 8); one that does not could
// otherwise grow a reassembly buffer without end.
func (a *FragmentAssembler) SetMaxLength(n int) { a.max = n }

// OnFragment is the FragmentHandler to pass to Poll (take the method value
// once, outside the polling loop).
func (a *FragmentAssembler) OnFragment(buffer []byte, h *Header) {
	flags := h.Flags()
	if flags&logbuffer.FlagsUnfragmented == logbuffer.FlagsUnfragmented {
		a.delegate(buffer, h)
		return
	}
	sid := h.SessionID()
	if flags&logbuffer.FlagBegin != 0 {
		as := a.buffers[sid]
		if as == nil {
			as = &assembly{buf: make([]byte, 0, a.initial)}
			a.buffers[sid] = as
		}
		as.buf = append(as.buf[:0], buffer...)
		as.nextOffset = h.TermOffset() + int32(shm.Align(h.FrameLength(), logbuffer.FrameAlignment))
		as.active = true
		return
	}
	as := a.buffers[sid]
	if as == nil || !as.active {
		return
	}
	if h.TermOffset() != as.nextOffset || (a.max > 0 && len(as.buf)+len(buffer) > a.max) {
		as.active = false // a gap, or too long: drop the partial message
		as.buf = as.buf[:0]
		return
	}
	as.buf = append(as.buf, buffer...)
	as.nextOffset += int32(shm.Align(h.FrameLength(), logbuffer.FrameAlignment))
	if flags&logbuffer.FlagEnd != 0 {
		as.active = false
		a.delegate(as.buf, h)
		as.buf = as.buf[:0]
	}
}

// FreeSessionBuffer drops the reassembly buffer of a session, e.g. from an
// unavailable-image handler.
func (a *FragmentAssembler) FreeSessionBuffer(sessionID int32) { delete(a.buffers, sessionID) }
