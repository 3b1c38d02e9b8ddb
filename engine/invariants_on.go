//go:build invariants || race

package engine

// invariants: the build checks what the hot paths trust (-tags invariants,
// and every -race build, so CI's race run checks it): checkHot.
const invariants = true
