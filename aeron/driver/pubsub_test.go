package driver

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/goblin-kv/goblin/aeron"
	"github.com/goblin-kv/goblin/internal/testkit"
)

func TestGoClientPublishSubscribeIPC(t *testing.T) {
	d := startDriver(t, testOptions(t))
	c := connectClient(t, d)
	sub, err := c.AddSubscription("aeron:ipc", 10)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := c.AddPublication("aeron:ipc", 10)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 60*time.Second, "image", func() (bool, string) { return sub.ImageCount() == 1, "" })
	const n = 5000
	var got [][]byte
	sent := 0
	testkit.Eventually(t, 60*time.Second, "all messages", func() (bool, string) {
		for sent < n {
			msg := []byte(fmt.Sprintf("message %d", sent))
			if pub.Offer(msg) < 0 {
				break
			}
			sent++
		}
		sub.Poll(func(b []byte, _ *aeron.Header) { got = append(got, append([]byte(nil), b...)) }, 100)
		return len(got) == n, ""
	})
	for i, m := range got {
		if !bytes.Equal(m, []byte(fmt.Sprintf("message %d", i))) {
			t.Fatalf("message %d is %q", i, m)
		}
	}
}
