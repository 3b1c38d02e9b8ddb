package report

import (
	"encoding/xml"
	"fmt"
	"math"
	"strings"
)

// svg is a minimal SVG writer: just the shapes the charts use, with text
// escaped for XML.
type svg struct {
	b    strings.Builder
	w, h float64
}

func newSVG(w, h float64) *svg {
	s := &svg{w: w, h: h}
	fmt.Fprintf(&s.b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">`+"\n", w, h, w, h)
	s.rect(0, 0, w, h, "#ffffff", "")
	return s
}

func (s *svg) rect(x, y, w, h float64, fill, title string) {
	if title == "" {
		fmt.Fprintf(&s.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n", x, y, w, h, fill)
		return
	}
	fmt.Fprintf(&s.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s</title></rect>`+"\n", x, y, w, h, fill, esc(title))
}

func (s *svg) rectStroke(x, y, w, h float64, fill, stroke string) {
	fmt.Fprintf(&s.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.9" stroke="%s"/>`+"\n", x, y, w, h, fill, stroke)
}

func (s *svg) line(x1, y1, x2, y2 float64, stroke string, width float64, dash string) {
	d := ""
	if dash != "" {
		d = fmt.Sprintf(` stroke-dasharray="%s"`, dash)
	}
	fmt.Fprintf(&s.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%g"%s/>`+"\n", x1, y1, x2, y2, stroke, width, d)
}

// text writes s at (x, y); anchor is start, middle or end.
func (s *svg) text(x, y float64, str, anchor string, size float64, extra string) {
	fmt.Fprintf(&s.b, `<text x="%.1f" y="%.1f" text-anchor="%s" font-size="%g" fill="#222"%s>%s</text>`+"\n", x, y, anchor, size, extra, esc(str))
}

func (s *svg) polyline(xs, ys []float64, stroke string, width float64) {
	var pts strings.Builder
	for i := range xs {
		fmt.Fprintf(&pts, "%.1f,%.1f ", xs[i], ys[i])
	}
	fmt.Fprintf(&s.b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="%g" stroke-linejoin="round"/>`+"\n", strings.TrimSpace(pts.String()), stroke, width)
}

func (s *svg) circle(x, y, r float64, fill string) {
	fmt.Fprintf(&s.b, `<circle cx="%.1f" cy="%.1f" r="%g" fill="%s"/>`+"\n", x, y, r, fill)
}

func (s *svg) String() string { return s.b.String() + "</svg>\n" }

func esc(str string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(str))
	return b.String()
}

// logScale maps values in [lo, hi] (lo > 0) onto [a, b] logarithmically.
type logScale struct{ lo, hi, a, b float64 }

func newLogScale(minV, maxV, a, b float64) logScale {
	if minV <= 0 {
		minV = 0.001
	}
	if maxV <= minV {
		maxV = minV * 10
	}
	lo := math.Pow(10, math.Floor(math.Log10(minV)))
	hi := math.Pow(10, math.Ceil(math.Log10(maxV)))
	return logScale{lo: lo, hi: hi, a: a, b: b}
}

func (l logScale) At(v float64) float64 {
	if v < l.lo {
		v = l.lo
	}
	t := (math.Log10(v) - math.Log10(l.lo)) / (math.Log10(l.hi) - math.Log10(l.lo))
	return l.a + t*(l.b-l.a)
}

// ticks are the 1-2-5 values inside the scale.
func (l logScale) ticks() []float64 {
	var out []float64
	for d := l.lo; d <= l.hi*1.0001; d *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if v := d * m; v <= l.hi*1.0001 {
				out = append(out, v)
			}
		}
	}
	return out
}

// fmtTick formats an axis value in µs.
func fmtTick(v float64) string {
	switch {
	case v >= 1:
		return fmt.Sprintf("%g", v)
	default:
		return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".")
	}
}
