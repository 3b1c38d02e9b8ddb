package cluster

import (
	"strconv"
	"testing"
)

// TestSlotKnownValues: slots Redis Cluster gives these keys (redis-cli
// CLUSTER KEYSLOT on a Redis 7.0 node; "123456789" is CRC16/XMODEM's check
// value 0x31C3).
func TestSlotKnownValues(t *testing.T) {
	if c := CRC16([]byte("123456789")); c != 0x31c3 {
		t.Fatalf("CRC16 check value %#x, want 0x31c3", c)
	}
	for key, want := range map[string]uint16{
		"foo": 12182, "bar": 5061, "hello": 866, "key:1": 6657, "": 0,
		"{user1000}.following": 3443, "{user1000}.followers": 3443, "user1000": 3443,
		"foo{}{bar}": 8363, "foo{{bar}}zap": 4015, "foo{bar}{zap}": 5061, "{}x": 10595, "{a": 10276,
	} {
		if got := Slot([]byte(key)); got != want {
			t.Errorf("Slot(%q) = %d, want %d", key, got, want)
		}
	}
}

func TestSlotAllocs(t *testing.T) {
	k := []byte("{user1000}.following")
	if n := testing.AllocsPerRun(100, func() { Slot(k) }); n != 0 {
		t.Fatalf("Slot allocates %v times", n)
	}
}

// TestSlotSpread: sequential keys fall on every slot about equally.
func TestSlotSpread(t *testing.T) {
	var n [Slots]int
	for i := range Slots * 16 {
		n[Slot([]byte("key:"+strconv.Itoa(i)))]++
	}
	for s, c := range n {
		if c == 0 || c > 64 {
			t.Fatalf("slot %d holds %d of %d keys", s, c, Slots*16)
		}
	}
}

func BenchmarkSlot(b *testing.B) {
	k := []byte("user:1000:profile")
	b.ReportAllocs()
	for b.Loop() {
		Slot(k)
	}
}
