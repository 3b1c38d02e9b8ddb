//go:build invariants

package command

// invariantsBuild: the store's -tags invariants checks (owner goroutine
// lookups) allocate, so allocation counts are only asserted without them.
const invariantsBuild = true
