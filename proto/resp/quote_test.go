package resp

import "testing"

// Every byte quoted by AppendQuoted reads back through SplitArgs as itself.
func TestAppendQuotedRoundTrip(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	q := AppendQuoted(nil, all)
	if want := `"\x00\x01`; string(q[:len(want)]) != want {
		t.Fatalf("quoted prefix %q", q[:len(want)])
	}
	args, err := SplitArgs(string(q))
	if err != nil || len(args) != 1 || args[0] != string(all) {
		t.Fatalf("SplitArgs(%q) = %q, %v", q, args, err)
	}
	if got := string(AppendQuoted(nil, []byte("a\"b\\c\n"))); got != `"a\"b\\c\n"` {
		t.Errorf("got %s", got)
	}
}
