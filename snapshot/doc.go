// Package snapshot saves goblin's keyspace to an RDB file and loads one at
// start: the persistence behind SAVE, BGSAVE, SHUTDOWN SAVE and the save
// policy.
//
// A Job writes a point-in-time image of every database without stopping
// the loop that owns them: it begins a store.Cut of each non-empty store
// at the same moment, then Step walks the cuts in bounded slices on the
// loop goroutine, serializing each key through one per-type function
// (ValueOf, value → RDB object) into an rdb.Encoder. A write to a key the
// walk has not reached serializes the key's old value first (the store's
// copy-on-write). In the background form the encoded bytes are handed to
// a writer goroutine, so the loop never waits on the disk; the foreground
// form (SAVE) writes them itself.
//
// Every save writes a temporary file in the target directory, fsyncs it,
// renames it over the target and fsyncs the directory, so a crash at any
// moment leaves either the previous file or the new one, whole.
//
// Load reads an RDB file (goblin's or Redis 7.0's) into the stores with
// bulk inserts, sizing each index from the file's RESIZEDB hints and
// dropping keys already expired. A corrupt or truncated file is refused
// with the byte offset and the reason, and a type goblin does not store is
// refused naming the key and the type unless LoadOptions.SkipUnsupported.
//
// docs/persistence.md describes the commands, options and guarantees.
package snapshot
