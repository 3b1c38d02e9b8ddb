package aeron_test

import (
	"fmt"
	"log"

	"github.com/goblin-kv/goblin/aeron"
)

// A publisher and a subscriber on one IPC stream. It needs a running media
// driver in the default Aeron directory, so it is compiled but not run.
func Example() {
	client, err := aeron.Connect(aeron.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	sub, err := client.AddSubscription("aeron:ipc", 1001)
	if err != nil {
		log.Fatal(err)
	}
	pub, err := client.AddExclusivePublication("aeron:ipc", 1001)
	if err != nil {
		log.Fatal(err)
	}
	idle := &aeron.BackoffIdle{}
	for r := pub.Offer([]byte("hello")); r < 0; r = pub.Offer([]byte("hello")) {
		if r == aeron.Closed || r == aeron.MaxPositionExceeded {
			log.Fatal(aeron.StatusString(r))
		}
		idle.Idle(0) // NotConnected, BackPressured or AdminAction: retry
	}
	got := false
	onMessage := aeron.NewFragmentAssembler(func(buf []byte, h *aeron.Header) {
		fmt.Printf("%s from session %d\n", buf, h.SessionID())
		got = true
	}, 0).OnFragment
	for !got {
		idle.Idle(sub.Poll(onMessage, 10))
	}
}

// Building the four channels of a UDP request/response exchange.
func ExampleChannelBuilder() {
	const requestEndpoint, responseControl = "127.0.0.1:40123", "127.0.0.1:40124"
	// Server: subscribe to requests.
	fmt.Println(aeron.UDP().Endpoint(requestEndpoint).String())
	// Client: the response subscription first, then the request publication
	// naming it (7 stands for responseSubscription.RegistrationID()).
	fmt.Println(aeron.UDP().ControlMode(aeron.ControlModeResponse).Control(responseControl).String())
	fmt.Println(aeron.UDP().Endpoint(requestEndpoint).ResponseCorrelationID(7).String())
	// Server, per request image (42 stands for image.CorrelationID()).
	fmt.Println(aeron.UDP().ControlMode(aeron.ControlModeResponse).Control(responseControl).ResponseCorrelationID(42).String())
	// Output:
	// aeron:udp?endpoint=127.0.0.1:40123
	// aeron:udp?control-mode=response|control=127.0.0.1:40124
	// aeron:udp?endpoint=127.0.0.1:40123|response-correlation-id=7
	// aeron:udp?control-mode=response|control=127.0.0.1:40124|response-correlation-id=42
}

func ExampleStatusString() {
	fmt.Println(aeron.StatusString(aeron.BackPressured), aeron.StatusString(aeron.NotConnected), aeron.StatusString(4096))
	// Output: BACK_PRESSURED NOT_CONNECTED position 4096
}
