package interop

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit/netns"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// BenchmarkUDPThroughput: one publisher's message rate over UDP between
// two hosts (two network namespaces joined by a veth pair), for a pair of
// goblin's Go drivers (aeronmd) and a pair of Java drivers, same run,
// alternating GOBLIN_DRIVER_ROUNDS times (default 3) per message size
// (32 B and 1 KiB). Every driver runs SHARED with the back-off idle
// strategy and 2 MiB socket buffers; the Java Throughput program puts its
// publisher thread on the first host's driver (pubDir=) and its checking
// subscriber thread on the second's, both backing off, so four threads
// share two cores fairly. Medians over the rounds, and go/java per size.
//
//	go test -run '^$' -bench '^BenchmarkUDPThroughput$' -benchtime 1x ./aeron/interop/
func BenchmarkUDPThroughput(b *testing.B) {
	j := needJava(b)
	link := newLink(b, netns.Options{Prefix: "gbt"})
	root := shmTempDir(b)
	bin := testproc.Build(b, "./aeron/cmd/aeronmd")
	props := []string{"-Daeron.threading.mode=SHARED", "-Daeron.shared.idle.strategy=backoff",
		"-Daeron.socket.so_rcvbuf=2m", "-Daeron.socket.so_sndbuf=2m", "-Daeron.dir.delete.on.shutdown=true"}
	var dirs [2][2]string // [java, go][host]
	for k := range 2 {
		dirs[0][k] = filepath.Join(root, "java"+strconv.Itoa(k))
		jw := *j
		jw.Wrap = link.Wrap(k)
		jw.JVMArgs = append([]string{"-Daeron.dir.delete.on.start=true", "-Daeron.print.configuration=false"}, props...)
		p, err := jw.StartClass(context.Background(), dirs[0][k], "io.aeron.driver.MediaDriver")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(p.Kill)
		awaitDriver(b, dirs[0][k])

		dirs[1][k] = filepath.Join(root, "go"+strconv.Itoa(k))
		gp, err := testproc.StartCmd(link.Command(k, bin, append([]string{"-Daeron.dir=" + dirs[1][k]}, props...)...))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { gp.Stop(10 * time.Second) })
		awaitDriver(b, dirs[1][k])
	}
	rounds := envInt("GOBLIN_DRIVER_ROUNDS", 3)
	duration := time.Duration(envInt("GOBLIN_TPUT_MS", 3000)) * time.Millisecond
	port := 40700
	for _, size := range []int{32, 1024} {
		var rates [2][]float64
		for range b.N {
			for range rounds {
				for k := range 2 {
					port++
					channel := fmt.Sprintf("aeron:udp?endpoint=%s:%d", link.Addr[1], port)
					rates[k] = append(rates[k], udpThroughput(b, j, dirs[k], channel, size, duration))
				}
			}
		}
		jr, gr := median(rates[0]), median(rates[1])
		b.ReportMetric(jr, fmt.Sprintf("java-%dB-msgs/s", size))
		b.ReportMetric(gr, fmt.Sprintf("go-%dB-msgs/s", size))
		b.ReportMetric(gr/jr, fmt.Sprintf("go/java-%dB", size))
		b.Logf("UDP throughput, %d B, two hosts: Java driver pair %.0f msgs/s (%v), Go driver pair %.0f msgs/s (%v), go/java %.2f",
			size, jr, rates[0], gr, rates[1], gr/jr)
	}
}

// udpThroughput runs the Java Throughput program with its publisher on
// dirs[0]'s driver and its subscriber on dirs[1]'s, and returns the
// messages received per second.
func udpThroughput(b *testing.B, j *Java, dirs [2]string, channel string, size int, duration time.Duration) float64 {
	p, err := j.Start(context.Background(), dirs[1], "Throughput", "channel="+channel, "stream=4200",
		"pubDir="+dirs[0], "size="+strconv.Itoa(size), "idle=backoff", "warmupMs=1000",
		"durationMs="+strconv.Itoa(int(duration.Milliseconds())))
	if err != nil {
		b.Fatal(err)
	}
	return throughputRun(b, p).rate
}
