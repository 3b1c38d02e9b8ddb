package engine

import (
	"regexp"
	"sort"
	"strings"
	"testing"
)

// normHistogram keeps LATENCY HISTOGRAM's shape and calls and blanks the
// buckets (the microseconds a call took belong to the process): each
// command's histogram_usec becomes the number of buckets it has, which
// must be at least one.
func normHistogram(n *node) {
	for i := 1; i < len(n.elems); i += 2 {
		cmd := &n.elems[i]
		for j := 0; j+1 < len(cmd.elems); j += 2 {
			if string(cmd.elems[j].str) == "histogram_usec" {
				nonEmpty := "empty"
				if len(cmd.elems[j+1].elems) > 0 {
					nonEmpty = "buckets"
				}
				cmd.elems[j+1] = node{typ: '+', str: []byte(nonEmpty)}
			}
		}
	}
}

var percentileValueRe = regexp.MustCompile(`=\d+\.\d{3}`)

// normLatencystats keeps INFO latencystats' header and the lines of the
// commands named, with the percentiles' names and each value's format
// (three decimals) but not the value.
func normLatencystats(cmds ...string) func(*node) {
	return func(n *node) {
		var keep []string
		text, verbatim := strings.CutPrefix(string(n.str), "txt:")
		for _, l := range strings.Split(text, "\r\n") {
			if strings.HasPrefix(l, "#") {
				keep = append(keep, l)
			}
			for _, c := range cmds {
				if strings.HasPrefix(l, "latency_percentiles_usec_"+c+":") {
					keep = append(keep, percentileValueRe.ReplaceAllString(l, "=N.NNN"))
				}
			}
		}
		sort.Strings(keep[min(1, len(keep)):])
		out := strings.Join(keep, "\r\n")
		if verbatim {
			out = "txt:" + out
		}
		n.str = []byte(out)
	}
}

// TestLatencyAgainstRedis: the LATENCY subcommands and the latency
// parameters against redis-server 7.0, RESP2 and RESP3, where the answer
// does not depend on timing: the monitor off and on without events
// (LATEST, HISTORY, GRAPH's error, RESET, DOCTOR's two texts), the
// histograms' shape and calls per command (LATENCY HISTOGRAM with and
// without names, a container, an unknown name), INFO latencystats'
// lines, latency-tracking no, and the parameters' values and errors.
func TestLatencyAgainstRedis(t *testing.T) {
	c := func(norm func(*node), args ...string) oracleCase { return oracleCase{args: args, norm: norm} }
	script := []oracleCase{
		c(nil, "CONFIG", "RESETSTAT"), c(sortPairs, "CONFIG", "GET", "latency-*"), c(nil, "LATENCY", "LATEST"), c(nil, "LATENCY", "DOCTOR"),
		c(nil, "LATENCY", "HISTORY", "command"), c(nil, "LATENCY", "GRAPH", "command"), c(nil, "LATENCY", "RESET"),
		c(nil, "LATENCY", "RESET", "command", "fast-command"), c(nil, "LATENCY", "BOGUS"), c(nil, "LATENCY", "HISTORY"),
		c(nil, "LATENCY", "LATEST", "x"), c(nil, "LATENCY", "GRAPH"), c(nil, "LATENCY", "DOCTOR", "x"), c(normHelp, "LATENCY", "HELP"),
		c(nil, "CONFIG", "SET", "latency-monitor-threshold", "100"), c(nil, "LATENCY", "DOCTOR"),
		c(nil, "CONFIG", "SET", "latency-monitor-threshold", "-1"), c(nil, "CONFIG", "SET", "latency-monitor-threshold", "x"),
		c(nil, "CONFIG", "SET", "latency-tracking", "maybe"), c(nil, "CONFIG", "SET", "latency-tracking-info-percentiles", "50 101"),
		c(nil, "CONFIG", "SET", "latency-tracking-info-percentiles", "x"),
		c(nil, "CONFIG", "SET", "latency-tracking-info-percentiles", "50 90.5 99.99"),
		c(nil, "CONFIG", "GET", "latency-tracking-info-percentiles"),
		c(nil, "SET", "k", "v"), c(nil, "GET", "k"), c(nil, "GET", "k"), c(nil, "CLIENT", "GETNAME"),
		c(normHistogram, "LATENCY", "HISTOGRAM", "set", "GET"), c(normHistogram, "LATENCY", "HISTOGRAM", "client"),
		c(normHistogram, "LATENCY", "HISTOGRAM", "client|getname"), c(nil, "LATENCY", "HISTOGRAM", "nosuchcommand"),
		c(normLatencystats("set", "get", "client|getname"), "INFO", "latencystats"),
		c(nil, "CONFIG", "RESETSTAT"), c(nil, "LATENCY", "HISTOGRAM", "set"),
		c(nil, "CONFIG", "SET", "latency-tracking", "no"), c(nil, "SET", "k", "v"), c(nil, "LATENCY", "HISTOGRAM", "set"),
		c(nil, "INFO", "latencystats"),
		c(nil, "CONFIG", "SET", "latency-tracking", "yes"), c(nil, "CONFIG", "SET", "latency-monitor-threshold", "0"),
		c(nil, "CONFIG", "SET", "latency-tracking-info-percentiles", "50 99 99.9"),
	}
	compareRESPWithRedis(t, script)
}
