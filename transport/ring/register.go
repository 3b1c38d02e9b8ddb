package ring

import (
	"github.com/goblin-kv/goblin/transport"
)

// Importing this package lets the client library dial ring:// targets
// (see transport.Dialer); a program that does not link it cannot.
func init() {
	transport.RegisterDialer(transport.Ring, transport.Dialer{Dial: DialTarget, Message: true})
}
