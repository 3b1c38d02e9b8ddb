package driver

import (
	"errors"
	"strings"
	"testing"

	"github.com/goblin-kv/goblin/internal/shm"
)

// dataFrame is a DATA datagram of length n at termOffset of termID.
func dataFrame(termID, termOffset int32, n int) []byte {
	p := make([]byte, n)
	shm.PutInt32(p, 0, int32(n))
	p[icTypeOffset] = icTypeData
	shm.PutInt32(p, icTermOffsetOffset, termOffset)
	shm.PutInt32(p, icSessionIDOffset, 9)
	shm.PutInt32(p, icStreamIDOffset, 1001)
	shm.PutInt32(p, icTermIDOffset, termID)
	return p
}

// TestLossInterceptorIsCsErand48: the loss interceptor draws from glibc's
// erand48 seeded as the C driver seeds it, so a seed drops the datagrams it
// drops with the C driver (the vector is glibc's erand48 output for
// seed 12345), and only the frame types in recv-msg-mask.
func TestLossInterceptorIsCsErand48(t *testing.T) {
	l, err := newLossInterceptor("rate=0.5|seed=12345|recv-msg-mask=0x2")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{0.74324035644535158, 0.0063717472137128084, 0.77718092835242558, 0.53127215914447845} {
		if got := l.erand48(); got != want {
			t.Fatalf("erand48 #%d = %.17g, want glibc's %.17g", i, got, want)
		}
	}
	l, _ = newLossInterceptor("rate=0.5|seed=12345|recv-msg-mask=0x2")
	var drops []bool
	for range 4 {
		drops = append(drops, l.drop(dataFrame(0, 0, 64)))
	}
	if want := []bool{false, true, false, false}; !equalBools(drops, want) {
		t.Fatalf("drops %v, want %v (rate 0.5 against 0.743, 0.006, 0.777, 0.531)", drops, want)
	}
	sm := make([]byte, 36)
	sm[icTypeOffset] = 3 // SM: bit 0x8, not in the mask
	for range 100 {
		if l.drop(sm) {
			t.Fatal("a status message dropped with recv-msg-mask=0x2")
		}
	}
	if all, _ := newLossInterceptor("rate=1|recv-msg-mask=0xFFFF"); !all.drop(sm) {
		t.Fatal("rate=1 kept a masked frame")
	}
	if none, _ := newLossInterceptor("rate=0.9"); none.drop(dataFrame(0, 0, 64)) {
		t.Fatal("dropped with no recv-msg-mask (C's default mask is 0)")
	}
}

func equalBools(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestFixedLossInterceptor: the DATA datagrams of the term from the first
// one seen up to term-offset + length are dropped once each; their
// retransmits, other terms and other frame types pass.
func TestFixedLossInterceptor(t *testing.T) {
	f, err := newFixedLossInterceptor("term-id=5|term-offset=1024|length=1024")
	if err != nil {
		t.Fatal(err)
	}
	var dropped []int32
	for off := int32(0); off < 4096; off += 512 {
		if f.drop(dataFrame(5, off, 512)) {
			dropped = append(dropped, off)
		}
	}
	if len(dropped) != 4 || dropped[0] != 0 || dropped[3] != 1536 {
		t.Fatalf("dropped offsets %v, want 0, 512, 1024, 1536 (up to 1024+1024)", dropped)
	}
	if f.drop(dataFrame(5, 1024, 512)) || f.drop(dataFrame(6, 0, 512)) {
		t.Fatal("a retransmit or another term dropped")
	}
}

// TestMultiGapLossInterceptor: gap-length bytes at every gap-radix bytes
// of the term, total-gaps of them, are dropped once.
func TestMultiGapLossInterceptor(t *testing.T) {
	m, err := newMultiGapLossInterceptor("term-id=0|gap-radix=4096|gap-length=512|total-gaps=3")
	if err != nil {
		t.Fatal(err)
	}
	var dropped []int32
	for off := int32(0); off < 32768; off += 512 {
		if m.drop(dataFrame(0, off, 512)) {
			dropped = append(dropped, off)
		}
	}
	if want := []int32{4096, 8192, 12288}; len(dropped) != 3 || dropped[0] != want[0] || dropped[1] != want[1] || dropped[2] != want[2] {
		t.Fatalf("dropped offsets %v, want %v", dropped, want)
	}
	if m.drop(dataFrame(0, 4096, 512)) {
		t.Fatal("a retransmit dropped")
	}
}

// TestInterceptorArgsRefused: arguments the C driver's parser rejects,
// and unknown interceptor names, stop the driver at start naming the
// variable (the C driver would run on without loss).
func TestInterceptorArgsRefused(t *testing.T) {
	for _, tc := range []struct{ interceptors, loss, fixed, gap, want string }{
		{"loss", "rate=", "", "", "AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_LOSS_ARGS"},
		{"loss", "rate=x", "", "", "AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_LOSS_ARGS"},
		{"loss", "=1", "", "", "empty key"},
		{"fixed-loss", "", "term-id", "", "AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_FIXED_LOSS_ARGS"},
		{"multi-gap-loss", "", "", "gap-radix=q", "AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_MULTI_GAP_LOSS_ARGS"},
		{"lots", "", "", "", "unknown interceptor"},
	} {
		o := testOptions(t)
		o.IncomingInterceptors, o.LossArgs, o.FixedLossArgs, o.MultiGapLossArgs = tc.interceptors, tc.loss, tc.fixed, tc.gap
		_, err := New(o)
		if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v", tc, err)
		}
	}
	if n, err := cInt("0x1F", 16); err != nil || n != 31 {
		t.Errorf("cInt(0x1F, 16) = %d, %v", n, err)
	}
	if n, err := cInt("12abc", 10); err != nil || n != 12 {
		t.Errorf("cInt(12abc) = %d, %v (strtol stops at the first non-digit)", n, err)
	}
	if f, err := cFloat("0.25x"); err != nil || f != 0.25 {
		t.Errorf("cFloat(0.25x) = %v, %v", f, err)
	}
}
