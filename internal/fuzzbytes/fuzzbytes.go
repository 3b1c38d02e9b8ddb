// Package fuzzbytes hands out a fuzz input one byte at a time, the way the
// fuzz targets that decode a stream of operations from their input (the
// arena's, the store's, the engine's bit commands') read it.
//
//	in := fuzzbytes.New(data)
//	for in.Len() > 0 {
//		switch in.Next() % 4 { … }
//	}
package fuzzbytes

// Reader reads a fuzz input front to back.
type Reader struct{ data []byte }

// New returns a Reader of data.
func New(data []byte) *Reader { return &Reader{data: data} }

// Next returns the next byte, or 0 once the input is used up.
func (r *Reader) Next() byte {
	if len(r.data) == 0 {
		return 0
	}
	c := r.data[0]
	r.data = r.data[1:]
	return c
}

// Len returns how many bytes are left.
func (r *Reader) Len() int { return len(r.data) }
