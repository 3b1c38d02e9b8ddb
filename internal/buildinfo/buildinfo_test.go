package buildinfo

import (
	"runtime"
	"testing"
)

func TestLabel(t *testing.T) {
	for _, c := range []struct {
		in   Info
		want string
	}{
		{Info{Version: "devel"}, "goblin@devel"},
		{Info{Version: "v1.4.0", Revision: "2ed253b1a2c3d4e5f6"}, "goblin@v1.4.0+2ed253b1a2c3"},
		{Info{Version: "devel", Revision: "2ed253b1a2c3d4e5f6", Modified: true}, "goblin@devel+2ed253b1a2c3-dirty"},
		{Info{Version: "devel", Revision: "abc"}, "goblin@devel+abc"},
	} {
		if got := c.in.Label(); got != c.want {
			t.Errorf("%+v.Label() = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestReadInATestBinary(t *testing.T) {
	in := Read()
	if in.GoVersion != runtime.Version() {
		t.Errorf("GoVersion %q, want %q", in.GoVersion, runtime.Version())
	}
	if in.Version == "" || in.Version == "(devel)" {
		t.Errorf("Version %q: want a version or devel", in.Version)
	}
}
