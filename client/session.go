package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/transport"
)

// ErrModeCommand is wrapped when Do or a pipeline is given a command that
// changes what the connection carries (MONITOR, SUBSCRIBE, PSUBSCRIBE,
// SSUBSCRIBE, RESET, CLIENT REPLY OFF or SKIP, SYNC, PSYNC): after it,
// replies would no longer match requests one for one. Nothing is sent and
// the connection stays usable; the error names the API to use instead.
var ErrModeCommand = errors.New("client: command changes the connection's mode")

// modeCommand returns the ErrModeCommand error for args, or nil.
func modeCommand(args [][]byte) error {
	if len(args) == 0 {
		return nil
	}
	name := string(bytes.ToUpper(args[0]))
	switch name {
	case "MONITOR":
		return fmt.Errorf("%w: MONITOR streams every command the server runs on this connection: use Client.Monitor, which gives it a connection of its own", ErrModeCommand)
	case "SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE":
		return fmt.Errorf("%w: %s turns the connection into a stream of pushed messages, and this client has no publish/subscribe API: subscribe with a Redis client (go-redis, redis-cli) over a socket target", ErrModeCommand, name)
	case "RESET":
		return fmt.Errorf("%w: RESET would undo what the client sets up on each connection (AUTH, Options.DB, ClientName, Protocol) behind its back: Close the Client and dial a new one", ErrModeCommand)
	case "SYNC", "PSYNC":
		return fmt.Errorf("%w: %s turns the connection into a replication stream", ErrModeCommand, name)
	case "CLIENT":
		if len(args) >= 3 && bytes.EqualFold(args[1], []byte("REPLY")) && !bytes.EqualFold(args[2], []byte("ON")) {
			return fmt.Errorf("%w: CLIENT REPLY %s silences replies, and every call waits for one: send the commands whose replies you do not want with a Pipeline instead", ErrModeCommand, bytes.ToUpper(args[2]))
		}
	}
	return nil
}

// modeCommandOf is modeCommand for Do's arguments, before they are
// encoded.
func modeCommandOf(cmd []any) error {
	var words [3][]byte
	n := 0
	for ; n < len(cmd) && n < len(words); n++ {
		switch a := cmd[n].(type) {
		case string:
			words[n] = []byte(a)
		case []byte:
			words[n] = a
		default:
			words[n] = nil // a number: no mode command's word
		}
	}
	return modeCommand(words[:n])
}

// connState is what a connection carries besides its bytes and what a
// redial must restore: the database, the connection name and the RESP
// version. It starts from Options and follows the SELECT, CLIENT SETNAME
// and HELLO commands the caller sends.
type connState struct {
	db    int
	name  string
	resp3 bool
}

// stateChange is a change to connState that a command makes if it
// succeeds.
type stateChange struct {
	db      int
	setDB   bool
	name    string
	setName bool
	resp3   bool
	setRESP bool
}

// changeOf returns the change args would make to the connection's state,
// and whether it makes one.
func changeOf(args [][]byte) (stateChange, bool) {
	var ch stateChange
	if len(args) < 2 {
		return ch, false
	}
	switch {
	case bytes.EqualFold(args[0], []byte("SELECT")) && len(args) == 2:
		n, err := strconv.Atoi(string(args[1]))
		if err != nil {
			return ch, false // the server refuses it
		}
		ch.db, ch.setDB = n, true
	case bytes.EqualFold(args[0], []byte("CLIENT")) && len(args) == 3 && bytes.EqualFold(args[1], []byte("SETNAME")):
		ch.name, ch.setName = string(args[2]), true
	case bytes.EqualFold(args[0], []byte("HELLO")):
		switch string(args[1]) {
		case "2":
			ch.setRESP = true
		case "3":
			ch.resp3, ch.setRESP = true, true
		default:
			return ch, false
		}
		for i := 2; i+1 < len(args); i++ {
			if bytes.EqualFold(args[i], []byte("SETNAME")) {
				ch.name, ch.setName = string(args[i+1]), true
				i++
			} else if bytes.EqualFold(args[i], []byte("AUTH")) {
				i += 2
			}
		}
	default:
		return ch, false
	}
	return ch, true
}

// applies reports whether a reply of kind k with text str means the
// command took effect (an error reply, or QUEUED inside MULTI, does not).
func (ch stateChange) applies(k Kind, str []byte) bool {
	switch k {
	case KindError, KindNil:
		return false
	case KindStatus:
		return string(str) == "OK"
	}
	return ch.setRESP // HELLO answers a map (RESP3) or an array (RESP2)
}

// apply records the change in c's state. c.mu is held.
func (c *Client) apply(ch stateChange) {
	if ch.setDB {
		c.state.db = ch.db
	}
	if ch.setName {
		c.state.name = ch.name
	}
	if ch.setRESP && c.t.Proto == proto.RESP {
		c.state.resp3 = ch.resp3
	}
}

// DB returns the database the client's commands go to: Options.DB, or
// the last one a successful SELECT chose. Every redial selects it again.
func (c *Client) DB() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state.db
}

// restore sets up a new connection the way the last one was: RESP3 if
// asked for, the database and the connection name. c.mu is held; c.args
// (the call's own command) is kept.
func (c *Client) restore(ctx context.Context) error {
	if c.state.resp3 {
		if err := c.setup(ctx, "HELLO", "3"); err != nil {
			return fmt.Errorf("client: HELLO 3 (Options.Protocol 3): %w", err)
		}
	}
	if c.state.db != 0 {
		if err := c.setup(ctx, "SELECT", strconv.Itoa(c.state.db)); err != nil {
			return fmt.Errorf("client: selecting database %d again after connecting: %w", c.state.db, err)
		}
	}
	if c.state.name != "" {
		if err := c.setup(ctx, "CLIENT", "SETNAME", c.state.name); err != nil {
			return fmt.Errorf("client: CLIENT SETNAME %s: %w", c.state.name, err)
		}
	}
	return nil
}

// setup runs one command of the connection's set-up and checks its reply.
func (c *Client) setup(ctx context.Context, words ...string) error {
	call := c.args
	c.args = make([][]byte, len(words))
	for i, w := range words {
		c.args[i] = []byte(w)
	}
	r, err := c.exec(ctx)
	c.args = call
	if err != nil {
		return err
	}
	if r.kind == KindError {
		return newServerError(r.str)
	}
	return nil
}

// checkProtocol validates Options.Protocol for a target speaking p.
func (o Options) checkProtocol(p proto.Protocol) error {
	switch o.Protocol {
	case 0, 2:
	case 3:
		if p != proto.RESP {
			return fmt.Errorf("client: Options.Protocol 3 asks for RESP3, but the target speaks %v (proto=resp for RESP)", p)
		}
	default:
		return fmt.Errorf("client: Options.Protocol %d: want 2 (RESP2, the default) or 3 (RESP3)", o.Protocol)
	}
	if o.DB < 0 {
		return fmt.Errorf("client: Options.DB %d is negative", o.DB)
	}
	return nil
}

// ErrMultiLost is the error of the first command sent with Do or a
// pipeline after the connection a MULTI was opened on was lost: the
// server discarded the transaction with the connection, so none of the
// queued commands ran, and the command (EXEC included) is not sent on the
// new connection, where it would run outside any transaction. Start
// again with MULTI.
var ErrMultiLost = errors.New("client: the connection was lost inside MULTI: the server discarded the transaction and nothing queued ran")

// multiState follows a MULTI opened with Do or a pipeline: the state
// changes (SELECT, CLIENT SETNAME, HELLO) whose replies were QUEUED take
// effect only if EXEC runs them, at their place in EXEC's reply.
type multiState struct {
	conn    transport.Conn  // the connection MULTI was opened on; nil: no MULTI
	queued  int             // commands QUEUED so far
	changes []indexedChange // i: the change's place among the queued
}

// multiWord classifies a command for multiState.
type multiWord uint8

const (
	wordOther multiWord = iota
	wordMulti
	wordExec
	wordDiscard
)

func multiWordOf(args [][]byte) multiWord {
	if len(args) != 1 {
		return wordOther
	}
	switch {
	case bytes.EqualFold(args[0], []byte("MULTI")):
		return wordMulti
	case bytes.EqualFold(args[0], []byte("EXEC")):
		return wordExec
	case bytes.EqualFold(args[0], []byte("DISCARD")):
		return wordDiscard
	}
	return wordOther
}

// multiLost reports, and forgets, a MULTI whose connection is gone.
// c.mu is held.
func (c *Client) multiLost() error {
	if c.multi.conn == nil || c.multi.conn == c.conn {
		return nil
	}
	c.multi = multiState{}
	return ErrMultiLost
}

// track follows the connection's state through one answered command: w
// and ch (if changes) classify it, v is its reply. c.mu is held.
func (c *Client) track(w multiWord, ch stateChange, changes bool, v *Value) {
	if c.multi.conn == nil {
		switch {
		case w == wordMulti && v.Kind == KindStatus && string(v.Str) == "OK":
			c.multi = multiState{conn: c.conn, changes: c.multi.changes[:0]}
		case changes && ch.applies(v.Kind, v.Str):
			c.apply(ch)
		}
		return
	}
	switch w {
	case wordExec:
		// An array: the transaction ran, each change as its reply says.
		// Nil (a watched key changed) or an error (EXECABORT): nothing ran.
		if v.Kind == KindArray {
			for _, x := range c.multi.changes {
				if x.i < len(v.Array) && x.ch.applies(v.Array[x.i].Kind, v.Array[x.i].Str) {
					c.apply(x.ch)
				}
			}
		}
		c.multi = multiState{changes: c.multi.changes[:0]}
	case wordDiscard:
		c.multi = multiState{changes: c.multi.changes[:0]}
	case wordMulti:
		// MULTI inside MULTI is refused; the transaction stays open.
	default:
		if v.Kind == KindStatus && string(v.Str) == "QUEUED" {
			if changes {
				c.multi.changes = append(c.multi.changes, indexedChange{c.multi.queued, ch})
			}
			c.multi.queued++
		}
	}
}
