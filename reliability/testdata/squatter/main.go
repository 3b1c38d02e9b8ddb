// Command squatter is the other local user of the socket squatting test
// (reliability/streams_test.go): it takes a socket path before goblin-server
// does, in a directory it creates open to everyone, answers +OK to every
// line, and appends every byte it receives to a log file, so the test can
// tell whether a client sent it a password.
//
//	squatter SOCKET LOG
package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: squatter SOCKET LOG")
		os.Exit(2)
	}
	sock, logPath := os.Args[1], os.Args[2]
	dir := filepath.Dir(sock)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		fail(err)
	}
	os.Chmod(dir, 0o777)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		fail(err)
	}
	os.Chmod(sock, 0o777)
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		fail(err)
	}
	fmt.Println("listening", sock)
	var mu sync.Mutex
	for {
		c, err := ln.Accept()
		if err != nil {
			fail(err)
		}
		go func() {
			defer c.Close()
			buf := make([]byte, 4096)
			for {
				n, err := c.Read(buf)
				if n > 0 {
					mu.Lock()
					logf.Write(buf[:n])
					mu.Unlock()
					c.Write([]byte("+OK\r\n"))
				}
				if err != nil {
					return
				}
			}
		}()
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "squatter:", err)
	os.Exit(1)
}
