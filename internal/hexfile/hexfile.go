// Package hexfile reads test fixtures stored as hex text: the recorded
// version-1 SBE messages in proto/sbe/testdata/v1, which both the codec's
// and the engine's tests replay.
//
//	msg := hexfile.Read(t, "testdata/v1/request-get.hex")
package hexfile

import (
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

// Read returns the bytes the hex text in the file at path spells (white
// space around it is ignored); it fails tb when the file cannot be read or
// is not hex.
func Read(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	msg, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return msg
}
