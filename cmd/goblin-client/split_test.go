package main

import (
	"reflect"
	"testing"
)

func TestSplitArgs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"   ", nil},
		{"get k", []string{"get", "k"}},
		{"  set   k  v  ", []string{"set", "k", "v"}},
		{`set k "hello world"`, []string{"set", "k", "hello world"}},
		{`set k "a\r\nb\x00\xff\"\\"`, []string{"set", "k", "a\r\nb\x00\xff\"\\"}},
		{`set k 'it\'s "raw" \n'`, []string{"set", "k", `it's "raw" \n`}},
		{`set k ""`, []string{"set", "k", ""}},
		{"a\tb", []string{"a", "b"}},
		{`set k "\xZZ"`, []string{"set", "k", "xZZ"}}, // as redis-cli: \x without hex digits is x
	} {
		got, err := splitArgs(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("splitArgs(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{`get "k`, `get 'k`, `get "k"x`, `get 'k'x`} {
		if got, err := splitArgs(bad); err == nil {
			t.Errorf("splitArgs(%q) = %q, want an error", bad, got)
		}
	}
}
