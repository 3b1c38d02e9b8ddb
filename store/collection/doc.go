// Package collection holds the pointer-free data structures goblin stores hashes,
// lists, sets and sorted sets in.
//
// Small collections are one compact blob in Redis 7.0's own byte formats, so an RDB
// snapshot or a DUMP payload writes them unchanged and a loaded one is checked with
// the validation Redis applies:
//   - Listpack: a field/value, list or member/score sequence (src/listpack.c), with
//     the sorted-set helpers ZsetInsert, ZsetRank and AppendScore (src/t_zset.c);
//   - Intset: a sorted array of 2-, 4- or 8-byte integers (src/intset.c).
//
// Large collections are built from blocks of an arena.Arena, named by 32-bit
// arena.Refs, so the garbage collector never scans them however many elements they
// hold:
//   - Hash: an open-addressing table of arena references (field → value) that grows
//     by incremental rehashing in bounded steps, as Redis's dict does;
//   - List: a quicklist-like chain of arena nodes, each holding a listpack.
//
// A large sorted set is a Hash (member → score) beside a List of zkeys
// (AppendZKey: the score's bits made order-preserving, then the member), whose
// byte order is Redis's element order: List.ZCount finds a bound's rank by
// walking node counts, O(n/k) for k zkeys per node. An ordered structure with
// O(log n) rank (a B+tree of arena nodes with subtree counts) is future work.
//
// Every structure here is a small struct of integers (no Go pointers) whose methods
// take the arena as an argument, so the store can keep it inside its own
// pointer-free records. Every arena block a structure owns begins with a 4-byte
// owner id chosen by the caller (the store's slot id of the key): when
// arena.Compact moves a block, the owner's relocate callback reads that id from the
// block's new copy (OwnerOf), finds the structure and calls its Relocate, which
// patches the one reference to the block. A structure finds that reference from the
// block itself (a hash entry by hashing its field), so no back-pointer is stored.
//
// Freeing a structure of millions of elements is incremental: FreeStep releases at
// most a budget of blocks per call and reports whether more remain, so the server
// loop can spread the work over many turns as Redis's lazyfree does.
//
// Like the store, nothing here is safe for concurrent use: one goroutine owns the
// arena and every structure in it.
package collection
