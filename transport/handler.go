package transport

import "github.com/goblin-kv/goblin/proto"

// The two contracts between a transport and what executes its requests
// (the command engine, through server.EngineHandler; small fakes in
// tests). A stream transport (transport/uds: Unix sockets and TCP) hands
// over bytes as they arrive, with no message boundaries; a message
// transport (transport/ring, transport/aeron) hands over one request per
// message. Each contract is a handler, which opens one session per client,
// and the session, which serves that client's requests.
//
// One value may implement both handlers: server.EngineHandler does, and
// is used as whichever the transport wants. So each handler's method is
// named after its contract, OpenStream and OpenMessage: Go has no
// overloading, and the two return different session types.

// StreamHandler executes the requests of a stream transport's clients
// (transport/uds).
type StreamHandler interface {
	// OpenStream returns the state of a newly accepted client that speaks
	// p.
	OpenStream(p proto.Protocol) StreamSession
}

// StreamSession is one stream client's request state. The transport calls
// it from the loop goroutine only.
type StreamSession interface {
	// Serve consumes the complete requests at the start of in and appends
	// the replies, in order, to out. It stops early, leaving the later
	// requests unconsumed, once the replies it appended reach limit bytes;
	// it always serves at least one complete request. It returns the bytes
	// consumed, the extended out, and whether the connection must be
	// closed once the replies are written (QUIT, a protocol error).
	//
	// What is left of in after the consumed bytes is offered again, from
	// its first byte, with whatever arrived since: a session may remember
	// how far it parsed a partial request.
	Serve(in, out []byte, limit int) (consumed int, reply []byte, closeConn bool)
	// Close releases the session when its client goes away.
	Close()
}

// MessageHandler executes the requests of a message transport's clients
// (transport/ring, transport/aeron): one request per message, one reply
// per request.
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

// LaterAware is implemented by a MessageSession that can answer a request
// later (a blocking pop such as BLPOP that finds no data waits for a push
// or its timeout). The transport hands it, once, a way to send that later
// answer; in return it must, after each ServeMessage, ask Parked and while
// it reports true send no reply for that request and serve none of the
// client's further requests (leave them where they wait, or keep them in
// order), without ever blocking the loop. A transport that does not look
// for LaterAware still works: its clients' blocking pops answer at once,
// as if they timed out.
type LaterAware interface {
	MessageSession
	// SetAnswer gives the session the transport's way to send the client
	// the reply of its parked request, as the next reply message; answer
	// copies reply, is called on the loop goroutine only (never from
	// inside this client's own ServeMessage), and reports whether the
	// reply went out or was queued (false: the client is gone).
	SetAnswer(answer func(reply []byte) bool)
	// Parked reports whether the client's last request waits for its
	// answer (no reply now; its further requests wait their turn). It
	// turns true only within ServeMessage and false only within the
	// answer call, so a transport may ask after each and keep the result.
	Parked() bool
}
