package server_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/goblin-kv/goblin/server"
)

// A server on a private Unix socket, used with a raw RESP request.
func Example() {
	dir, _ := os.MkdirTemp("", "goblin-example-")
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "goblin.sock")

	srv, err := server.New(server.Options{Listen: []string{"uds://" + sock}})
	if err != nil {
		fmt.Println(err)
		return
	}
	go srv.Run() // the loop locks this goroutine to its thread
	defer srv.Shutdown(context.Background())

	c, err := net.Dial("unix", sock)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	fmt.Fprint(c, "SET greeting hello\r\nGET greeting\r\n")
	r := bufio.NewReader(c)
	for range 3 {
		line, _ := r.ReadString('\n')
		fmt.Printf("%q\n", line)
	}
	// Output:
	// "+OK\r\n"
	// "$5\r\n"
	// "hello\r\n"
}
