//go:build !invariants

package store

const invariantsBuild = false

// ownerCheck is empty in normal builds; see owner_invariants.go.
type ownerCheck struct{}

func (*ownerCheck) check()   {}
func (*ownerCheck) release() {}
