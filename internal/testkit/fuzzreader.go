package testkit

// FuzzReader reads a fuzz input front to back.
type FuzzReader struct{ data []byte }

// NewFuzzReader returns a FuzzReader of data.
func NewFuzzReader(data []byte) *FuzzReader { return &FuzzReader{data: data} }

// Next returns the next byte, or 0 once the input is used up.
func (r *FuzzReader) Next() byte {
	if len(r.data) == 0 {
		return 0
	}
	c := r.data[0]
	r.data = r.data[1:]
	return c
}

// Len returns how many bytes are left.
func (r *FuzzReader) Len() int { return len(r.data) }
