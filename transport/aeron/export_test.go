package aeron

// WriteChunksForTest sends p in chunks whatever the server's request
// limit, as a client that ignores the hello would.
func WriteChunksForTest(c *Conn, p []byte) error {
	saved := c.srv.maxRequest
	c.srv.maxRequest = MaxChunkedMessage
	defer func() { c.srv.maxRequest = saved }()
	return c.writeChunked(p)
}
