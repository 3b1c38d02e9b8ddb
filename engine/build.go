package engine

import (
	"strconv"

	"github.com/goblin-kv/goblin/command"
)

// Building an aggregate reply: begin the root, add leaves, push and pop
// nested aggregates, end. Counts are kept on a stack, so callers need not
// know them in advance. Values that are formatted on the fly are appended
// to e.scratch (which may move as it grows) and pointed at by end.

type openAgg struct {
	item  int // index in e.res.Items, -1 for the root
	count int64
}

type fixup struct{ item, start, end int }

// begin makes the reply an aggregate of kind k.
func (e *Engine) begin(k command.Kind) {
	e.res.Kind, e.res.Integer = k, 0
	e.res.Items = e.res.Items[:0]
	e.stack = append(e.stack[:0], openAgg{item: -1})
	e.fixes = e.fixes[:0]
	e.scratch = e.scratch[:0]
}

// add appends a leaf element.
func (e *Engine) add(k command.Kind, n int64, v []byte) {
	e.res.Items = append(e.res.Items, command.Item{Kind: k, Integer: n, Value: v})
	e.stack[len(e.stack)-1].count++
}

func (e *Engine) addBulk(v []byte)      { e.add(command.Bulk, 0, v) }
func (e *Engine) addBulkStr(v string)   { e.add(command.Bulk, 0, bs(v)) }
func (e *Engine) addSimpleStr(v string) { e.add(command.Simple, 0, bs(v)) }
func (e *Engine) addInt(n int64)        { e.add(command.Integer, n, nil) }

// addCopy appends a leaf whose value is copied into e.scratch.
func (e *Engine) addCopy(k command.Kind, v []byte) {
	start := len(e.scratch)
	e.scratch = append(e.scratch, v...)
	e.fixes = append(e.fixes, fixup{item: len(e.res.Items), start: start, end: len(e.scratch)})
	e.add(k, 0, nil)
}

// addBulkInt appends n in decimal as a bulk string.
func (e *Engine) addBulkInt(n int64) { e.addBulkNamed("", n) }

// addBulkNamed appends prefix and n in decimal as one bulk string ("db.3").
func (e *Engine) addBulkNamed(prefix string, n int64) {
	start := len(e.scratch)
	e.scratch = append(e.scratch, prefix...)
	e.scratch = strconv.AppendInt(e.scratch, n, 10)
	e.fixes = append(e.fixes, fixup{item: len(e.res.Items), start: start, end: len(e.scratch)})
	e.add(command.Bulk, 0, nil)
}

// push opens a nested aggregate of kind k.
func (e *Engine) push(k command.Kind) {
	e.add(k, 0, nil)
	e.stack = append(e.stack, openAgg{item: len(e.res.Items) - 1})
}

// pop closes the innermost open aggregate.
func (e *Engine) pop() {
	top := e.stack[len(e.stack)-1]
	e.stack = e.stack[:len(e.stack)-1]
	n := top.count
	if top.item < 0 {
		if e.res.Kind == command.Map {
			n /= 2
		}
		e.res.Integer = n
		return
	}
	it := &e.res.Items[top.item]
	if it.Kind == command.Map {
		n /= 2
	}
	it.Integer = n
}

// end closes the root and points the copied values into e.scratch.
func (e *Engine) end() {
	for len(e.stack) > 0 {
		e.pop()
	}
	for _, f := range e.fixes {
		e.res.Items[f.item].Value = e.scratch[f.start:f.end:f.end]
	}
	e.fixes = e.fixes[:0]
}
