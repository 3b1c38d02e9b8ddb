package aeron

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron/javadriver"
	"github.com/goblin-kv/goblin/idle"
	"github.com/goblin-kv/goblin/proto"
	"github.com/goblin-kv/goblin/transport"
)

func parse(t *testing.T, s string) transport.Target {
	t.Helper()
	tg, err := transport.ParseTarget(s)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func TestConfigFor(t *testing.T) {
	o, err := ConfigFor(parse(t, "aeron:udp?endpoint=10.0.0.1:40123|control=10.0.0.1:40124|proto=sbe|dir=/dev/shm/x|driver=external|profile=spin|stream=7|reply-stream=8|term-length=131072|wait=spin"))
	if err != nil {
		t.Fatal(err)
	}
	if o.Media != "udp" || o.Endpoint != "10.0.0.1:40123" || o.Control != "10.0.0.1:40124" || o.Proto != proto.SBE ||
		o.Dir != "/dev/shm/x" || !o.External || o.Profile != javadriver.Spin || o.Stream != 7 || o.ReplyStream != 8 ||
		o.TermLength != 128<<10 {
		t.Fatalf("%+v", o)
	}
	o, err = ConfigFor(parse(t, "aeron:ipc"))
	if err != nil {
		t.Fatal(err)
	}
	if o.Dir != DefaultDir() || o.External || o.Stream != DefaultStream || o.ReplyStream != DefaultReplyStream || o.Proto != proto.RESP {
		t.Fatalf("defaults: %+v", o)
	}
	for _, bad := range []string{
		"aeron:udp?endpoint=10.0.0.1:1",           // no control
		"aeron:udp?endpoint=10.0.0.1:1|control=x", // control without port
		"aeron:ipc?bogus=1",                       // unknown parameter
		"aeron:ipc?driver=maybe",                  // bad driver
		"aeron:ipc?profile=turbo",                 // bad profile
		"aeron:ipc?term-length=1000",              // not a power of two
		"aeron:ipc?stream=0",                      // reserved
		"aeron:ipc?stream=x",                      // not a number
	} {
		if _, err := ConfigFor(parse(t, bad)); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", bad, err)
		}
	}
}

func TestDialOptionsFor(t *testing.T) {
	t.Setenv(AeronDirEnv, "")
	o, err := DialOptionsFor(parse(t, "aeron:ipc?proto=sbe|driver=external"))
	if err != nil {
		t.Fatal(err)
	}
	if o.Wait != idle.Backoff || o.Dir != DefaultDir() || o.Proto != proto.SBE {
		t.Fatalf("%+v", o)
	}
	o, err = DialOptionsFor(parse(t, "aeron:udp?endpoint=h:1|control=h:2|profile=spin|driver-timeout=3s"))
	if err != nil {
		t.Fatal(err)
	}
	if o.Wait != idle.Spin || o.Dir != "" || o.Profile != javadriver.Spin || o.DriverTimeout.Seconds() != 3 {
		t.Fatalf("profile=spin: %+v", o)
	}
	o, err = DialOptionsFor(parse(t, "aeron:udp?endpoint=h:1|control=h:2|profile=spin|wait=yield"))
	if err != nil || o.Wait != idle.Yield {
		t.Fatalf("wait=yield wins: %+v %v", o, err)
	}
	if _, err := DialOptionsFor(parse(t, "aeron:udp?endpoint=h:1")); !errors.Is(err, ErrConfig) {
		t.Fatalf("udp without control: %v", err)
	}
	if _, err := DialOptionsFor(parse(t, "aeron:ipc?wait=sometimes")); !errors.Is(err, ErrConfig) {
		t.Fatalf("bad wait: %v", err)
	}
}

// TestDialOptionsForAeronDir: a client target without dir= uses the
// media driver $AERON_DIR names, as Aeron's tools do (IPC and UDP); dir=
// wins over it; and a dial that finds no driver names the directory and
// where it came from.
func TestDialOptionsForAeronDir(t *testing.T) {
	env := t.TempDir()
	t.Setenv(AeronDirEnv, env)
	for _, s := range []string{"aeron:ipc", "aeron:udp?endpoint=h:1|control=h:2"} {
		if o, err := DialOptionsFor(parse(t, s)); err != nil || o.Dir != env {
			t.Errorf("%s with AERON_DIR=%s: Dir %q, %v", s, env, o.Dir, err)
		}
	}
	if o, err := DialOptionsFor(parse(t, "aeron:ipc?dir=/elsewhere")); err != nil || o.Dir != "/elsewhere" {
		t.Errorf("dir= with AERON_DIR set: Dir %q, %v; want dir= to win", o.Dir, err)
	}
	o, err := DialOptionsFor(parse(t, "aeron:ipc"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = Dial(ctx, o)
	if !errors.Is(err, ErrNoServer) || !strings.Contains(err.Error(), env) || !strings.Contains(err.Error(), "$AERON_DIR") {
		t.Fatalf("Dial with an empty $AERON_DIR directory: %v; want ErrNoServer naming %s and $AERON_DIR", err, env)
	}
	t.Setenv(AeronDirEnv, "")
	o, _ = DialOptionsFor(parse(t, "aeron:ipc?dir="+env))
	if _, err = Dial(ctx, o); !strings.Contains(err.Error(), env+" (the target's dir=)") {
		t.Fatalf("Dial with an empty dir=: %v; want the directory and dir= named", err)
	}
}

// TestChannels pins the exact channel URIs, the response-channel rule
// included: both response sides name the server's control address.
func TestChannels(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{requestChannel("udp", "10.0.0.1:40123").String(), "aeron:udp?endpoint=10.0.0.1:40123"},
		{responseChannel("udp", "10.0.0.1:40124").String(), "aeron:udp?control=10.0.0.1:40124|control-mode=response"},
		{responseChannel("udp", "10.0.0.1:40124").TermLength(DefaultTermLength).ResponseCorrelationID(42).String(),
			"aeron:udp?control=10.0.0.1:40124|control-mode=response|term-length=4194304|response-correlation-id=42"},
		{requestChannel("udp", "10.0.0.1:40123").TermLength(DefaultTermLength).ResponseCorrelationID(7).String(),
			"aeron:udp?endpoint=10.0.0.1:40123|term-length=4194304|response-correlation-id=7"},
		{requestChannel("ipc", "").String(), "aeron:ipc"},
		{responseChannel("ipc", "").String(), "aeron:ipc?control-mode=response"},
	} {
		if tc.got != tc.want {
			t.Errorf("channel %s, want %s", tc.got, tc.want)
		}
	}
}

// TestDialRejectsBadBackoff: backoff parameters Step cannot follow (a
// negative park would make Backoff poll in a tight loop with no park) are
// a configuration error, found before any driver is looked for.
func TestDialRejectsBadBackoff(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, p := range []idle.Params{{MinPark: -time.Microsecond}, {Spins: -1}, {Yields: -1}} {
		c, err := Dial(ctx, DialOptions{Media: "ipc", Dir: t.TempDir(), Backoff: p})
		if c != nil {
			c.Close()
		}
		if !errors.Is(err, ErrConfig) || !errors.Is(err, idle.ErrParams) {
			t.Errorf("Dial with backoff %+v: %v, want ErrConfig and idle.ErrParams", p, err)
		}
	}
}
