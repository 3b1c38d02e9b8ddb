package aeronsource

import (
	"crypto/rand"
	"encoding/hex"
)

func newID() string {
	var b [20]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
