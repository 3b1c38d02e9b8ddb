package snapshot

import (
	"errors"
	"fmt"

	"github.com/goblin-kv/goblin/rdb"
	"github.com/goblin-kv/goblin/store"
)

// ErrUnsupportedType: the store holds a value of a type snapshots cannot
// write (yet); the save is refused rather than written wrong.
var ErrUnsupportedType = errors.New("snapshot: value type not supported")

// ValueOf turns one stored entry into the RDB object the Encoder writes.
// It is the one place a value type meets the file format: every type the
// store holds gets its case here, and a type without one is refused with
// ErrUnsupportedType naming the key. v's slices point into e's, valid as
// long as e is.
func ValueOf(e *store.Entry, v *rdb.Value) error {
	switch e.Type {
	case store.TypeString:
		*v = rdb.Value{Kind: rdb.KindString, Str: e.Value}
		return nil
	case store.TypeHash, store.TypeSet, store.TypeList, store.TypeZSet:
		*v = e.Coll
		return nil
	}
	return fmt.Errorf("%w: key %q holds a %s", ErrUnsupportedType, e.Key, e.Type)
}
