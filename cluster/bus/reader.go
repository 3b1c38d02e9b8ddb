package bus

import (
	"encoding/binary"
	"fmt"
)

// DefaultMaxMessage bounds the messages a Reader accepts unless told
// otherwise: PUBLISH carries a client's channel and message, which Redis
// bounds by proto-max-bulk-len (512 MiB); a node has no business sending
// more than that.
const DefaultMaxMessage = 512<<20 + 1<<16

// Reader cuts a bus stream into messages, as clusterReadHandler does: it
// reads 8 bytes, refuses the stream (ErrFraming, close the link) when the
// signature is not "RCmb" or the length is below the header's, and
// returns each message once its totlen bytes are in. It is resumable:
// Write whatever a read returned, however it splits messages, then call
// Next until it returns nil. The zero value is ready to use.
type Reader struct {
	buf []byte
	r   int // start of the unread bytes
	// Max bounds a message's totlen; 0 means DefaultMaxMessage.
	Max int
}

// Write appends received bytes.
func (rd *Reader) Write(p []byte) {
	if rd.r > 0 && rd.r == len(rd.buf) {
		rd.buf, rd.r = rd.buf[:0], 0
	} else if rd.r > 0 && rd.r >= cap(rd.buf)/2 {
		n := copy(rd.buf, rd.buf[rd.r:])
		rd.buf, rd.r = rd.buf[:n], 0
	}
	rd.buf = append(rd.buf, p...)
}

// Buffer returns room to read into directly (at least min bytes); call
// Wrote with how many bytes were read there. It saves Write's copy.
func (rd *Reader) Buffer(min int) []byte {
	if rd.r > 0 {
		n := copy(rd.buf, rd.buf[rd.r:])
		rd.buf, rd.r = rd.buf[:n], 0
	}
	if cap(rd.buf)-len(rd.buf) < min {
		nb := make([]byte, len(rd.buf), len(rd.buf)+max(min, len(rd.buf)))
		copy(nb, rd.buf)
		rd.buf = nb
	}
	return rd.buf[len(rd.buf):cap(rd.buf)]
}

// Wrote records n bytes read into the slice Buffer returned.
func (rd *Reader) Wrote(n int) { rd.buf = rd.buf[:len(rd.buf)+n] }

// Next returns the next complete message, nil when it has not all
// arrived. The slice stays valid until the next Write or Buffer. A
// framing error is final: the stream is out of step and the link must
// close.
func (rd *Reader) Next() ([]byte, error) {
	b := rd.buf[rd.r:]
	if len(b) < 8 {
		return nil, nil
	}
	if string(b[:4]) != "RCmb" {
		return nil, fmt.Errorf("%w: signature %q", ErrFraming, b[:4])
	}
	n := int(binary.BigEndian.Uint32(b[4:]))
	limit := rd.Max
	if limit == 0 {
		limit = DefaultMaxMessage
	}
	if n < HeaderSize || n > limit {
		return nil, fmt.Errorf("%w: length %d", ErrFraming, n)
	}
	if len(b) < n {
		return nil, nil
	}
	rd.r += n
	return b[:n:n], nil
}

// Buffered returns how many bytes are waiting for the rest of their
// message.
func (rd *Reader) Buffered() int { return len(rd.buf) - rd.r }

// Shrink drops a buffer grown past keep bytes while nothing is pending,
// so one large PUBLISH does not pin its memory to the link.
func (rd *Reader) Shrink(keep int) {
	if rd.r == len(rd.buf) && cap(rd.buf) > keep {
		rd.buf, rd.r = nil, 0
	}
}
