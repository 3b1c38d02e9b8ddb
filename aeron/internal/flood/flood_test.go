package flood

import (
	"bytes"
	"testing"

	"github.com/goblin-kv/goblin/aeron/internal/wire"
)

// TestGeneratorMakesEveryKind: over a few thousand datagrams every kind
// comes up, each fits the buffer, a seed repeats its sequence, and a
// generator with no control address makes nothing for one.
func TestGeneratorMakesEveryKind(t *testing.T) {
	a, b := NewGenerator(7, 1001, true), NewGenerator(7, 1001, true)
	bufA, bufB := make([]byte, 2048), make([]byte, 2048)
	var seen [NumKinds]int
	for i := range 5000 {
		k, n := a.Next(bufA)
		k2, n2 := b.Next(bufB)
		if k != k2 || n != n2 || !bytes.Equal(bufA[:n], bufB[:n2]) {
			t.Fatalf("datagram %d differs between two generators of one seed", i)
		}
		if n < 0 || n > len(bufA) {
			t.Fatalf("datagram %d of kind %s is %d bytes", i, k, n)
		}
		seen[k]++
	}
	for k, n := range seen {
		if n == 0 {
			t.Errorf("no datagram of kind %s in 5000", Kind(k))
		}
	}
	g := NewGenerator(7, 1001, false)
	for range 2000 {
		if k, _ := g.Next(bufA); k.ToControl() {
			t.Fatalf("a generator without a control address made a %s datagram", k)
		}
	}
	g.kinds = []Kind{KindSetupResponse}
	k, n := g.Next(bufA)
	if k != KindSetupResponse || n != wire.SetupLength || wire.Setup(bufA).Flags() != wire.SetupFlagSendResponseSetup {
		t.Fatalf("kind %s, %d bytes, flags %#x: want a SETUP asking for a response channel", k, n, wire.Setup(bufA).Flags())
	}
	if kk, ok := ParseKind("setup-response"); !ok || kk != KindSetupResponse {
		t.Fatal(`ParseKind("setup-response") did not give KindSetupResponse`)
	}
}
