package engine_test

import (
	"fmt"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/engine"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/proto/resp"
	"github.com/goblin-kv/goblin/proto/sbe"
	"github.com/goblin-kv/goblin/store"
)

// A stream transport hands the engine whatever bytes it has read; complete
// requests are answered in order and a partial one waits for more bytes.
func ExampleEngine_ServeStream() {
	st, _ := store.New(store.Options{})
	e := engine.NewEngine(st, engine.Options{})
	var stats engine.Stats
	s := engine.NewSession(proto.RESP, &stats)

	in := resp.AppendCommandString(nil, "SET", "greeting", "hello")
	in = append(in, "GET greeting\r\n"...) // inline, as redis-cli and telnet send
	in = append(in, "*1\r\n$4\r\nPI"...)   // half a PING
	consumed, out, closeConn := e.ServeStream(s, in, nil)
	fmt.Printf("%q consumed %d of %d, close %v\n", out, consumed, len(in), closeConn)
	fmt.Println("SETs:", stats.Commands[command.OpSet])
	// Output:
	// "+OK\r\n$5\r\nhello\r\n" consumed 52 of 62, close false
	// SETs: 1
}

// A message transport hands over one bare SBE request per message.
func ExampleEngine_ServeMessage() {
	st, _ := store.New(store.Options{})
	e := engine.NewEngine(st, engine.Options{})
	s := engine.NewSession(proto.SBE, nil)

	var c sbe.Codec
	msg := c.AppendRequest(nil, &command.Request{CorrelationID: 7, Op: command.OpIncrBy, Key: []byte("n"), Amount: 42})
	out, _ := e.ServeMessage(s, msg, nil)
	var rep command.Reply
	_ = c.DecodeReply(out, &rep)
	fmt.Println(rep.CorrelationID, rep.Status, rep.Integer)
	// Output: 7 ok 42
}
