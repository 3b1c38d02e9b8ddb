package interop

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/internal/testkit"
	"github.com/goblin-kv/goblin/internal/testkit/testproc"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/aeron/javadriver"
)

const (
	reqStream  = 1005 // the Java programs' defaults
	respStream = 1006
)

// respChannels are the four channels of a response-channel pair.
type respChannels struct {
	serverReq  string // server's request subscription
	serverResp string // server's response publications (+ response-correlation-id)
	clientReq  string // client's request publication (+ response-correlation-id)
	clientResp string // client's response subscription
}

// udpResponseChannels: the request goes to the server's endpoint; both the
// server's response publication and the client's response subscription
// name the server's control address (never the client's own address).
func udpResponseChannels(reqPort, ctlPort int) respChannels {
	ctl := aeron.UDP().ControlMode("response").Control(loopback(ctlPort)).String()
	req := aeron.UDP().Endpoint(loopback(reqPort)).String()
	return respChannels{serverReq: req, serverResp: ctl, clientReq: req, clientResp: ctl}
}

func ipcResponseChannels() respChannels {
	ctl := aeron.IPC().ControlMode("response").String()
	return respChannels{serverReq: "aeron:ipc", serverResp: ctl, clientReq: "aeron:ipc", clientResp: ctl}
}

// goResponseClient sends n requests of size bytes and checks each reply is
// the request's bitwise complement (what both servers answer).
func goResponseClient(t *testing.T, c *aeron.Client, ch respChannels, n, size int) {
	t.Helper()
	sub, err := c.AddSubscription(ch.clientResp, respStream)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	reqCh := withParam(t, ch.clientReq, "response-correlation-id", strconv.FormatInt(sub.RegistrationID(), 10))
	pub := addPub(t, c, reqCh, reqStream, true)
	testkit.Eventually(t, ioTimeout, "the request publication to connect", func() (bool, string) { return pub.IsConnected(), "" })
	testkit.Eventually(t, ioTimeout, "the response channel to connect", func() (bool, string) { return sub.IsConnected(), "" })
	req := make([]byte, size)
	reply := make([]byte, 0, size)
	for seq := 0; seq < n; seq++ {
		Fill(req, int64(seq))
		offer(t, pub, req)
		reply = nextMessage(t, sub, reply, 20*time.Microsecond, "reply to request", seq)
		if len(reply) != size {
			t.Fatalf("reply %d: %d bytes, want %d", seq, len(reply), size)
		}
		for j, b := range reply {
			if b != ^Pattern(int64(seq), j) {
				t.Fatalf("reply %d: byte %d is %#x, want the complement of %#x", seq, j, b, Pattern(int64(seq), j))
			}
		}
	}
}

// goResponseServer answers every client with the complement of each
// request on its own response publication until ctx ends. It returns the
// number of requests and clients served.
func goResponseServer(ctx context.Context, t *testing.T, c *aeron.Client, ch respChannels) (requests, clients int) {
	// Image handlers run on the client conductor and must not call Add*:
	// hand the images to the serving loop.
	arrived := make(chan *aeron.Image, 16)
	sub, err := c.AddSubscriptionWithHandlers(ch.serverReq, reqStream,
		func(img *aeron.Image) { arrived <- img }, nil)
	if err != nil {
		t.Error(err)
		return
	}
	defer sub.Close()
	replies := map[int32]*aeron.ExclusivePublication{}
	defer func() {
		for _, p := range replies {
			p.Close()
		}
	}()
	addClient := func(img *aeron.Image) bool {
		u, err := aeron.ParseChannel(ch.serverResp) // not withParam: this is not the test goroutine
		if err != nil {
			t.Error(err)
			return false
		}
		respCh := u.Set("response-correlation-id", strconv.FormatInt(img.CorrelationID(), 10)).String()
		p, err := c.AddExclusivePublication(respCh, respStream)
		if err != nil {
			t.Errorf("response publication for image %d: %v", img.CorrelationID(), err)
			return false
		}
		replies[img.SessionID()] = p
		clients++
		return true
	}
	buf := make([]byte, 0, 64<<10)
	for ctx.Err() == nil {
		select {
		case img := <-arrived:
			if !addClient(img) {
				return
			}
			continue
		default:
		}
		msg, img, ok := sub.NextMessage(buf[:0])
		if !ok {
			time.Sleep(20 * time.Microsecond)
			continue
		}
		p := replies[img.SessionID()]
		for p == nil { // the image handler has not run yet
			select {
			case i := <-arrived:
				if !addClient(i) {
					return
				}
				p = replies[img.SessionID()]
			case <-ctx.Done():
				return
			}
		}
		for j := range msg {
			msg[j] = ^msg[j]
		}
		for {
			r := p.Offer(msg)
			if r > 0 {
				break
			}
			if r == aeron.Closed || r == aeron.MaxPositionExceeded || ctx.Err() != nil {
				t.Errorf("reply: %s", aeron.StatusString(r))
				return
			}
			time.Sleep(20 * time.Microsecond)
		}
		requests++
	}
	return
}

// TestResponseChannels runs a Go and a Java response-channel pair in both
// roles, over UDP with two drivers (client and server each on their own,
// in separate Aeron directories) and over IPC with one.
func TestResponseChannels(t *testing.T) {
	t.Parallel() // its own drivers, ports and Java peers; it times nothing
	j := needJava(t)
	const n = 100
	for _, tc := range []struct {
		name string
		udp  bool
		size int
	}{
		{"udp", true, 32},
		{"udp-fragmented", true, 3000},
		{"ipc", false, 32},
		{"ipc-fragmented", false, 3000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			serverDrv := startDriver(t, javadriver.Options{})
			clientDrv := serverDrv
			if tc.udp {
				clientDrv = startDriver(t, javadriver.Options{})
				if clientDrv.Dir() == serverDrv.Dir() {
					t.Fatal("the two drivers share a directory")
				}
			}
			channels := func(t *testing.T) respChannels {
				if tc.udp {
					ports := testproc.FreeUDPPorts(t, 2)
					return udpResponseChannels(ports[0], ports[1])
				}
				return ipcResponseChannels()
			}

			t.Run("go-client-java-server", func(t *testing.T) {
				ch := channels(t)
				srv := startProc(t, j, serverDrv, "ResponseServer",
					"channel="+ch.serverReq, "respChannel="+ch.serverResp)
				c := connect(t, clientDrv, aeron.Options{})
				goResponseClient(t, c, ch, n, tc.size)
				if err := srv.Stop(ioTimeout); err != nil {
					t.Fatalf("Java ResponseServer: %v", err)
				}
				res, err := srv.Result(time.Second)
				if err != nil {
					t.Fatal(err)
				}
				if r, _ := Int(res, "requests"); r != n {
					t.Fatalf("Java server answered %d requests, want %d", r, n)
				}
				if cl, _ := Int(res, "clients"); cl != 1 {
					t.Fatalf("Java server saw %d clients, want 1", cl)
				}
			})

			t.Run("java-client-go-server", func(t *testing.T) {
				ch := channels(t)
				c := connect(t, serverDrv, aeron.Options{})
				ctx, cancel := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				var requests, clients int
				wg.Add(1)
				go func() {
					defer wg.Done()
					requests, clients = goResponseServer(ctx, t, c, ch)
				}()
				defer func() { cancel(); wg.Wait() }()
				p, err := j.Start(context.Background(), clientDrv.Dir(), "ResponseClient",
					"channel="+ch.clientReq, "respChannel="+ch.clientResp,
					"count="+strconv.Itoa(n), "size="+strconv.Itoa(tc.size), "timeoutMs=120000")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(p.Kill)
				res, err := p.Result(ioTimeout)
				if err != nil {
					t.Fatal(err)
				}
				if err := p.Wait(); err != nil {
					t.Fatalf("Java ResponseClient: %v\n%s", err, p.Output())
				}
				if r, _ := Int(res, "requests"); r != n {
					t.Fatalf("Java client completed %d requests, want %d", r, n)
				}
				if e, _ := Int(res, "errors"); e != 0 {
					t.Fatalf("Java client saw %d bad replies", e)
				}
				cancel()
				wg.Wait()
				if requests != n || clients != 1 {
					t.Fatalf("Go server answered %d requests from %d clients, want %d from 1", requests, clients, n)
				}
			})
		})
	}
}
