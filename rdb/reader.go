package rdb

import (
	"errors"
	"io"
)

// reader is the Decoder's buffered input. It tracks the offset of every
// byte and keeps the CRC64 of the bytes consumed so far, computed in
// chunks as the buffer is refilled rather than per byte.
type reader struct {
	src     io.Reader // nil: buf holds the whole input
	buf     []byte
	pos     int // next unread byte
	end     int // end of valid data in buf
	crcFrom int // first consumed byte not yet in crc
	crc     uint64
	base    int64 // stream offset of buf[0]
	srcErr  error
}

const readBufSize = 64 << 10

// errShort is returned when the input ends early; the Decoder turns it
// into an error naming the offset.
var errShort = errors.New("unexpected end of input")

func (r *reader) reset(src io.Reader) {
	r.src = src
	if cap(r.buf) < readBufSize {
		r.buf = make([]byte, readBufSize)
	}
	r.buf = r.buf[:cap(r.buf)]
	r.pos, r.end, r.crcFrom, r.crc, r.base, r.srcErr = 0, 0, 0, 0, 0, nil
}

func (r *reader) resetBytes(p []byte) {
	r.src = nil
	r.buf = p
	r.pos, r.end, r.crcFrom, r.crc, r.base, r.srcErr = 0, len(p), 0, 0, 0, nil
}

func (r *reader) offset() int64 { return r.base + int64(r.pos) }

// sum returns the CRC64 of every byte consumed so far.
func (r *reader) sum() uint64 {
	r.crc = CRC64(r.crc, r.buf[r.crcFrom:r.pos])
	r.crcFrom = r.pos
	return r.crc
}

// fill makes at least n (≤ len(buf)) bytes available.
func (r *reader) fill(n int) error {
	if r.src == nil || r.srcErr != nil {
		if r.srcErr != nil && !errors.Is(r.srcErr, io.EOF) {
			return r.srcErr
		}
		return errShort
	}
	r.sum()
	k := copy(r.buf, r.buf[r.pos:r.end])
	r.base += int64(r.pos)
	r.pos, r.end, r.crcFrom = 0, k, 0
	for r.end < n {
		m, err := r.src.Read(r.buf[r.end:])
		r.end += m
		if err != nil {
			r.srcErr = err
			if r.end >= n {
				return nil
			}
			if errors.Is(err, io.EOF) {
				return errShort
			}
			return err
		}
	}
	return nil
}

func (r *reader) readByte() (byte, error) {
	if r.pos >= r.end {
		if err := r.fill(1); err != nil {
			return 0, err
		}
	}
	b := r.buf[r.pos]
	r.pos++
	return b, nil
}

// next returns the next n bytes (n ≤ 4096), valid until the next call.
func (r *reader) next(n int) ([]byte, error) {
	if r.end-r.pos < n {
		if err := r.fill(n); err != nil {
			return nil, err
		}
	}
	p := r.buf[r.pos : r.pos+n]
	r.pos += n
	return p, nil
}

// appendN appends the next n bytes to dst. It grows dst a bounded chunk at
// a time, so a corrupt length cannot make it allocate far beyond the input.
func (r *reader) appendN(dst []byte, n uint64) ([]byte, error) {
	for n > 0 {
		if r.pos == r.end {
			if err := r.fill(1); err != nil {
				return dst, err
			}
		}
		k := min(uint64(r.end-r.pos), n)
		dst = append(dst, r.buf[r.pos:r.pos+int(k)]...)
		r.pos += int(k)
		n -= k
	}
	return dst, nil
}

// skip discards the next n bytes.
func (r *reader) skip(n uint64) error {
	for n > 0 {
		if r.pos == r.end {
			if err := r.fill(1); err != nil {
				return err
			}
		}
		k := min(uint64(r.end-r.pos), n)
		r.pos += int(k)
		n -= k
	}
	return nil
}
