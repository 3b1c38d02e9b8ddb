package aeron

// WriteChunksForTest sends p in chunks whatever the server's request
// limit, as a client that ignores the hello would.
func WriteChunksForTest(c *Conn, p []byte) error {
	saved := c.srv.maxRequest
	c.srv.maxRequest = MaxChunkedMessage
	defer func() { c.srv.maxRequest = saved }()
	return c.writeChunked(p)
}

// WritePiecesForTest sends only the first n chunks of p, as a client that
// stops half-way through a long request would.
func WritePiecesForTest(c *Conn, p []byte, n int) error {
	piece := c.maxMsg - frameHeaderLen
	var hdr [frameHeaderLen]byte
	for i, off := 0, 0; i < n && off < len(p); i, off = i+1, off+piece {
		putChunkHeader(&hdr, off, len(p))
		if err := c.offer(hdr[:], p[off:min(off+piece, len(p))]); err != nil {
			return err
		}
	}
	return nil
}
