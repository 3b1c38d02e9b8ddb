package engine

import (
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/proto"
)

// fakeTap is a StreamTap that knows replicas.
type fakeTap struct{ reps []TapReplica }

func (f *fakeTap) StreamFeed(string, int64, []byte) {}
func (f *fakeTap) TapReplicas(dst []TapReplica) []TapReplica {
	return append(dst, f.reps...)
}

// TestTapReplicasInInfo: the replicas a stream tap knows (Aeron replicas)
// are counted in connected_slaves and listed as slave<N> lines, online, at
// their offset and lag, as redis-sentinel reads them; one without a
// listening port is left out (nothing could reach it).
func TestTapReplicasInInfo(t *testing.T) {
	e, _ := newEngine(t, Options{})
	s := NewSession(proto.RESP, nil)
	e.SetStreamTap(&fakeTap{reps: []TapReplica{
		{IP: "10.0.0.2", Port: 6380, Offset: 1200, Lag: 0},
		{IP: "10.0.0.3", Port: 0, Offset: 5},
		{IP: "10.0.0.4", Port: 6381, Offset: 1100, Lag: 2},
	}})
	info := do(t, e, s, "INFO", "replication")
	for _, want := range []string{
		"connected_slaves:2\r\n",
		"slave0:ip=10.0.0.2,port=6380,state=online,offset=1200,lag=0\r\n",
		"slave1:ip=10.0.0.4,port=6381,state=online,offset=1100,lag=2\r\n",
	} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO replication lacks %q:\n%s", want, info)
		}
	}
	if strings.Contains(info, "10.0.0.3") || strings.Contains(info, "slave2:") {
		t.Errorf("INFO replication lists the replica without a listening port:\n%s", info)
	}
}
