package replication

// Backlog is a ring of the newest stream bytes: at most its size, the
// oldest dropped as new ones come. It is allocated once, at its full size.
type Backlog struct {
	buf   []byte
	head  int   // where the next byte goes
	n     int   // bytes held (histlen)
	first int64 // the offset of the oldest byte held
}

func newBacklog(size int, first int64) *Backlog {
	return &Backlog{buf: make([]byte, size), first: first}
}

// First returns the offset of the oldest byte held
// (repl_backlog_first_byte_offset); Len how many are held
// (repl_backlog_histlen).
func (b *Backlog) First() int64 { return b.first }
func (b *Backlog) Len() int     { return b.n }

func (b *Backlog) append(p []byte) {
	size := len(b.buf)
	if len(p) >= size { // only the newest size bytes survive
		drop := len(p) - size
		copy(b.buf, p[drop:])
		b.first += int64(b.n + drop)
		b.head, b.n = 0, size
		return
	}
	c := copy(b.buf[b.head:], p)
	copy(b.buf, p[c:])
	b.head = (b.head + len(p)) % size
	if over := b.n + len(p) - size; over > 0 {
		b.first += int64(over)
		b.n = size
	} else {
		b.n += len(p)
	}
}

// From appends to dst the bytes held from offset on (offset within
// [First, First+Len]; anything else appends nothing and reports false).
func (b *Backlog) From(dst []byte, offset int64) ([]byte, bool) {
	if offset < b.first || offset > b.first+int64(b.n) {
		return dst, false
	}
	skip := int(offset - b.first)
	size := len(b.buf)
	start := (b.head - b.n + skip + size) % size
	left := b.n - skip
	for left > 0 {
		end := min(start+left, size)
		dst = append(dst, b.buf[start:end]...)
		left -= end - start
		start = 0
	}
	return dst, true
}

// resize keeps the newest bytes that fit in a ring of size bytes.
func (b *Backlog) resize(size int) {
	if size == len(b.buf) {
		return
	}
	keep := min(b.n, size)
	data, _ := b.From(make([]byte, 0, keep), b.first+int64(b.n-keep))
	b.first += int64(b.n - keep)
	b.buf = make([]byte, size)
	copy(b.buf, data)
	b.n, b.head = keep, keep%size
}
