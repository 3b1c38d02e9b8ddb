// Command beside is a second program for testproc's tests: Build puts it in
// the same directory as hello.
package main

import "fmt"

func main() { fmt.Println("beside") }
