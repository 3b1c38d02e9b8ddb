package rdb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"
)

// decodeSummary decodes data read through r and renders what came out:
// every key, then the error or the clean end.
func decodeSummary(r io.Reader) (string, []modelKey, error) {
	d := NewDecoder(r, DecoderOptions{SkipUnsupported: true})
	var b bytes.Buffer
	var keys []modelKey
	for d.Next() {
		e := d.Entry()
		fmt.Fprintf(&b, "%d/%q exp=%d %s\n", e.DB, e.Key, e.Expiry, canon(&e.Value))
		v := Value{Kind: e.Kind, Str: bytes.Clone(e.Str), Scores: append([]float64(nil), e.Scores...)}
		for _, it := range e.Items {
			v.Items = append(v.Items, bytes.Clone(it))
		}
		keys = append(keys, modelKey{db: e.DB, key: string(e.Key), expiry: e.Expiry, v: v})
	}
	if err := d.Err(); err != nil {
		var re *Error
		if !errors.As(err, &re) {
			return "", nil, fmt.Errorf("error %v is not an *rdb.Error", err)
		}
		fmt.Fprintf(&b, "error: %v", err)
		return b.String(), keys, nil
	}
	return b.String(), keys, nil
}

// FuzzDecoder: no input makes the Decoder panic or return anything but an
// *Error; reading in one-byte and half-size pieces gives the same result
// as reading whole; a file that decodes cleanly re-encodes to a file that
// decodes to the same keys.
func FuzzDecoder(f *testing.F) {
	for _, name := range []string{"goblin.rdb", "redis-default.rdb"} {
		if data, err := os.ReadFile(filepath.Join("testdata", name)); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		whole, keys, err := decodeSummary(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []io.Reader{iotest.OneByteReader(bytes.NewReader(data)), iotest.HalfReader(bytes.NewReader(data))} {
			got, _, err := decodeSummary(r)
			if err != nil {
				t.Fatal(err)
			}
			if got != whole {
				t.Fatalf("piecewise read differs:\n%s\nwhole:\n%s", got, whole)
			}
		}
		if bytes.Contains([]byte(whole), []byte("error: ")) {
			return
		}
		var buf bytes.Buffer
		e := NewEncoder(&buf, EncoderOptions{})
		_ = e.WriteHeader()
		db := -1
		var kept []modelKey
		for _, k := range keys {
			if k.db != db {
				db = k.db
				_ = e.SelectDB(db, 0, 0)
			}
			if e.Write([]byte(k.key), &k.v, k.expiry) == nil {
				kept = append(kept, k)
			}
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		again, _, err := decodeSummary(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		for _, k := range kept {
			fmt.Fprintf(&want, "%d/%q exp=%d %s\n", k.db, k.key, k.expiry, canon(&k.v))
		}
		if again != want.String() {
			t.Fatalf("re-encoded file decodes to\n%.2000s\nwant\n%.2000s", again, want.String())
		}
	})
}

// FuzzDecodeDump: no payload makes DecodeDump panic; a payload it accepts
// re-encodes to one that decodes to the same value.
func FuzzDecodeDump(f *testing.F) {
	for _, k := range model()[:20] {
		p, err := AppendDump(nil, &k.v)
		if err == nil {
			f.Add(p)
		}
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		var d Decoder
		v, err := d.DecodeDump(p)
		if err != nil {
			var re *Error
			if !errors.As(err, &re) {
				t.Fatalf("error %v is not an *rdb.Error", err)
			}
			return
		}
		want := canon(v)
		q, err := AppendDump(nil, v)
		if err != nil {
			return // decodable but not writable (say, a set with a repeated member)
		}
		var d2 Decoder
		v2, err := d2.DecodeDump(q)
		if err != nil {
			t.Fatalf("re-encoded payload refused: %v", err)
		}
		if canon(v2) != want {
			t.Fatalf("re-encoded payload decodes to %s, want %s", canon(v2), want)
		}
	})
}

// TestWriteFuzzSeeds (with -update) writes small seed files for the fuzz
// targets into testdata/fuzz: one small RDB file per model key and one
// DUMP payload per value.
func TestWriteFuzzSeeds(t *testing.T) {
	if !*update {
		t.Skip("seeds are rewritten only with -update")
	}
	for i, k := range model() {
		if k.key == "l:large" || k.key == "l:huge" || k.key == "h:many" || k.key == "set:manyints" || k.key == "z:many" {
			continue
		}
		file := writeModel(t, []modelKey{k}, EncoderOptions{Now: goldenNow})
		seed(t, "FuzzDecoder", fmt.Sprintf("key%02d", i), file)
		p, err := AppendDump(nil, &k.v)
		if err != nil {
			t.Fatal(err)
		}
		seed(t, "FuzzDecodeDump", fmt.Sprintf("value%02d", i), p)
	}
}

func seed(t *testing.T, target, name string, data []byte) {
	dir := filepath.Join("testdata", "fuzz", target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, name), []byte(fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)))
}
