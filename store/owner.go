//go:build !invariants && !race

package store

// ownerCheck is empty in normal builds (neither -tags invariants nor -race);
// see owner_invariants.go.
type ownerCheck struct{}

func (*ownerCheck) check()   {}
func (*ownerCheck) release() {}
