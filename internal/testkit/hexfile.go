package testkit

import (
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

// ReadHexFile returns the bytes the hex text in the file at path spells (white
// space around it is ignored); it fails tb when the file cannot be read or
// is not hex.
func ReadHexFile(tb testing.TB, path string) []byte {
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
