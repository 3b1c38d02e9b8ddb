package argv

import (
	"github.com/goblin-kv/goblin/command"
)

// Cluster mode's commands (--cluster-config). CLUSTER's slot arguments go in
// Amount (and GETKEYSINSLOT's count in Amount2); the engine checks their
// range with Redis's texts.

func init() {
	for op, p := range map[command.Op]parser{
		command.OpClusterKeySlot: value(2), command.OpClusterCountKeysInSlot: clusterSlot,
		command.OpClusterGetKeysInSlot: parseGetKeysInSlot, command.OpClusterCountFailureReports: value(2),
		command.OpClusterSetSlot: parseSetSlot, command.OpClusterAddSlots: rest(2),
		command.OpClusterAddSlotsRange: rest(2), command.OpClusterDelSlots: rest(2),
		command.OpClusterMeet: rest(2), command.OpClusterForget: value(2), command.OpClusterReplicate: value(2),
		command.OpClusterFailover: rest(2), command.OpClusterReset: rest(2), command.OpMigrate: parseMigrate,
		command.OpClusterDelSlotsRange: rest(2), command.OpClusterSetConfigEpoch: value(2), command.OpClusterReplicas: value(2),
		command.OpClusterSlaves: value(2), command.OpRestoreAsking: parseRestore,
	} {
		parsers[op] = p
	}
}

// slot reads a slot number as Redis's getSlotOrReply does.
func (d *Decoder) slot(b []byte, dst *int64) bool {
	if v, ok := d.parseInt(b); ok && v >= 0 && v < 16384 {
		*dst = v
		return true
	}
	return d.failQuoting(command.Err, "ERR Invalid or out of range slot", nil, "")
}

func (d *Decoder) parseInt(b []byte) (int64, bool) {
	var v int64
	if !d.integer(b, &v) {
		return 0, false
	}
	return v, true
}

func clusterSlot(d *Decoder, r *command.Request, args [][]byte) bool {
	return d.slot(args[2], &r.Amount)
}

// parseGetKeysInSlot reads CLUSTER GETKEYSINSLOT slot count.
func parseGetKeysInSlot(d *Decoder, r *command.Request, args [][]byte) bool {
	if !d.integer(args[2], &r.Amount) || !d.integer(args[3], &r.Amount2) {
		return d.fail(command.Err, "ERR Invalid slot or number of keys")
	}
	if r.Amount < 0 || r.Amount >= 16384 || r.Amount2 < 0 {
		return d.fail(command.Err, "ERR Invalid slot or number of keys")
	}
	return true
}

// parseSetSlot reads CLUSTER SETSLOT slot IMPORTING|MIGRATING|NODE id or
// STABLE: the action in Value, the node id in Key.
func parseSetSlot(d *Decoder, r *command.Request, args [][]byte) bool {
	if !d.slot(args[2], &r.Amount) {
		return false
	}
	r.Value = args[3]
	switch {
	case eq(args[3], "stable") && len(args) == 4:
	case (eq(args[3], "importing") || eq(args[3], "migrating") || eq(args[3], "node")) && len(args) == 5:
		r.Key = args[4]
	default:
		return d.fail(command.Err, "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP")
	}
	return true
}

// MIGRATE's request: host, port, AUTH2 user and password ("" when not
// given) in Args[0..3], the keys from Args[4] (the single key form puts its
// key there too), the database in Amount, the timeout in Amount2.
const (
	MigrateHost = iota
	MigratePort
	MigrateUser
	MigratePassword
	MigrateKeys
)

// parseMigrate reads MIGRATE host port key|"" db timeout [COPY] [REPLACE]
// [AUTH password | AUTH2 user password] [KEYS key...].
func parseMigrate(d *Decoder, r *command.Request, args [][]byte) bool {
	if !d.integer(args[4], &r.Amount) || !d.integer(args[5], &r.Amount2) {
		return false
	}
	var user, pass []byte
	var keys [][]byte
	for i := 6; i < len(args); i++ {
		left := len(args) - i - 1
		switch {
		case eq(args[i], "copy"):
			r.Flags |= command.FlagCopy
		case eq(args[i], "replace"):
			r.Flags |= command.FlagReplace
		case eq(args[i], "auth") && left >= 1:
			pass = args[i+1]
			i++
		case eq(args[i], "auth2") && left >= 2:
			user, pass = args[i+1], args[i+2]
			i += 2
		case eq(args[i], "keys"):
			if len(args[3]) != 0 {
				return d.fail(command.Err, "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string")
			}
			keys = args[i+1:]
			i = len(args)
		default:
			return d.syntax()
		}
	}
	if keys == nil && len(args[3]) != 0 {
		keys = args[3:4]
	}
	// Args is built in the decoder's argument scratch (BITFIELD's), which
	// allocates once it has grown.
	d.recArgs = append(d.recArgs[:0], args[1], args[2], user, pass)
	d.recArgs = append(d.recArgs, keys...)
	r.Args = d.recArgs
	return true
}
