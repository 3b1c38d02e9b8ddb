package rdb

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// goldenNow fixes the ctime AUX field so the Encoder's golden file is
// reproducible.
var goldenNow = time.Unix(1767225600, 0) // 2026-01-01

// TestGoldenEncoder: the Encoder's output for the model is byte for byte
// testdata/goblin.rdb (regenerate with -update after a deliberate change;
// TestRedisCheckRDBAcceptsEncoder and TestRedisLoadsEncoderFile prove the
// bytes against Redis).
func TestGoldenEncoder(t *testing.T) {
	got := writeModel(t, model(), EncoderOptions{Now: goldenNow})
	path := filepath.Join("testdata", "goblin.rdb")
	if *update {
		writeFile(t, path, got)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the tests with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("output differs from %s from byte %d (%d bytes, golden %d)", path, i, len(got), len(want))
	}
}

// TestGoldenRedisSnapshots decodes the snapshots redis-server 7.0 wrote of
// the model (saved by TestDecoderReadsRedisSnapshot -update), so the
// Decoder is checked against Redis's bytes even where Redis is absent.
func TestGoldenRedisSnapshots(t *testing.T) {
	for name := range redisConfigs {
		data, err := os.ReadFile(filepath.Join("testdata", "redis-"+name+".rdb"))
		if err != nil {
			t.Fatalf("%v (run the tests with -update where redis-server is installed)", err)
		}
		checkRedisSnapshot(t, name, data)
	}
}

// TestGoldenRedisStream reads the stream snapshot without Redis.
func TestGoldenRedisStream(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "redis-stream.rdb"))
	if err != nil {
		t.Fatalf("%v (run the tests with -update where redis-server is installed)", err)
	}
	checkStreamSnapshot(t, data)
}
