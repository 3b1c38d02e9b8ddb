package driver

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
)

func TestPropertiesLayers(t *testing.T) {
	p := PropertiesFromEnv([]string{"AERON_DIR=/from/env", "AERON_CLIENT_LIVENESS_TIMEOUT=5s", "HOME=/x"})
	if _, ok := p["HOME"]; ok {
		t.Fatal("non-Aeron variable taken")
	}
	for _, def := range []string{"aeron.dir=/from/define", "aeron.timer.interval : 500ms", "AERON_CLIENT_LIVENESS_TIMEOUT="} {
		if err := p.Define(def); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Define("=x"); !errors.Is(err, ErrBadProperty) {
		t.Fatalf("malformed define: %v", err)
	}
	o, err := p.Options()
	if err != nil {
		t.Fatal(err)
	}
	if o.Dir != "/from/define" || o.TimerInterval != 500*time.Millisecond || o.ClientLivenessTimeout != 0 {
		t.Fatalf("options %+v", o)
	}
	p.Set("aeron.ipc.term.buffer.length", "2m")
	p.Set("aeron.term.buffer.sparse.file", "false")
	p.Set("aeron.shared.idle.strategy", "spin")
	p.Set("aeron.driver.termination.validator", "allow")
	p.Set("aeron.driver.timeout", "2500")
	if o, err = p.Options(); err != nil {
		t.Fatal(err)
	}
	if o.IPCTermLength != 2<<20 || !o.DenseLogs || o.Idle != (aeron.SpinIdle{}) || o.TerminationValidator == nil ||
		o.DriverTimeout != 2500*time.Millisecond {
		t.Fatalf("options %+v", o)
	}
	p.Set("aeron.client.liveness.timeout", "ten seconds")
	if _, err := p.Options(); !errors.Is(err, ErrBadProperty) {
		t.Fatalf("bad duration: %v", err)
	}
}

func TestParseSizeAndDuration(t *testing.T) {
	for v, want := range map[string]int64{"64k": 64 << 10, "16M": 16 << 20, "1g": 1 << 30, "4096": 4096} {
		if n, err := parseSize("x", v); err != nil || n != want {
			t.Errorf("parseSize(%q) = %d, %v", v, n, err)
		}
	}
	for v, want := range map[string]time.Duration{"5s": 5 * time.Second, "7ms": 7 * time.Millisecond, "3us": 3 * time.Microsecond,
		"100ns": 100, "250": 250} {
		if n, err := parseDuration("x", v); err != nil || time.Duration(n) != want {
			t.Errorf("parseDuration(%q) = %d, %v", v, n, err)
		}
	}
	for _, v := range []string{"", "k", "-1", "10x"} {
		if _, err := parseSize("x", v); err == nil {
			t.Errorf("parseSize(%q) accepted", v)
		}
	}
	if _, err := parseDuration("x", "5 minutes"); err == nil {
		t.Error("bad duration accepted")
	}
	if formatDuration(100*time.Millisecond) != "100ms" || formatDuration(5*time.Second) != "5s" || formatDuration(1500*time.Nanosecond) != "1500ns" {
		t.Error("formatDuration")
	}
}

// TestImageLimitProperties: the limits on what senders can make the
// receiver allocate come from AERON_* variables as the other options do,
// default to documented values, and bad values are refused by name.
func TestImageLimitProperties(t *testing.T) {
	var o Options
	o.EnsureDefaults()
	if o.MaxImageTermLength != 64<<20 || o.MaxImagesLength != 1<<30 || o.StreamSessionLimit != 1024 {
		t.Fatalf("defaults: image term %d, images %d, sessions %d; want 64 MiB, 1 GiB, 1024",
			o.MaxImageTermLength, o.MaxImagesLength, o.StreamSessionLimit)
	}
	p := PropertiesFromEnv([]string{"AERON_IMAGE_TERM_BUFFER_MAX_LENGTH=1m", "AERON_IMAGE_BUFFERS_MAX_LENGTH=4g",
		"AERON_DRIVER_STREAM_SESSION_LIMIT=16"})
	o, err := p.Options()
	if err != nil {
		t.Fatal(err)
	}
	if o.MaxImageTermLength != 1<<20 || o.MaxImagesLength != 4<<30 || o.StreamSessionLimit != 16 {
		t.Fatalf("from the environment: image term %d, images %d, sessions %d", o.MaxImageTermLength,
			o.MaxImagesLength, o.StreamSessionLimit)
	}
	keep := Options{Dir: "/kept", TermLength: 1 << 20}
	p.Set("aeron.dir", "/not/taken")
	if err := p.ApplyImageLimits(&keep); err != nil {
		t.Fatal(err)
	}
	if keep.Dir != "/kept" || keep.TermLength != 1<<20 || keep.MaxImageTermLength != 1<<20 ||
		keep.MaxImagesLength != 4<<30 || keep.StreamSessionLimit != 16 {
		t.Fatalf("ApplyImageLimits: %+v", keep)
	}
	p.Set("aeron.driver.stream.session.limit", "0")
	if err := p.ApplyImageLimits(&keep); !errors.Is(err, ErrBadProperty) {
		t.Fatalf("ApplyImageLimits with session limit 0: %v, want ErrBadProperty", err)
	}
	if _, err := p.Options(); !errors.Is(err, ErrBadProperty) {
		t.Fatalf("session limit 0: %v, want ErrBadProperty", err)
	}
	o = Options{MaxImageTermLength: 100 << 10}
	o.EnsureDefaults()
	if err := o.Validate(); !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), "aeron.image.term.buffer.max.length") {
		t.Fatalf("image term ceiling of 100 KiB: %v, want an error naming aeron.image.term.buffer.max.length", err)
	}
}
