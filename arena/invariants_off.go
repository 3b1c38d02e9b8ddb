//go:build !invariants && !race

package arena

// invariants is off in normal builds; see invariants_on.go.
const invariants = false
