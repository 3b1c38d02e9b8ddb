package main

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/goblin-kv/goblin/client"
	"github.com/goblin-kv/goblin/transport"
)

func bulk(s string) client.Value { return client.Value{Kind: client.KindBulk, Str: []byte(s)} }

// TestJSONRESP3: --json renders RESP3's kinds: maps as objects (pairs when
// a key is not a string), sets as arrays, doubles as numbers (inf as its
// text), booleans, big numbers and verbatim text as strings.
func TestJSONRESP3(t *testing.T) {
	for _, tc := range []struct {
		v    client.Value
		want string
	}{
		{client.Value{Kind: client.KindMap, Array: []client.Value{bulk("a"), {Kind: client.KindInt, Int: 1}}}, `{"a":1}`},
		{client.Value{Kind: client.KindMap, Array: []client.Value{{Kind: client.KindInt, Int: 1}, bulk("x")}}, `[[1,"x"]]`},
		{client.Value{Kind: client.KindSet, Array: []client.Value{bulk("m")}}, `["m"]`},
		{client.Value{Kind: client.KindDouble, Float: 1.5, Str: []byte("1.5")}, `1.5`},
		{client.Value{Kind: client.KindDouble, Float: math.Inf(1), Str: []byte("inf")}, `"inf"`},
		{client.Value{Kind: client.KindBool, Int: 1}, `true`},
		{client.Value{Kind: client.KindBigNumber, Str: []byte("123456789012345678901234567890")}, `"123456789012345678901234567890"`},
		{client.Value{Kind: client.KindVerbatim, Format: "txt", Str: []byte("hi")}, `"hi"`},
	} {
		b, err := json.Marshal(jsonValue(tc.v))
		if err != nil || string(b) != tc.want {
			t.Errorf("%v as JSON = %s, %v; want %s", tc.v, b, err, tc.want)
		}
	}
}

// TestShortTarget: the prompt shows a short form of the target, as
// redis-cli shows host:port.
func TestShortTarget(t *testing.T) {
	for in, want := range map[string]string{
		"tcp://127.0.0.1:6380":                                     "127.0.0.1:6380",
		"tcp://127.0.0.1:6380?proto=sbe":                           "sbe 127.0.0.1:6380",
		"/run/g.sock":                                              "/run/g.sock",
		"/tmp/goblin-1000/some/long/dir/goblin.sock":               ".../goblin.sock",
		"ring:///dev/shm/goblin":                                   "ring:/dev/shm/goblin",
		"aeron:ipc?proto=sbe":                                      "sbe aeron:ipc",
		"aeron:udp?endpoint=10.0.0.1:40123|control=10.0.0.1:40124": "aeron:udp 10.0.0.1:40123",
	} {
		tg, err := transport.ParseTarget(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := shortTarget(tg); got != want {
			t.Errorf("shortTarget(%s) = %q, want %q", in, got, want)
		}
		if len(shortTarget(tg)) > 30 {
			t.Errorf("shortTarget(%s) = %q is long", in, shortTarget(tg))
		}
	}
}
