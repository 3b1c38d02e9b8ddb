package aeron

import (
	"github.com/goblin-kv/goblin/transport"
)

// Importing this package lets the client library dial aeron:ipc and
// aeron:udp targets (see transport.Dialer); a program that does not link
// it has neither the Aeron client nor the media drivers.
func init() {
	transport.RegisterDialer(transport.Aeron, transport.Dialer{Dial: DialTarget, Message: true})
}
