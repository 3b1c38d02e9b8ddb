// Command hello prints a line and waits for SIGTERM, for testproc's tests.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	fmt.Println("hello ready pid", os.Getpid())
	<-sig
	fmt.Println("bye")
	os.Exit(3)
}
