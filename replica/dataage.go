package replica

import "time"

// DataAge is how long the primary has been silent, for the cluster bus's
// cluster-replica-validity-factor: with the link up, the time since the
// last byte from the primary; with it down, the time since it went down
// (a link never up counts as silent forever). Loop goroutine.
func (l *Link) DataAge() time.Duration {
	now := time.Now()
	if l.linkUp {
		if ms := l.lastIO.Load(); ms > 0 {
			return now.Sub(time.UnixMilli(ms))
		}
		return 0
	}
	if l.downSince.IsZero() {
		return time.Duration(1<<62 - 1)
	}
	return now.Sub(l.downSince)
}
