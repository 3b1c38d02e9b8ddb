package report

import (
	"encoding/csv"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/goblin-kv/goblin/benchmarks/harness"
)

// The archive's file names.
const (
	LatencyCSV   = "latency.csv"
	AggregateCSV = "aggregate.csv"
	MetadataTXT  = "metadata.txt"
	SummaryMD    = "summary.md"
	SumsFile     = "SHA256SUMS"
)

// LatencyHeader and AggregateHeader are the CSV headers; values are
// microseconds with three decimals.
var (
	LatencyHeader   = []string{"run", "system", "transport", "protocol", "op", "status", "samples", "p50_us", "p90_us", "p99_us", "p999_us", "max_us", "mean_us", "profile", "note", "path"}
	AggregateHeader = []string{"system", "transport", "protocol", "op", "status", "runs", "samples", "p50_us", "p90_us", "p99_us", "p999_us", "max_us", "mean_us", "profile", "note", "path"}
)

// Aggregate is the mean over runs of one operation of one case.
type Aggregate struct {
	Case                           harness.Case
	Op                             harness.Op
	Status                         string
	Note                           string
	Profile                        string
	Runs                           int     // runs that measured it
	Samples                        int     // per run
	P50, P90, P99, P999, Max, Mean float64 // nanoseconds
}

// Aggregates averages the OK results of every run per case and operation, in
// table order.
func Aggregates(results []harness.Result) []Aggregate {
	type key struct {
		id string
		op harness.Op
	}
	byKey := map[key]*Aggregate{}
	var order []key
	for _, r := range results {
		k := key{r.Case.ID(), r.Op}
		a, ok := byKey[k]
		if !ok {
			a = &Aggregate{Case: r.Case, Op: r.Op, Status: r.Status, Note: r.Note, Profile: r.Profile}
			byKey[k] = a
			order = append(order, k)
		}
		if r.Status != harness.StatusOK {
			if a.Runs == 0 {
				a.Status, a.Note = r.Status, r.Note
			}
			continue
		}
		a.Status, a.Note = harness.StatusOK, ""
		a.Runs++
		a.Samples = r.Summary.Samples
		s := r.Summary
		a.P50 += float64(s.P50)
		a.P90 += float64(s.P90)
		a.P99 += float64(s.P99)
		a.P999 += float64(s.P999)
		a.Max += float64(s.Max)
		a.Mean += s.Mean
	}
	out := make([]Aggregate, 0, len(order))
	for _, k := range order {
		a := byKey[k]
		if a.Runs > 0 {
			n := float64(a.Runs)
			a.P50, a.P90, a.P99, a.P999, a.Max, a.Mean = a.P50/n, a.P90/n, a.P99/n, a.P999/n, a.Max/n, a.Mean/n
		}
		out = append(out, *a)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Case.ID() != out[j].Case.ID() {
			return harness.CaseLess(out[i].Case, out[j].Case)
		}
		return out[i].Op.Index() < out[j].Op.Index()
	})
	return out
}

// WriteArchive writes every file of the archive into rep.Config.OutDir and,
// last, SHA256SUMS over all of them.
func WriteArchive(rep *harness.Report) error {
	dir := rep.Config.OutDir
	aggs := Aggregates(rep.Results)
	steps := []func() error{
		func() error { return writeLatencyCSV(filepath.Join(dir, LatencyCSV), rep.Results) },
		func() error {
			if len(rep.QualificationCases) == 0 {
				return nil
			}
			return writeLatencyCSV(filepath.Join(dir, harness.QualificationDir, LatencyCSV), rep.Qualification)
		},
		func() error { return writeAggregateCSV(filepath.Join(dir, AggregateCSV), aggs) },
		func() error { return writeMetadata(filepath.Join(dir, MetadataTXT), rep.Meta) },
		func() error { return writeCharts(dir, rep, aggs) },
		func() error {
			return os.WriteFile(filepath.Join(dir, SummaryMD), []byte(SummaryMarkdown(rep, aggs)), 0o644)
		},
		func() error { return WriteSums(dir) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

func us(ns float64) string { return harness.Micros(ns) }

func writeLatencyCSV(path string, results []harness.Result) error {
	rows := [][]string{LatencyHeader}
	for _, r := range results {
		row := []string{strconv.Itoa(r.Run), r.Case.System, r.Case.Transport, string(r.Case.Protocol), string(r.Op), r.Status}
		if r.Status == harness.StatusOK {
			s := r.Summary
			row = append(row, strconv.Itoa(s.Samples), us(float64(s.P50)), us(float64(s.P90)), us(float64(s.P99)),
				us(float64(s.P999)), us(float64(s.Max)), us(s.Mean))
		} else {
			row = append(row, "0", "", "", "", "", "", "")
		}
		rows = append(rows, append(row, r.Profile, r.Note, r.Case.Path))
	}
	return writeCSV(path, rows)
}

func writeAggregateCSV(path string, aggs []Aggregate) error {
	rows := [][]string{AggregateHeader}
	for _, a := range aggs {
		row := []string{a.Case.System, a.Case.Transport, string(a.Case.Protocol), string(a.Op), a.Status, strconv.Itoa(a.Runs), strconv.Itoa(a.Samples)}
		if a.Runs > 0 {
			row = append(row, us(a.P50), us(a.P90), us(a.P99), us(a.P999), us(a.Max), us(a.Mean))
		} else {
			row = append(row, "", "", "", "", "", "")
		}
		rows = append(rows, append(row, a.Profile, a.Note, a.Case.Path))
	}
	return writeCSV(path, rows)
}

func writeCSV(path string, rows [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	if err := w.WriteAll(rows); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeMetadata(path string, m harness.Metadata) error {
	var b strings.Builder
	for _, kv := range m {
		fmt.Fprintf(&b, "%s: %s\n", kv.Key, strings.ReplaceAll(kv.Value, "\n", " "))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// WriteTimeline writes one operation's samples in the order measured, with
// the CLOCK_MONOTONIC time each started at (starts[i] for samples[i]).
func WriteTimeline(path string, samples, starts []int64) error {
	if len(starts) != len(samples) {
		return fmt.Errorf("timeline: %d start times for %d samples", len(starts), len(samples))
	}
	rows := make([][]string, 0, len(samples)+1)
	rows = append(rows, []string{"round_trip", "latency_ns", "start_mono_ns"})
	for i, ns := range samples {
		rows = append(rows, []string{strconv.Itoa(i), strconv.FormatInt(ns, 10), strconv.FormatInt(starts[i], 10)})
	}
	return writeCSV(path, rows)
}

// WriteDistribution writes one operation's percentile distribution.
func WriteDistribution(path string, dist []int64) error {
	rows := [][]string{{"percentile", "latency_us"}}
	for i, q := range harness.DistributionPoints {
		rows = append(rows, []string{strconv.FormatFloat(q, 'f', -1, 64), us(float64(dist[i]))})
	}
	return writeCSV(path, rows)
}

// WriteCaseInfo writes what the archive knows about one case run: status,
// profile, client, channels and affinities.
func WriteCaseInfo(dir string, rec *harness.CaseRecord) {
	var b strings.Builder
	fmt.Fprintf(&b, "case: %s\nrun: %d\nstatus: %s\n", rec.Case.Label(), rec.Run, rec.Status)
	if rec.Note != "" {
		fmt.Fprintf(&b, "note: %s\n", rec.Note)
	}
	fmt.Fprintf(&b, "profile: %s\nclient: %s\n", rec.Profile, rec.Client)
	keys := make([]string, 0, len(rec.Info))
	for k := range rec.Info {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, rec.Info[k])
	}
	_ = os.WriteFile(filepath.Join(dir, "case.txt"), []byte(b.String()), 0o644)
}

// WriteSums writes SHA256SUMS for every other file under dir, in the format
// `sha256sum -c` checks.
func WriteSums(dir string) error {
	var lines []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if rel == SumsFile || !d.Type().IsRegular() {
			return nil
		}
		sum, err := harness.FileSHA256(path)
		if err != nil {
			return err
		}
		lines = append(lines, sum+"  "+filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return err
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i][66:] < lines[j][66:] })
	return os.WriteFile(filepath.Join(dir, SumsFile), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// VerifySums checks every line of dir/SHA256SUMS and that it covers every
// file in dir.
func VerifySums(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, SumsFile))
	if err != nil {
		return err
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			return fmt.Errorf("%s: malformed line %q", SumsFile, line)
		}
		got, err := harness.FileSHA256(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return err
		}
		if got != sum {
			return fmt.Errorf("%s: %s has hash %s, the archive says %s", SumsFile, name, got, sum)
		}
		listed[name] = true
	}
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if !d.Type().IsRegular() {
			return nil // sockets a crashed server left; WriteSums skips them too
		}
		if rel != SumsFile && !listed[filepath.ToSlash(rel)] {
			return fmt.Errorf("%s does not cover %s", SumsFile, rel)
		}
		return nil
	})
}
