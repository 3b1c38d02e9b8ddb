package interop

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/goblin-kv/goblin/aeron/driver"
	"github.com/goblin-kv/goblin/aeron/javadriver"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"
)

// udpFlow is the traffic the UDP interop tests push: mixed sizes from one
// byte to several MTUs (fragmented), through many term rotations.
const (
	udpMinSize = 1
	udpMaxSize = 5000
	udpTerm    = 256 << 10
)

// TestGoDriverUDPLoopback: unchanged Java programs on goblin's Go driver
// and on the Java driver, one driver each side, talk over UDP loopback in
// both directions, and through response channels with either driver on
// the server's side. Every message is checked byte for byte.
func TestGoDriverUDPLoopback(t *testing.T) {
	t.Parallel() // its own drivers, ports and Java peers; it times nothing
	j := needJava(t)
	goDrv := startGoDriver(t, driver.Options{})
	javaDrv := startDriver(t, javadriver.Options{})
	dirs := map[string]string{"go": goDrv.Dir(), "java": javaDrv.Dir()}
	const count = 5000
	for _, dir := range [][2]string{{"go", "java"}, {"java", "go"}} {
		t.Run("pub-"+dir[0]+"-sub-"+dir[1], func(t *testing.T) {
			port := testproc.FreeUDPPort(t)
			channel := fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", port)
			sizes := fmt.Sprintf("sizes=%d-%d", udpMinSize, udpMaxSize)
			sub := startProcIn(t, j, dirs[dir[1]], "Subscriber", "channel="+channel, "stream=3001",
				"count="+strconv.Itoa(count), sizes, "timeoutMs=120000")
			pub := startProcIn(t, j, dirs[dir[0]], "Publisher", "channel="+channel+"|term-length="+strconv.Itoa(udpTerm),
				"stream=3001", "count="+strconv.Itoa(count), sizes, "timeoutMs=120000")
			res, err := sub.Result(ioTimeout)
			if err != nil {
				t.Fatal(err)
			}
			if res["received"] != strconv.Itoa(count) || res["errors"] != "0" {
				t.Fatalf("subscriber: %v\n%s", res, sub.Output())
			}
			pub.Stop(ioTimeout)
		})
	}
	for _, dir := range [][2]string{{"go", "java"}, {"java", "go"}} {
		t.Run("server-"+dir[0]+"-client-"+dir[1], func(t *testing.T) {
			reqPort, ctlPort := testproc.FreeUDPPort(t), testproc.FreeUDPPort(t)
			channel := fmt.Sprintf("aeron:udp?endpoint=127.0.0.1:%d", reqPort)
			resp := fmt.Sprintf("aeron:udp?control=127.0.0.1:%d|control-mode=response", ctlPort)
			srv := startProcIn(t, j, dirs[dir[0]], "ResponseServer", "channel="+channel, "respChannel="+resp,
				"stream=3005", "respStream=3006", "timeoutMs=120000")
			cli, err := j.Start(t.Context(), dirs[dir[1]], "ResponseClient", "channel="+channel, "respChannel="+resp,
				"stream=3005", "respStream=3006", "count=2000", fmt.Sprintf("sizes=%d-%d", udpMinSize, udpMaxSize),
				"timeoutMs=120000")
			if err != nil {
				t.Fatal(err)
			}
			defer cli.Kill()
			res, err := cli.Result(ioTimeout)
			if err != nil {
				t.Fatalf("%v\nserver:\n%s", err, srv.Output())
			}
			if res["requests"] != "2000" || res["errors"] != "0" {
				t.Fatalf("client: %v\n%s\nserver:\n%s", res, cli.Output(), srv.Output())
			}
			srv.Stop(ioTimeout)
		})
	}
}
