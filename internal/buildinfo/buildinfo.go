// Package buildinfo names this build of goblin from the binary's build
// information: the main module's version and the VCS revision the go tool
// stamped into it. The server's --version, INFO server, the
// goblin_build_info metric and the media driver's version label all read
// it here, so they never disagree.
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Info is what the binary knows about how it was built.
type Info struct {
	// Version is the main module's version, "devel" for a build from a
	// source tree (the go tool's "(devel)").
	Version string
	// Revision is the full VCS revision, "" when the build recorded none
	// (go run, a build outside a repository, -buildvcs=false).
	Revision string
	// Modified is true when the tree had uncommitted changes.
	Modified bool
	// GoVersion is the toolchain that built the binary.
	GoVersion string
}

// Read returns this binary's build information.
func Read() Info {
	in := Info{Version: "devel", GoVersion: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return in
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		in.Version = v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		}
	}
	return in
}

// ShortRevision is the revision's first 12 hex digits with "-dirty" for a
// modified tree, or "" when there is none.
func (in Info) ShortRevision() string {
	if in.Revision == "" {
		return ""
	}
	r := in.Revision[:min(12, len(in.Revision))]
	if in.Modified {
		r += "-dirty"
	}
	return r
}

// Label is the one-word form: goblin@<version>, plus +<short revision>
// when there is one, e.g. goblin@devel+2ed253b1a2c3 or goblin@v1.4.0.
func (in Info) Label() string {
	l := "goblin@" + in.Version
	if r := in.ShortRevision(); r != "" {
		l += "+" + r
	}
	return l
}
