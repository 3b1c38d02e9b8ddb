package replica

import (
	"bytes"
	"io"
)

// MarkLen is the length of a diskless transfer's end mark ($EOF:<mark>).
const MarkLen = 40

// eofReader reads a diskless snapshot transfer: the RDB bytes followed by
// the 40-byte mark announced in "$EOF:<mark>". It holds the last MarkLen
// bytes back until more arrive, and ends (io.EOF) when the bytes received
// end with the mark, as Redis's readSyncBulkPayload does: the primary
// sends nothing after the mark until the replica has acknowledged the
// load, so the mark is always the end of what is read.
type eofReader struct {
	src  io.Reader
	mark []byte
	held []byte // received, not yet returned: the candidate mark is its tail
	buf  []byte
	done bool // the mark was seen: held is the last of the RDB
}

func newEOFReader(src io.Reader, mark []byte) *eofReader {
	return &eofReader{src: src, mark: mark, buf: make([]byte, 64<<10)}
}

func (r *eofReader) Read(p []byte) (int, error) {
	for {
		if r.done {
			if len(r.held) == 0 {
				return 0, io.EOF
			}
			n := copy(p, r.held)
			r.held = r.held[n:]
			return n, nil
		}
		if len(r.held) > MarkLen {
			n := copy(p, r.held[:len(r.held)-MarkLen])
			r.held = append(r.held[:0], r.held[n:]...)
			return n, nil
		}
		n, err := r.src.Read(r.buf)
		r.held = append(r.held, r.buf[:n]...)
		if len(r.held) >= MarkLen && bytes.Equal(r.held[len(r.held)-MarkLen:], r.mark) {
			r.done = true
			r.held = r.held[:len(r.held)-MarkLen]
			continue
		}
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
	}
}
