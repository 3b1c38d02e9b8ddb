package transport

import "github.com/goblin-kv/goblin/proto"

// MessageHandler executes the requests of a message transport's clients
// (transport/ring, transport/aeron): one request per message, one reply
// per request. The server package adapts the command engine to it; tests
// use small fakes. The method is named OpenMessage, not Open, so that one
// adapter type can serve both this and the stream transports' handler
// (uds.Handler).
type MessageHandler interface {
	// OpenMessage returns the state of a newly connected client that
	// speaks p.
	OpenMessage(p proto.Protocol) MessageSession
}

// MessageSession serves the messages of one connected client. The
// transport calls it from the loop goroutine only.
type MessageSession interface {
	// ServeMessage executes one request message and appends its reply to
	// out, returning the extended slice; closeConn asks the transport to
	// close the client after sending the reply. msg may alias shared memory
	// (a ring, an Aeron log buffer) and is valid only during the call.
	ServeMessage(msg, out []byte) (reply []byte, closeConn bool)
	// Close releases the session when its client goes.
	Close()
}
