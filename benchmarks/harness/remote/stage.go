package remote

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/goblin-kv/goblin/benchmarks/harness"
)

// ErrStaged is wrapped when a staged file differs between the build and
// what a host holds: the run is refused, as the two hosts would not run
// the same bytes.
var ErrStaged = errors.New("harness: staged files differ")

// HostsOptions say how to reach the two hosts of a -hosts run and where to
// stage the build on them.
type HostsOptions struct {
	SSH            SSH    // the ssh command and options
	Server, Client string // ssh destinations ([user@]host, or a Host of an ssh config)
	// RemoteBase is where each host keeps the run's runtime directory,
	// RemoteBase/goblin-bench-RUNID/ROLE (default /tmp); it is removed when
	// the run ends.
	RemoteBase string
	// StageDir is where the files go on each host; "" means a private
	// directory inside the runtime directory, removed with it. With
	// StageShared, StageDir is one filesystem both hosts see (an NFS
	// home): it is written once, through the server host, and kept. With
	// StageNoCopy nothing is written: the files must already be there
	// (a read-only shared prefix), and the hashes decide.
	StageDir    string
	StageShared bool
	StageNoCopy bool
	Files       []StageFile
}

// StageFile is one file to stage: the tool it is (goblin-bench,
// goblin-server, aeron-jar, aeronmd) and its path on this machine.
type StageFile struct {
	Tool  string
	Local string
}

// StageFiles lists what a run's hosts need: goblin-bench itself (the agent,
// the measuring client, the counter reader), goblin-server, and the media
// driver of the configured kind (Aeron's jar for the Java driver and the raw
// ping-pong, or the aeronmd binary).
func StageFiles(cfg *harness.Config) ([]StageFile, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	files := []StageFile{{Tool: "goblin-bench", Local: self}}
	if cfg.GoblinServer == "" {
		return nil, fmt.Errorf("%w: -hosts needs -goblin-server PATH, the binary to stage", harness.ErrConfig)
	}
	files = append(files, StageFile{Tool: "goblin-server", Local: cfg.GoblinServer})
	if jar, err := harness.AeronJar(cfg); err == nil {
		files = append(files, StageFile{Tool: "aeron-jar", Local: jar})
	} else if cfg.Driver.Kind == harness.DriverJava || cfg.Driver.Kind == "" {
		return nil, fmt.Errorf("%w: the Java media driver's jar to stage: %w", harness.ErrConfig, err)
	}
	if cfg.Driver.Kind == harness.DriverAeronmd {
		files = append(files, StageFile{Tool: "aeronmd", Local: cfg.Driver.Binary})
	}
	return files, nil
}

// hostsRecords is the archive directory of the two-host records: the
// staged files' hashes from the build and from each host, and the agents'
// logs.
const hostsRecords = "hosts"

// ConnectHosts stages the files on both hosts, checks every staged file's
// sha256sum as each host sees it against the build (and refuses to run
// when one differs), then starts an agent on each host. The agents' logs
// and the hash records go into outDir/hosts/.
func ConnectHosts(ctx context.Context, opts HostsOptions, outDir, runID string) (server, client harness.Host, rep *harness.StageReport, err error) {
	if opts.Server == "" || opts.Client == "" {
		return nil, nil, nil, fmt.Errorf("%w: -hosts SERVER:CLIENT names two ssh destinations", harness.ErrConfig)
	}
	if opts.RemoteBase == "" {
		opts.RemoteBase = "/tmp"
	}
	rec := filepath.Join(outDir, hostsRecords)
	if err := os.MkdirAll(rec, 0o755); err != nil {
		return nil, nil, nil, err
	}
	roots := map[string]string{}
	dests := map[string]string{"server": opts.Server, "client": opts.Client}
	masters := map[string]*sshMaster{}
	for role, dest := range dests {
		roots[role] = path.Join(opts.RemoteBase, "goblin-bench-"+runID, role)
		masters[role] = startMaster(ctx, opts.SSH, dest)
	}
	fail := func(err error) (harness.Host, harness.Host, *harness.StageReport, error) {
		cleanupRoots(masters, dests, roots)
		for _, m := range masters {
			m.close()
		}
		return nil, nil, nil, err
	}
	rep, err = Stage(ctx, opts, map[string]SSH{"server": masters["server"].ssh, "client": masters["client"].ssh}, roots, rec)
	if err != nil {
		return fail(err)
	}
	hosts := map[string]*sshHost{}
	for _, role := range []string{"server", "client"} {
		staged := map[string]string{}
		for _, f := range rep.Files {
			staged[f.Tool] = path.Join(rep.Dirs[role], f.Name)
		}
		h, err := dialAgent(ctx, masters[role].ssh, role, dests[role], roots[role], staged["goblin-bench"],
			filepath.Join(rec, "agent-"+role+".log"), staged)
		if err != nil {
			for _, o := range hosts {
				o.Close()
			}
			return fail(err)
		}
		h.master, masters[role] = masters[role], nil // the host closes it now
		hosts[role] = h
	}
	return hosts["server"], hosts["client"], rep, nil
}

// cleanupRoots removes the runtime directories of the hosts no agent got
// to.
func cleanupRoots(masters map[string]*sshMaster, dests, roots map[string]string) {
	ctx, cancel := quick()
	defer cancel()
	for role, dest := range dests {
		if m := masters[role]; m != nil {
			m.ssh.run(ctx, dest, "rm -rf "+shellQuote(path.Dir(roots[role])), nil)
		}
	}
}

// Stage copies the files to each host (unless they are there already with
// the right hash, or StageNoCopy), then hashes every staged file on both
// hosts with the host's own sha256sum and compares with the build. The
// records (SHA256SUMS.build, SHA256SUMS.server, SHA256SUMS.client) go into
// recDir. sshs is the ssh command for each role's host, roots its runtime
// directory.
func Stage(ctx context.Context, opts HostsOptions, sshs map[string]SSH, roots map[string]string, recDir string) (*harness.StageReport, error) {
	rep := &harness.StageReport{Dirs: map[string]string{}, Shared: opts.StageShared, Seen: map[string]string{}}
	dests := map[string]string{"server": opts.Server, "client": opts.Client}
	for role := range dests {
		rep.Dirs[role] = opts.StageDir
		if opts.StageDir == "" {
			rep.Dirs[role] = path.Join(roots[role], "stage")
		}
	}
	want := map[string]string{} // name → hash of the build
	var build strings.Builder
	for _, f := range opts.Files {
		sum, err := harness.FileSHA256(f.Local)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", harness.ErrConfig, f.Tool, err)
		}
		name := filepath.Base(f.Local)
		if f.Tool == "goblin-bench" || f.Tool == "goblin-server" {
			name = f.Tool
		}
		if _, dup := want[name]; dup {
			return nil, fmt.Errorf("%w: two staged files are called %s", harness.ErrConfig, name)
		}
		want[name] = sum
		rep.Files = append(rep.Files, harness.StagedFile{Tool: f.Tool, Name: name, SHA256: sum})
		fmt.Fprintf(&build, "%s  %s\n", sum, f.Local)
	}
	rep.Build = build.String()
	if err := os.WriteFile(filepath.Join(recDir, "SHA256SUMS.build"), []byte(rep.Build), 0o644); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	copyTo := []string{"server", "client"}
	if opts.StageShared {
		copyTo = copyTo[:1]
	}
	if !opts.StageNoCopy {
		for _, role := range copyTo {
			dir := rep.Dirs[role]
			have := map[string]string{}
			if opts.StageDir != "" {
				// A directory that outlives runs may hold the build already.
				have, _ = remoteSums(ctx, sshs[role], dests[role], dir, names)
			}
			send := map[string]string{}
			for _, f := range opts.Files {
				if name := stagedName(rep, f.Tool); have[name] != want[name] {
					send[name] = f.Local
				}
			}
			if err := upload(ctx, sshs[role], dests[role], dir, send); err != nil {
				return nil, err
			}
		}
	}
	var bad []string
	for _, role := range []string{"server", "client"} {
		dir := rep.Dirs[role]
		out, err := sha256sumOn(ctx, sshs[role], dests[role], dir, names)
		rep.Seen[role] = out
		if werr := os.WriteFile(filepath.Join(recDir, "SHA256SUMS."+role), []byte(out), 0o644); werr != nil {
			return nil, werr
		}
		got := parseSums(out, dir)
		for _, n := range names {
			switch {
			case got[n] == "":
				bad = append(bad, fmt.Sprintf("%s host (%s): %s is missing (%v)", role, dests[role], path.Join(dir, n), err))
			case got[n] != want[n]:
				bad = append(bad, fmt.Sprintf("%s host (%s): %s has sha256 %s, the build %s", role, dests[role], path.Join(dir, n), got[n], want[n]))
			}
		}
	}
	if len(bad) > 0 {
		return rep, fmt.Errorf("%w; refusing to run: %s", ErrStaged, strings.Join(bad, "; "))
	}
	return rep, nil
}

func stagedName(rep *harness.StageReport, tool string) string {
	for _, f := range rep.Files {
		if f.Tool == tool {
			return f.Name
		}
	}
	return tool
}

// sha256sumOn runs sha256sum over the staged files on dest, as that host
// sees them; its output is returned even when a file is missing.
func sha256sumOn(ctx context.Context, s SSH, dest, dir string, names []string) (string, error) {
	script := "sha256sum"
	for _, n := range names {
		script += " " + shellQuote(path.Join(dir, n))
	}
	out, err := s.run(ctx, dest, script, nil)
	return string(out), err
}

// remoteSums is what dest holds already, by name ("" when missing).
func remoteSums(ctx context.Context, s SSH, dest, dir string, names []string) (map[string]string, error) {
	out, err := sha256sumOn(ctx, s, dest, dir, names)
	return parseSums(out, dir), err
}

// parseSums reads sha256sum output for files in dir: hash by file name.
func parseSums(out, dir string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		sum, file, ok := strings.Cut(strings.TrimSpace(line), "  ")
		if !ok || len(sum) != 64 {
			continue
		}
		if path.Dir(file) == path.Clean(dir) {
			m[path.Base(file)] = sum
		}
	}
	return m
}

// upload writes local files (by name) into dir on dest through one ssh
// connection: a tar stream, unpacked by the host's tar.
func upload(ctx context.Context, s SSH, dest, dir string, files map[string]string) error {
	if len(files) == 0 {
		return nil
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	pr, pw := io.Pipe()
	go func() {
		tw := tar.NewWriter(pw)
		err := func() error {
			for _, n := range names {
				f, err := os.Open(files[n])
				if err != nil {
					return err
				}
				st, err := f.Stat()
				if err == nil {
					err = tw.WriteHeader(&tar.Header{Name: n, Mode: 0o755, Size: st.Size(), ModTime: st.ModTime(), Typeflag: tar.TypeReg})
				}
				if err == nil {
					_, err = io.Copy(tw, f)
				}
				f.Close()
				if err != nil {
					return err
				}
			}
			return tw.Close()
		}()
		pw.CloseWithError(err)
	}()
	script := fmt.Sprintf("mkdir -p %s && tar -xf - -C %s", shellQuote(dir), shellQuote(dir))
	if _, err := s.run(ctx, dest, script, pr); err != nil {
		pr.CloseWithError(err)
		return fmt.Errorf("staging %s: %w", strings.Join(names, ", "), err)
	}
	return nil
}
