package client_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/goblin-kv/goblin/client"
	"github.com/goblin-kv/goblin/server"
)

// startServer runs a goblin server inside the example's process on a
// temporary Unix socket and returns its target and a stop function. In a
// real program the server is the goblin-server command and the target is
// its socket ("" dials the default one).
func startServer() (tgt string, stop func()) {
	dir, tgt := tempSocket()
	return tgt, serve(dir, server.Options{Listen: []string{tgt, tgt + "-sbe?proto=sbe"}})
}

// tempSocket makes a temporary directory for an example server's socket
// and returns it and the socket's target.
func tempSocket() (dir, tgt string) {
	dir, err := os.MkdirTemp("", "goblin-example-")
	if err != nil {
		panic(err)
	}
	return dir, "uds://" + filepath.Join(dir, "goblin.sock")
}

// serve runs a goblin server inside the example's process and returns a
// function that stops it and removes dir.
func serve(dir string, o server.Options) (stop func()) {
	s, err := server.New(o)
	if err != nil {
		panic(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run() }()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		<-done
		os.RemoveAll(dir)
	}
}

func Example() {
	tgt, stop := startServer()
	defer stop()

	ctx := context.Background()
	c, err := client.Dial(ctx, tgt)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	if err := c.Set(ctx, "greeting", []byte("hello"), client.SetOptions{TTL: time.Minute}); err != nil {
		fmt.Println(err)
		return
	}
	v, err := c.Get(ctx, "greeting")
	fmt.Printf("%s %v\n", v, err)

	_, err = c.Get(ctx, "nobody")
	fmt.Println(errors.Is(err, client.ErrNil))

	n, _ := c.Incr(ctx, "visits")
	fmt.Println(n)
	// Output:
	// hello <nil>
	// true
	// 1
}

// The same calls work over SBE: the target's proto parameter chooses the
// protocol.
func ExampleDial_sbe() {
	tgt, stop := startServer()
	defer stop()

	ctx := context.Background()
	c, err := client.Dial(ctx, tgt+"-sbe?proto=sbe")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	_ = c.MSet(ctx, client.KV{Key: "a", Value: []byte("1")}, client.KV{Key: "b", Value: []byte("2")})
	vals, _ := c.MGet(ctx, "a", "missing", "b")
	fmt.Printf("%q\n", vals)
	// Output:
	// ["1" "" "2"]
}

// Options configure a connection; their zero value is what Dial uses.
// Here: the password a server started with requirepass asks for, and a
// bound on each connection attempt.
func ExampleOptions_Dial() {
	dir, tgt := tempSocket()
	stop := serve(dir, server.Options{Listen: []string{tgt}, RequirePass: "s3cret"})
	defer stop()

	ctx := context.Background()
	anon, err := client.Dial(ctx, tgt)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer anon.Close()
	var se *client.ServerError
	fmt.Println(errors.As(anon.Ping(ctx), &se), se.Code)

	c, err := client.Options{Password: "s3cret", DialTimeout: 2 * time.Second}.Dial(ctx, tgt)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	fmt.Println(c.Ping(ctx))
	// Output:
	// true NOAUTH
	// <nil>
}

// GetAppend reuses the caller's buffer: at depth one nothing allocates.
func ExampleClient_GetAppend() {
	tgt, stop := startServer()
	defer stop()

	ctx := context.Background()
	c, _ := client.Dial(ctx, tgt)
	defer c.Close()
	_ = c.Set(ctx, "k", []byte("value"), client.SetOptions{})

	buf := make([]byte, 0, 128)
	for i := 0; i < 3; i++ {
		var err error
		buf, err = c.GetAppend(ctx, buf[:0], "k")
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Printf("%s\n", buf)
	// Output:
	// value
}

// A pipeline sends its commands in one write and reads every reply;
// error replies come back as values and do not stop the batch.
func ExampleClient_Pipeline() {
	tgt, stop := startServer()
	defer stop()

	ctx := context.Background()
	c, _ := client.Dial(ctx, tgt)
	defer c.Close()

	res, err := c.Pipeline().
		Do("SET", "n", 41).
		Do("INCR", "n").
		Do("INCR", "no-such-op", "extra").
		Do("GET", "n").
		Exec(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, v := range res {
		fmt.Println(v.Kind, v)
	}
	// Output:
	// status OK
	// integer (integer) 42
	// error (error) ERR wrong number of arguments for 'incr' command
	// bulk "42"
}

// Do sends any command; its Value prints the way redis-cli does.
func ExampleClient_Do() {
	tgt, stop := startServer()
	defer stop()

	ctx := context.Background()
	c, _ := client.Dial(ctx, tgt)
	defer c.Close()

	_, _ = c.Do(ctx, "SET", "k", "v", "EX", 100)
	v, _ := c.Do(ctx, "MGET", "k", "missing")
	fmt.Println(v)
	_, err := c.Do(ctx, "INCR", "k")
	var se *client.ServerError
	fmt.Println(errors.As(err, &se), se.Code)
	// Output:
	// 1) "v"
	// 2) (nil)
	// true ERR
}
