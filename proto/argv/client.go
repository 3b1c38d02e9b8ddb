package argv

import (
	"encoding/binary"

	"github.com/goblin-kv/goblin/command"
	"github.com/goblin-kv/goblin/proto/resp"
)

// The connection and server commands' syntax.

// onOff reads ON or OFF into Amount (1, 0).
func onOff(d *Decoder, r *command.Request, w []byte) bool {
	switch {
	case eq(w, "on"):
		r.Amount = 1
	case eq(w, "off"):
		r.Amount = 0
	default:
		return d.syntax()
	}
	return true
}

func parseNoEvict(d *Decoder, r *command.Request, args [][]byte) bool { return onOff(d, r, args[2]) }

// parseClientReply reads CLIENT REPLY ON|OFF|SKIP.
func parseClientReply(d *Decoder, r *command.Request, args [][]byte) bool {
	switch w := args[2]; {
	case eq(w, "on"):
		r.Amount = command.ReplyOn
	case eq(w, "off"):
		r.Amount = command.ReplyOff
	case eq(w, "skip"):
		r.Amount = command.ReplySkip
	default:
		return d.syntax()
	}
	return true
}

// timeout reads a timeout as Redis's getTimeoutFromObjectOrReply does.
func (d *Decoder) timeout(b []byte, dst *int64) bool {
	v, ok := resp.ParseInt(b)
	switch {
	case !ok:
		return d.fail(command.NotInteger, "ERR timeout is not an integer or out of range")
	case v < 0:
		return d.fail(command.Err, "ERR timeout is negative")
	}
	*dst = v
	return true
}

// parseClientPause reads CLIENT PAUSE timeout [WRITE|ALL].
func parseClientPause(d *Decoder, r *command.Request, args [][]byte) bool {
	if len(args) > 4 {
		return d.failQuoting(command.Syntax, "ERR unknown subcommand or wrong number of arguments for '", args[1], "'. Try CLIENT HELP.")
	}
	if !d.timeout(args[2], &r.Amount) {
		return false
	}
	switch {
	case len(args) == 3:
	case len(args) == 4 && eq(args[3], "write"):
		r.Flags |= command.FlagPauseWrite
	case eq(args[3], "all"):
	default:
		return d.fail(command.Syntax, "ERR CLIENT PAUSE mode must be WRITE or ALL")
	}
	return true
}

// parseClientUnblock reads CLIENT UNBLOCK id [TIMEOUT|ERROR].
func parseClientUnblock(d *Decoder, r *command.Request, args [][]byte) bool {
	if !d.integer(args[2], &r.Amount) {
		return false
	}
	if len(args) == 4 && !eq(args[3], "timeout") && !eq(args[3], "error") || len(args) > 4 {
		return d.fail(command.Err, "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
	}
	if len(args) == 4 {
		r.Value = args[3] // the reason, TIMEOUT or ERROR
	}
	return true
}

// parseClientTracking reads CLIENT TRACKING ON|OFF [options]: ON|OFF in
// Amount, the options (which goblin does not act on) in Args.
func parseClientTracking(d *Decoder, r *command.Request, args [][]byte) bool {
	r.Args = args[3:]
	return onOff(d, r, args[2])
}

// clientTypes are CLIENT LIST's and KILL's client types.
var clientTypes = []string{"normal", "master", "slave", "replica", "pubsub"}

func clientType(w []byte) bool {
	for _, t := range clientTypes {
		if eq(w, t) {
			return true
		}
	}
	return false
}

// parseClientList reads CLIENT LIST [TYPE type] [ID id ...]: the type in
// Value, the ids as 8-byte little-endian words in Args.
func parseClientList(d *Decoder, r *command.Request, args [][]byte) bool {
	switch {
	case len(args) == 2:
		return true
	case len(args) == 4 && eq(args[2], "type"):
		if !clientType(args[3]) {
			return d.failQuoting(command.Err, "ERR Unknown client type '", args[3], "'")
		}
		r.Value = args[3]
		return true
	case len(args) > 3 && eq(args[2], "id"):
		d.recs, d.recArgs = d.recs[:0], d.recArgs[:0]
		for _, a := range args[3:] {
			v, ok := resp.ParseInt(a)
			if !ok {
				return d.fail(command.Err, "ERR Invalid client ID")
			}
			d.recs = binary.LittleEndian.AppendUint64(d.recs, uint64(v))
		}
		for i := 0; i < len(d.recs); i += 8 {
			d.recArgs = append(d.recArgs, d.recs[i:i+8:i+8])
		}
		r.Args = d.recArgs
		return true
	}
	return d.syntax()
}

// parseClientKill reads CLIENT KILL addr (FlagKillAddr, addr in Value), or
// CLIENT KILL filter value [filter value ...] (pairs in Args, checked here:
// ID a positive integer, TYPE a client type, USER default, SKIPME yes|no).
func parseClientKill(d *Decoder, r *command.Request, args [][]byte) bool {
	if len(args) == 3 {
		r.Flags |= command.FlagKillAddr
		r.Value = args[2]
		return true
	}
	if len(args)%2 != 0 {
		return d.syntax()
	}
	for i := 2; i < len(args); i += 2 {
		f, v := args[i], args[i+1]
		switch {
		case eq(f, "id"):
			if n, ok := resp.ParseInt(v); !ok || n < 1 {
				return d.fail(command.Err, "ERR client-id should be greater than 0")
			}
		case eq(f, "type"):
			if !clientType(v) {
				return d.failQuoting(command.Err, "ERR Unknown client type '", v, "'")
			}
		case eq(f, "user"):
			if string(v) != "default" {
				return d.failQuoting(command.Err, "ERR No such user '", v, "'")
			}
		case eq(f, "skipme"):
			if !eq(v, "yes") && !eq(v, "no") {
				return d.syntax()
			}
		case eq(f, "addr"), eq(f, "laddr"):
		default:
			return d.syntax()
		}
	}
	r.Args = args[2:]
	return true
}

// parseWait reads WAIT numreplicas timeout.
func parseWait(d *Decoder, r *command.Request, args [][]byte) bool {
	return d.integer(args[1], &r.Amount) && d.timeout(args[2], &r.Amount2)
}

// parseConfigSet reads CONFIG SET parameter value [parameter value ...]:
// the first pair in Key and Value, the rest in Args.
func parseConfigSet(d *Decoder, r *command.Request, args [][]byte) bool {
	if len(args)%2 != 0 {
		return d.syntax() // the arity (-4) already refused CONFIG SET name
	}
	r.Key, r.Value, r.Args = args[2], args[3], args[4:]
	return true
}

// parseFunctionList reads FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE].
func parseFunctionList(d *Decoder, r *command.Request, args [][]byte) bool {
	for i := 2; i < len(args); i++ {
		switch {
		case eq(args[i], "withcode"):
		case eq(args[i], "libraryname") && i+1 < len(args):
			r.Value = args[i+1]
			i++
		default:
			return d.fail(command.Err, "ERR Unknown argument "+string(args[i]))
		}
	}
	return true
}
