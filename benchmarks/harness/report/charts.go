package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/goblin-kv/goblin/benchmarks/harness"
)

// ChartsDir is the archive's chart directory.
const ChartsDir = "charts"

var opColors = map[harness.Op]string{harness.Ping: "#1f77b4", harness.Set: "#d62728", harness.Get: "#2ca02c"}

// okRows returns the aggregates of op that were measured (StatusOK), in
// the order of aggs.
func okRows(aggs []Aggregate, op harness.Op) []Aggregate {
	var rows []Aggregate
	for _, a := range aggs {
		if a.Op == op && a.Status == harness.StatusOK {
			rows = append(rows, a)
		}
	}
	return rows
}

// writeCharts writes, per operation, a bar chart of p50 and p99 for every
// measured case, and, per case, a percentile plot of every operation (the
// mean over runs at each percentile).
func writeCharts(dir string, rep *harness.Report, aggs []Aggregate) error {
	cd := filepath.Join(dir, ChartsDir)
	if err := os.MkdirAll(cd, 0o755); err != nil {
		return err
	}
	for _, op := range harness.AllOps {
		rows := okRows(aggs, op)
		if len(rows) == 0 {
			continue
		}
		name := fmt.Sprintf("p50-p99-%s.svg", strings.ToLower(string(op)))
		if err := os.WriteFile(filepath.Join(cd, name), []byte(barChart(op, rows, &rep.Config)), 0o644); err != nil {
			return err
		}
	}
	// Mean distribution per case and op over the runs that measured it.
	type key struct {
		id string
		op harness.Op
	}
	sums := map[key][]float64{}
	counts := map[key]int{}
	cases := map[string]harness.Case{}
	var order []string
	for _, r := range rep.Results {
		if r.Status != harness.StatusOK {
			continue
		}
		k := key{r.Case.ID(), r.Op}
		if _, ok := cases[k.id]; !ok {
			cases[k.id] = r.Case
			order = append(order, k.id)
		}
		if sums[k] == nil {
			sums[k] = make([]float64, len(harness.DistributionPoints))
		}
		for i, v := range r.Dist {
			sums[k][i] += float64(v)
		}
		counts[k]++
	}
	for _, id := range order {
		c := cases[id]
		lines := map[harness.Op][]float64{}
		for _, op := range c.Ops {
			k := key{id, op}
			if counts[k] == 0 {
				continue
			}
			d := make([]float64, len(harness.DistributionPoints))
			for i := range d {
				d[i] = sums[k][i] / float64(counts[k])
			}
			lines[op] = d
		}
		chart := percentileChart(c, lines, &rep.Config)
		if err := os.WriteFile(filepath.Join(cd, "percentiles-"+id+".svg"), []byte(chart), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// barChart draws horizontal p50 and p99 bars per case on a log axis.
func barChart(op harness.Op, rows []Aggregate, cfg *harness.Config) string {
	const left, right, top, rowH = 250.0, 90.0, 70.0, 40.0
	width := 900.0
	height := top + rowH*float64(len(rows)) + 60
	s := newSVG(width, height)
	s.text(width/2, 24, fmt.Sprintf("%s round-trip latency, p50 and p99 (µs, log scale)", op), "middle", 17, ` font-weight="bold"`)
	s.text(width/2, 44, fmt.Sprintf("mean of %d run(s), %d samples each, depth %d, %d-byte value; profile %s",
		cfg.Runs, cfg.Samples, cfg.Depth, cfg.ValueSize, cfg.Profile.Name), "middle", 12, "")
	lo, hi := math.Inf(1), 0.0
	for _, r := range rows {
		lo = math.Min(lo, r.P50/1000)
		hi = math.Max(hi, r.P99/1000)
	}
	sc := newLogScale(lo, hi, left, width-right)
	bottom := top + rowH*float64(len(rows))
	for _, t := range sc.ticks() {
		x := sc.At(t)
		s.line(x, top-6, x, bottom, "#dddddd", 1, "")
		s.text(x, bottom+16, fmtTick(t), "middle", 11, "")
	}
	s.text((left+width-right)/2, bottom+36, "microseconds", "middle", 12, "")
	for i, r := range rows {
		y := top + rowH*float64(i)
		label := fmt.Sprintf("%s %s %s", r.Case.Transport, protoLabel(r.Case.Protocol), r.Case.System)
		s.text(left-8, y+rowH/2+4, strings.TrimSpace(label), "end", 13, "")
		p50, p99 := r.P50/1000, r.P99/1000
		s.rect(left, y+5, sc.At(p50)-left, 13, "#1f77b4", fmt.Sprintf("%s p50 %.3f µs", label, p50))
		s.text(sc.At(p50)+4, y+16, fmt.Sprintf("%.3f", p50), "start", 11, "")
		s.rect(left, y+20, sc.At(p99)-left, 13, "#ff7f0e", fmt.Sprintf("%s p99 %.3f µs", label, p99))
		s.text(sc.At(p99)+4, y+31, fmt.Sprintf("%.3f", p99), "start", 11, "")
	}
	s.line(left, top-6, left, bottom, "#444444", 1, "")
	// Legend.
	s.rect(width-right-150, height-22, 12, 12, "#1f77b4", "")
	s.text(width-right-134, height-12, "p50", "start", 12, "")
	s.rect(width-right-90, height-22, 12, 12, "#ff7f0e", "")
	s.text(width-right-74, height-12, "p99", "start", 12, "")
	return s.String()
}

func protoLabel(p harness.Protocol) string {
	if p == harness.Raw {
		return ""
	}
	return string(p)
}

// percentileX maps a percentile onto "number of nines": 0 → 0, 90 → 1,
// 99 → 2, 99.9 → 3 ...
func percentileX(q float64) float64 {
	if q >= 100 {
		return 6
	}
	return math.Log10(100 / (100 - q))
}

// percentileChart plots latency against percentile for each operation.
func percentileChart(c harness.Case, lines map[harness.Op][]float64, cfg *harness.Config) string {
	const left, right, top, bottomPad = 80.0, 30.0, 60.0, 50.0
	width, height := 820.0, 460.0
	s := newSVG(width, height)
	s.text(width/2, 24, fmt.Sprintf("%s: latency by percentile", c.Label()), "middle", 17, ` font-weight="bold"`)
	s.text(width/2, 44, fmt.Sprintf("mean of %d run(s), %d samples each; profile %s", cfg.Runs, cfg.Samples, cfg.ForCase(c.System, c.Transport).Name), "middle", 12, "")
	// Plot up to 99.999 (x = 5); the maximum is printed in the legend.
	var pts []int
	for i, q := range harness.DistributionPoints {
		if q < 100 {
			pts = append(pts, i)
		}
	}
	lo, hi := math.Inf(1), 0.0
	for _, d := range lines {
		for _, i := range pts {
			lo = math.Min(lo, d[i]/1000)
			hi = math.Max(hi, d[i]/1000)
		}
	}
	if len(lines) == 0 {
		lo, hi = 0.1, 1
	}
	bottom := height - bottomPad
	ys := newLogScale(lo, hi, bottom, top)
	xmax := 5.0
	xs := func(q float64) float64 { return left + percentileX(q)/xmax*(width-left-right) }
	for _, t := range ys.ticks() {
		y := ys.At(t)
		s.line(left, y, width-right, y, "#e3e3e3", 1, "")
		s.text(left-6, y+4, fmtTick(t), "end", 11, "")
	}
	for _, q := range []float64{0, 90, 99, 99.9, 99.99, 99.999} {
		x := xs(q)
		s.line(x, top, x, bottom, "#e3e3e3", 1, "")
		s.text(x, bottom+16, fmt.Sprintf("%g%%", q), "middle", 11, "")
	}
	s.line(left, bottom, width-right, bottom, "#444444", 1, "")
	s.line(left, top, left, bottom, "#444444", 1, "")
	s.text((left+width-right)/2, bottom+36, "percentile", "middle", 12, "")
	s.text(18, (top+bottom)/2, "µs (log)", "middle", 12, fmt.Sprintf(` transform="rotate(-90 18 %.1f)"`, (top+bottom)/2))
	// Legend: a box in the top-left corner, which a latency-by-percentile
	// curve (rising to the right) leaves empty.
	n := 0
	for _, op := range c.Ops {
		if _, ok := lines[op]; ok {
			n++
		}
	}
	s.rectStroke(left+8, top+8, 330, 8+18*float64(n), "#ffffff", "#bbbbbb")
	ly := top + 22
	for _, op := range c.Ops {
		d, ok := lines[op]
		if !ok {
			continue
		}
		var px, py []float64
		for _, i := range pts {
			px = append(px, xs(harness.DistributionPoints[i]))
			py = append(py, ys.At(d[i]/1000))
		}
		s.polyline(px, py, opColors[op], 2)
		for i := range px {
			s.circle(px[i], py[i], 2.2, opColors[op])
		}
		s.rect(left+16, ly-10, 12, 12, opColors[op], "")
		s.text(left+34, ly, fmt.Sprintf("%-4s p50 %.3f  p99 %.3f  max %.1f µs", op,
			d[indexOfPoint(50)]/1000, d[indexOfPoint(99)]/1000, d[len(d)-1]/1000), "start", 11, "")
		ly += 18
	}
	return s.String()
}

func indexOfPoint(q float64) int {
	for i, v := range harness.DistributionPoints {
		if v == q {
			return i
		}
	}
	return 0
}
