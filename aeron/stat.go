package aeron

import (
	"fmt"
	"io"
	"time"
)

// WriteCounters writes every allocated counter as AeronStat prints it:
// id, value, type id and label, one a line.
func WriteCounters(w io.Writer, r *CountersReader) error {
	var err error
	r.ForEach(func(c CounterInfo) bool {
		_, err = fmt.Fprintf(w, "%3d: %20d - [type %2d] %s\n", c.ID, c.Value, c.TypeID, c.Label)
		return err == nil
	})
	return err
}

// WriteErrors writes the driver's distinct error log as ErrorStat prints
// it and returns how many distinct errors there were.
func WriteErrors(w io.Writer, c *CnC) (int, error) {
	var err error
	n := c.ReadErrors(0, func(e ErrorRecord) {
		if err != nil {
			return
		}
		_, err = fmt.Fprintf(w, "***\n%d observations from %s to %s for:\n %s\n", e.ObservationCount,
			time.UnixMilli(e.FirstObservation).UTC().Format(time.RFC3339Nano),
			time.UnixMilli(e.LastObservation).UTC().Format(time.RFC3339Nano), e.Text)
	})
	if err == nil {
		_, err = fmt.Fprintf(w, "\n%d distinct errors observed.\n", n)
	}
	return n, err
}
