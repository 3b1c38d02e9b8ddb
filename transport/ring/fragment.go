package ring

// Messages longer than one record: fragments.
//
// A message of n bytes that fits one record's payload (n <= record - 8)
// travels as one record with the more bit clear: the common case, which
// pays nothing for the rest of this file. A longer message is cut into
// fragments that fill consecutive records:
//
//	first   more=1, payload: total length (uint64, little-endian) | data
//	middle  more=1, payload: data
//	last    more=0, payload: data (the rest, at least one byte)
//
// Every fragment but the last fills its record's payload, so a message of
// n bytes takes exactly fragmentCount(n) records and a reader can tell a
// well-formed sequence from anything else: the total must exceed one
// record's payload and stay within the reader's limit, a non-final fragment
// must be full, and the data must add up to the total exactly. A producer
// publishes each fragment as it publishes any record (payload first, then
// the header word with one release store), so fragments need no ordering
// of their own; a consumer releases each as it copies it out, so a message
// larger than the whole ring streams through it.

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// fragPrefix is the total-length prefix of a first fragment.
const fragPrefix = 8

// errMalformed is wrapped by every fragment sequence a reader refuses.
var errMalformed = errors.New("ring: malformed fragment sequence")

// fragmentCount is the number of records a message of n bytes takes with
// records of payload bytes of payload.
func fragmentCount(n, payload int) int {
	if n <= payload {
		return 1
	}
	rest := n - (payload - fragPrefix)
	return 1 + (rest+payload-1)/payload
}

// fragmentWriter writes one message into a producer a fragment at a time,
// so that a message larger than the ring goes out as room appears.
type fragmentWriter struct {
	msg []byte // the message being written; nil when idle
	off int    // bytes of msg already published
}

// start begins writing msg, which must be longer than one record's payload.
func (w *fragmentWriter) start(msg []byte) { w.msg, w.off = msg, 0 }

// busy reports whether a message is partly written.
func (w *fragmentWriter) busy() bool { return w.msg != nil }

// next publishes the next fragment into p, which must have a free record
// (hasSpace), and reports whether that was the last one. fenced publishes
// with producer.publishFenced.
func (w *fragmentWriter) next(p *producer, fenced bool) (done bool) {
	out := p.claim()
	n := 0
	if w.off == 0 {
		out = binary.LittleEndian.AppendUint64(out, uint64(len(w.msg)))
		n = copy(out[fragPrefix:cap(out)], w.msg)
		n += fragPrefix
		w.off = n - fragPrefix
	} else {
		n = copy(out[:cap(out)], w.msg[w.off:])
		w.off += n
	}
	more := w.off < len(w.msg)
	if fenced {
		p.publishFenced(n, more)
	} else {
		p.publish(n, more)
	}
	if !more {
		w.msg, w.off = nil, 0
	}
	return !more
}

// assembler rebuilds a message from its fragments. The zero value is idle.
type assembler struct {
	active  bool // between a first fragment and the last
	total   int  // the message's announced length
	got     int  // data bytes received so far
	payload int  // one record's payload: what a non-final fragment holds
	max     int  // the longest message accepted
}

func newAssembler(payload, max int) assembler { return assembler{payload: payload, max: max} }

// busy reports whether a message is partly received.
func (a *assembler) busy() bool { return a.active }

// add appends the data of the record rec (more: its more bit) to dst, which
// holds what this message received so far. done reports that rec completed
// the message. A fragment that breaks the rules in the file comment
// returns an error wrapping errMalformed; the assembler is then idle again,
// and the caller should give up on the connection, which is out of step.
func (a *assembler) add(dst, rec []byte, more bool) (out []byte, done bool, err error) {
	if !a.active {
		if !more {
			return append(dst, rec...), true, nil
		}
		if len(rec) != a.payload {
			return dst, false, a.fail("first fragment of %d bytes, want a full record of %d", len(rec), a.payload)
		}
		total := binary.LittleEndian.Uint64(rec)
		if total <= uint64(a.payload) || total > uint64(a.max) {
			return dst, false, a.fail("message of %d bytes announced, want %d to %d", total, a.payload+1, a.max)
		}
		a.active, a.total, a.got = true, int(total), 0
		if free := cap(dst) - len(dst); free < a.total {
			grown := make([]byte, len(dst), len(dst)+a.total)
			copy(grown, dst)
			dst = grown
		}
		rec = rec[fragPrefix:]
	} else if more && len(rec) != a.payload {
		return dst, false, a.fail("middle fragment of %d bytes, want a full record of %d", len(rec), a.payload)
	}
	if a.got+len(rec) > a.total {
		return dst, false, a.fail("fragments carry more than the %d bytes announced", a.total)
	}
	dst = append(dst, rec...)
	a.got += len(rec)
	if more {
		if a.got == a.total {
			return dst, false, a.fail("a fragment that completes the message says more follow")
		}
		return dst, false, nil
	}
	if a.got != a.total {
		return dst, false, a.fail("message ends after %d of the %d bytes announced", a.got, a.total)
	}
	a.active = false
	return dst, true, nil
}

func (a *assembler) fail(format string, args ...any) error {
	a.active = false
	return fmt.Errorf("%w: %s", errMalformed, fmt.Sprintf(format, args...))
}
