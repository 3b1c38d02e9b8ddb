package aeron

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/shm"
	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// putLossEntry writes an entry at off in the driver's layout and returns
// the offset of the next one.
func putLossEntry(buf []byte, off int, e LossEntry) int {
	shm.PutInt64(buf, off+lrBytesLost, e.BytesLost)
	shm.PutInt64(buf, off+lrFirst, e.FirstObservation.UnixMilli())
	shm.PutInt64(buf, off+lrLast, e.LastObservation.UnixMilli())
	shm.PutInt32(buf, off+lrSessionID, e.SessionID)
	shm.PutInt32(buf, off+lrStreamID, e.StreamID)
	p := off + lrChannel
	for i, s := range []string{e.Channel, e.Source} {
		shm.PutInt32(buf, p, int32(len(s)))
		p += 4 + copy(buf[p+4:], s)
		if i == 0 {
			p = off + lrChannel + shm.Align(p-(off+lrChannel), 4) // the source's length is 4-byte aligned
		}
	}
	shm.PutInt64(buf, off+lrObservations, e.Observations) // last, as the driver does
	return off + shm.Align(p-off, lrEntryAlign)
}

func TestReadLossReport(t *testing.T) {
	t0 := time.UnixMilli(1_700_000_000_123)
	want := []LossEntry{
		{Observations: 3, BytesLost: 4096, FirstObservation: t0, LastObservation: t0.Add(time.Second),
			SessionID: -7, StreamID: 1001, Channel: "aeron:udp?endpoint=127.0.0.1:40123", Source: "127.0.0.1:51000"},
		{Observations: 1, BytesLost: 1408, FirstObservation: t0, LastObservation: t0,
			SessionID: 42, StreamID: 7, Channel: "aeron:udp?endpoint=10.0.0.1:1|mtu=8k" + strings.Repeat("x", 40), Source: ""},
	}
	buf := make([]byte, 4096)
	off := 0
	for _, e := range want {
		off = putLossEntry(buf, off, e)
	}
	if off != 256 {
		t.Fatalf("entries end at %d, want 256 (entries of 97 and 124 bytes, each rounded up to 128)", off)
	}
	var got []LossEntry
	n, err := readLossReport(buf, func(e LossEntry) { got = append(got, e) })
	if err != nil || n != len(want) {
		t.Fatalf("read %d entries, %v", n, err)
	}
	for i := range want {
		if g, w := got[i], want[i]; g.Observations != w.Observations || g.BytesLost != w.BytesLost ||
			!g.FirstObservation.Equal(w.FirstObservation) || !g.LastObservation.Equal(w.LastObservation) ||
			g.SessionID != w.SessionID || g.StreamID != w.StreamID || g.Channel != w.Channel || g.Source != w.Source {
			t.Fatalf("entry %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
	// An entry being written (count still 0) ends the report.
	if n, err := readLossReport(make([]byte, 256), func(LossEntry) { t.Fatal("entry in an empty report") }); n != 0 || err != nil {
		t.Fatalf("empty report: %d, %v", n, err)
	}
	// A channel length running past the file is an error, not a panic.
	bad := make([]byte, 128)
	putLossEntry(bad, 0, LossEntry{Observations: 1, Channel: "c"})
	shm.PutInt32(bad, lrChannel, 1000)
	if _, err := readLossReport(bad, func(LossEntry) {}); err == nil {
		t.Fatal("a channel past the end was accepted")
	}
	// So is a file too short for a whole entry: it reads as empty.
	if n, err := readLossReport(buf[:lrMinEntryBytes-1], func(LossEntry) {}); n != 0 || err != nil {
		t.Fatalf("short file: %d, %v", n, err)
	}
}

// TestLossReportSourceAlignment: the source's length word sits at
// 40 + align(4 + channel length, 4) from the entry's start, whatever the
// channel length mod 4, and entries follow at the 64-byte boundary after
// the source. The offsets here are computed from that rule directly, not
// with putLossEntry.
func TestLossReportSourceAlignment(t *testing.T) {
	for l := 30; l < 34; l++ { // every channel length mod 4
		channel := "aeron:udp?endpoint=h:1|" + strings.Repeat("c", l-len("aeron:udp?endpoint=h:1|"))
		sources := []string{"127.0.0.1:40001", "10.0.0.2:5"}
		buf := make([]byte, 1024)
		off := 0
		for i, src := range sources {
			shm.PutInt32(buf, off+36, int32(100+i))
			shm.PutInt32(buf, off+40, int32(len(channel)))
			copy(buf[off+44:], channel)
			srcAt := off + 40 + (4+len(channel)+3)&^3
			shm.PutInt32(buf, srcAt, int32(len(src)))
			copy(buf[srcAt+4:], src)
			shm.PutInt64(buf, off, int64(i+1))
			off += (srcAt + 4 + len(src) - off + 63) &^ 63
		}
		var got []LossEntry
		n, err := readLossReport(buf, func(e LossEntry) { got = append(got, e) })
		if err != nil || n != len(sources) {
			t.Fatalf("channel of %d bytes (≡ %d mod 4): %d entries, %v", l, l%4, n, err)
		}
		for i, e := range got {
			if e.Channel != channel || e.Source != sources[i] || e.StreamID != int32(100+i) || e.Observations != int64(i+1) {
				t.Fatalf("channel of %d bytes (≡ %d mod 4), entry %d: %+v", l, l%4, i, e)
			}
		}
	}
}

// TestLossReportFromJavaDriver reads a loss report the real Java media
// driver wrote: one driver with Aeron's debug receive endpoint dropping
// 20 % of incoming frames, four UDP streams whose subscription channels
// are 0, 1, 2 and 3 bytes past a multiple of 4 long, each sent to until
// the driver has reported loss on it. ReadLossReport must find exactly
// the entries Aeron's own LossStat prints, field for field.
func TestLossReportFromJavaDriver(t *testing.T) {
	needJavaDriver(t, "debug receive endpoint (DebugReceiveChannelEndpointSupplier)")
	d := startDriver(t,
		"aeron.ReceiveChannelEndpoint.supplier=io.aeron.driver.ext.DebugReceiveChannelEndpointSupplier",
		"aeron.debug.receive.data.loss.rate=0.2",
		"aeron.debug.receive.data.loss.seed=7")
	c := connectTest(t, d, Options{})
	ports := testproc.FreeUDPPorts(t, 4)
	type stream struct {
		channel string
		sub     *Subscription
		pub     *Publication
	}
	var streams []stream
	for i, port := range ports {
		channel := fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d|alias=", port)
		for len(channel)%4 != i {
			channel += "x"
		}
		sub, err := c.AddSubscription(channel, int32(3000+i))
		if err != nil {
			t.Fatal(err)
		}
		pub, err := c.AddPublication(channel, int32(3000+i))
		if err != nil {
			t.Fatal(err)
		}
		streams = append(streams, stream{channel, sub, pub})
	}
	msg := make([]byte, 1000)
	lossy := map[string]bool{}
	testkit.Eventually(t, 120*time.Second, "loss on all four streams", func() (bool, string) {
		for _, s := range streams {
			if !lossy[s.channel] && s.pub.IsConnected() {
				s.pub.Offer(msg)
			}
			s.sub.Poll(func([]byte, *Header) {}, 100)
		}
		_, err := ReadLossReport(d.dir, func(e LossEntry) { lossy[e.Channel] = true })
		if err != nil {
			t.Fatal(err)
		}
		return len(lossy) == len(streams), ""
	})
	// Let in-flight retransmissions settle, so both readers see the same
	// counts.
	for _, s := range streams {
		s.pub.Close()
	}
	time.Sleep(500 * time.Millisecond)

	var ours []string
	n, err := ReadLossReport(d.dir, func(e LossEntry) {
		ours = append(ours, fmt.Sprintf("%d,%d,%d,%d,%s,%s", e.Observations, e.BytesLost, e.SessionID, e.StreamID, e.Channel, e.Source))
		if !strings.HasPrefix(e.Source, "127.0.0.1:") {
			t.Errorf("entry for %s: source %q", e.Channel, e.Source)
		}
	})
	if err != nil || n != len(streams) {
		t.Fatalf("ReadLossReport: %d entries, %v; want %d", n, err, len(streams))
	}
	java := testkit.Need(t, "java", "Aeron's LossStat")
	out, err := exec.Command(java, "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED", "-cp", aeronJar(), "-Daeron.dir="+d.dir, "io.aeron.samples.LossStat").CombinedOutput()
	if err != nil {
		t.Fatalf("LossStat: %v\n%s", err, out)
	}
	var theirs []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, ",")
		if len(f) != 8 || strings.HasPrefix(line, "#") {
			continue
		}
		// count, bytes, first, last (dates), session, stream, channel, source
		theirs = append(theirs, strings.Join([]string{f[0], f[1], f[4], f[5], f[6], f[7]}, ","))
	}
	if strings.Join(ours, "\n") != strings.Join(theirs, "\n") {
		t.Fatalf("ReadLossReport:\n%s\nAeron's LossStat:\n%s", strings.Join(ours, "\n"), out)
	}
	t.Logf("%d entries, as LossStat prints them:\n%s", n, strings.Join(ours, "\n"))
}
