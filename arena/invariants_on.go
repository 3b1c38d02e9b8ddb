//go:build invariants || race

package arena

// invariants: the build checks what the arena's cached state trusts (-tags
// invariants, and every -race build, so CI's race run checks it): checkCalm.
const invariants = true
