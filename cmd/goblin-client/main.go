// Command goblin-client talks to a goblin server from the shell.
//
//	goblin-client ping                       one command, printed like redis-cli
//	goblin-client set greeting hello
//	goblin-client --json get greeting        the reply as JSON
//	goblin-client < script.txt               one command per line from stdin
//	goblin-client                            interactive prompt (on a terminal)
//
// With no --target it dials the socket goblin-server listens on when
// started with no flags ($XDG_RUNTIME_DIR/goblin.sock, else
// /run/goblin/goblin.sock for root and $TMPDIR/goblin-UID/goblin.sock for
// other users).
// Exit codes: 0 success, 1 the server answered with an error, 2 usage
// error, 3 cannot connect (or the connection was lost). See docs/cli.md.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
