package runner

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/goblin-kv/goblin/benchmarks/harness"
)

// startCollectors attaches the qualification pass's statistics collector to
// every media driver the case started, on the driver's own host, with its
// log in the host's case directory (rel): Qualification.Collector through
// sh -c with {pid} and {dir} filled in, or goblin-bench aeron-stat
// printing the driver's counters every second.
func startCollectors(ctx context.Context, cfg *harness.Config, rel string) ([]harness.Proc, error) {
	drivers := cfg.Track.DriverList()
	var out []harness.Proc
	for _, d := range drivers {
		var argv []string
		if c := cfg.Qualify.Collector; c != "" {
			c = strings.ReplaceAll(c, "{pid}", strconv.Itoa(d.PID()))
			c = strings.ReplaceAll(c, "{dir}", d.Dir)
			argv = []string{"sh", "-c", c}
		} else {
			bench, err := d.Host.Tool(cfg, "goblin-bench")
			if err != nil {
				return out, err
			}
			argv = []string{bench, "aeron-stat", "-watch", "1s", d.Dir}
		}
		p, err := cfg.Launch(ctx, d.Host, harness.ProcSpec{Name: "stats-" + d.Name(), Dir: d.Host.Dir(rel), Argv: argv}, nil)
		if err != nil {
			return out, err
		}
		out = append(out, p)
	}
	return out, nil
}

// WatchCounters writes the counters of the media driver in dir to w every
// interval until ctx ends (goblin-bench aeron-stat): the qualification
// pass's default statistics collector.
func WatchCounters(ctx context.Context, w io.Writer, dir string, every time.Duration) error {
	for {
		text, err := harness.DriverCounters(dir)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintln(w, text); err != nil {
			return err
		}
		if every <= 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(every):
		}
	}
}
