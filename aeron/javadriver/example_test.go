package javadriver_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/goblin-kv/goblin/aeron/javadriver"
)

// A server that keeps a media driver running: start one in a private
// directory, and start a new one in the same directory if it dies.
func ExampleStart() {
	ctx := context.Background()
	d, err := javadriver.Start(ctx, javadriver.Options{
		Profile:    javadriver.Frugal, // SpinShared for latency runs with a core to spare
		TermLength: 1 << 20,
		StopGrace:  5 * time.Second,
	})
	if errors.Is(err, javadriver.ErrJarNotFound) {
		log.Fatal(err) // says to run `make setup`
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("aeron dir:", d.Dir()) // hand this to aeron.Options.Dir
	go func() {
		for {
			<-d.Done()
			err := d.Wait()
			if errors.Is(err, javadriver.ErrStopped) {
				return // stopped on purpose
			}
			log.Printf("media driver died: %v", err)
			nd, err := d.Restart(ctx)
			if err != nil {
				log.Printf("restart: %v", err)
				return
			}
			d = nd // clients reconnect to the new driver in the same directory
		}
	}()
}
