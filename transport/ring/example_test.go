package ring_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/goblin-kv/goblin/idle"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/transport"
	"github.com/goblin-kv/goblin/transport/ring"
)

// upper is a tiny Handler: every session answers a message with the same
// bytes in upper case. goblin-server uses the command engine instead.
type upper struct{}

func (upper) OpenMessage(proto.Protocol) transport.MessageSession { return upper{} }
func (upper) Close()                                              {}
func (upper) ServeMessage(msg, out []byte) ([]byte, bool) {
	for _, b := range msg {
		if 'a' <= b && b <= 'z' {
			b -= 'a' - 'A'
		}
		out = append(out, b)
	}
	return out, false
}

// A server polled by a loop of its own, and a client that sends one
// message and reads the reply. In goblin-server the store loop polls the
// Server among its other transports.
func Example() {
	tmp, _ := os.MkdirTemp("", "ring-example-")
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "goblin")

	srv, err := ring.Listen(ring.Options{Dir: dir, Handler: upper{}})
	if err != nil {
		fmt.Println(err)
		return
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for now := int64(0); ; now += 1000 { // a fake clock: 1µs per cycle
			select {
			case <-stop:
				srv.Close()
				return
			default:
				srv.Poll(now)
			}
		}
	}()

	c, err := ring.Dial(context.Background(), dir, ring.DialOptions{Wait: idle.Yield})
	if err != nil {
		fmt.Println(err)
		return
	}
	c.Write([]byte("hello, ring"))
	reply, err := c.ReadAppend(nil)
	fmt.Println(string(reply), err)
	c.Close()

	close(stop)
	<-done
	_, err = os.Stat(dir)
	fmt.Println("directory removed:", os.IsNotExist(err))
	// Output:
	// HELLO, RING <nil>
	// directory removed: true
}
