package engine

import (
	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/store"
)

// lcsMaxTable bounds LCS's transient table. Redis allows proto-max-bulk-len
// (512 MiB); goblin's single loop would stall far longer than that is worth,
// so it stops at 64 MiB (16 M cells, about two 4 KiB values) with Redis's
// error text.
const lcsMaxTable = 64 << 20

// lcs answers LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN]
// with Redis's dynamic programme and its walk back through the table, so
// the ranges come out in the same order (from the ends of the strings).
func (e *Engine) lcs(_ *Session, r *command.Request) {
	if e.st.Collections() > 0 && (e.st.TypeOf(r.Key) > store.TypeString || e.st.TypeOf(r.Args[0]) > store.TypeString) {
		e.errText(command.Err, "ERR The specified keys must contain string values")
		return
	}
	buf, _ := e.st.Get(e.scratch[:0], r.Key)
	split := len(buf)
	buf, _ = e.st.Get(buf, r.Args[0])
	e.scratch = buf[:0]
	a, b := buf[:split], buf[split:]
	cells := uint64(len(a)+1) * uint64(len(b)+1)
	if cells*4 > lcsMaxTable {
		e.errText(command.Err, "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
		return
	}
	if uint64(cap(e.lcsTable)) < cells {
		e.lcsTable = make([]uint32, cells)
	}
	t := e.lcsTable[:cells]
	w := len(b) + 1
	at := func(i, j int) uint32 { return t[j+i*w] }
	for i := 0; i <= len(a); i++ {
		for j := 0; j <= len(b); j++ {
			switch {
			case i == 0 || j == 0:
				t[j+i*w] = 0
			case a[i-1] == b[j-1]:
				t[j+i*w] = at(i-1, j-1) + 1
			default:
				t[j+i*w] = max(at(i-1, j), at(i, j-1))
			}
		}
	}
	length := at(len(a), len(b))
	defer func() { // do not keep more than 4 MiB of table after a large LCS
		if cap(e.lcsTable) > 1<<20 {
			e.lcsTable = nil
		}
	}()
	idx, wantLen, withLen := r.Flags&command.FlagIdx != 0, r.Flags&command.FlagLen != 0, r.Flags&command.FlagWithMatchLen != 0
	if wantLen && !idx {
		e.integer(int64(length))
		return
	}
	// Walk back, building the subsequence backwards in e.num and, for IDX,
	// the ranges of matching runs.
	e.num = growTo(e.num[:0], int(length))[:length]
	if idx {
		e.begin(command.Map)
		e.addBulkStr("matches")
		e.push(command.Array)
	}
	alen := uint32(len(a))
	aStart, aEnd, bStart, bEnd := alen, uint32(0), uint32(0), uint32(0) // aStart == alen: no range open
	k := length
	for i, j := uint32(len(a)), uint32(len(b)); i > 0 && j > 0; {
		emit := false
		if a[i-1] == b[j-1] {
			e.num[k-1] = a[i-1]
			switch {
			case aStart == alen:
				aStart, aEnd, bStart, bEnd = i-1, i-1, j-1, j-1
			case aStart == i && bStart == j:
				aStart--
				bStart--
			default:
				emit = true
			}
			if aStart == 0 || bStart == 0 {
				emit = true
			}
			k, i, j = k-1, i-1, j-1
		} else {
			if at(int(i-1), int(j)) > at(int(i), int(j-1)) {
				i--
			} else {
				j--
			}
			if aStart != alen {
				emit = true
			}
		}
		if emit {
			n := aEnd - aStart + 1
			if idx && (r.Amount == 0 || int64(n) >= r.Amount) {
				e.push(command.Array)
				e.push(command.Array)
				e.addInt(int64(aStart))
				e.addInt(int64(aEnd))
				e.pop()
				e.push(command.Array)
				e.addInt(int64(bStart))
				e.addInt(int64(bEnd))
				e.pop()
				if withLen {
					e.addInt(int64(n))
				}
				e.pop()
			}
			aStart = alen
		}
	}
	if idx {
		e.pop()
		e.addBulkStr("len")
		e.addInt(int64(length))
		e.end()
		return
	}
	e.bulk(e.num)
}
