package main

import (
	"fmt"
	"io"
	"strings"
)

type cmdHelp struct{ name, args, summary string }

// commandHelp lists the commands goblin answers, for the prompt's help.
var commandHelp = []cmdHelp{
	{"PING", "[message]", "check the server answers"},
	{"ECHO", "message", "return message"},
	{"SET", "key value [NX|XX] [GET] [EX s|PX ms|EXAT t|PXAT t|KEEPTTL]", "store a value"},
	{"GET", "key", "fetch a value; (nil) when missing"},
	{"DEL", "key [key ...]", "remove keys; replies with how many existed"},
	{"EXISTS", "key [key ...]", "count the keys that exist"},
	{"EXPIRE", "key seconds", "set a time to live"},
	{"PEXPIRE", "key milliseconds", "set a time to live"},
	{"TTL", "key", "seconds left to live (-1 none, -2 missing)"},
	{"PTTL", "key", "milliseconds left to live"},
	{"PERSIST", "key", "remove the time to live"},
	{"INCR", "key", "add one to an integer value"},
	{"INCRBY", "key delta", "add delta"},
	{"DECR", "key", "subtract one"},
	{"DECRBY", "key delta", "subtract delta"},
	{"MGET", "key [key ...]", "fetch several values"},
	{"MSET", "key value [key value ...]", "store several values"},
	{"TYPE", "key", "the type of the value"},
	{"DBSIZE", "", "number of keys"},
	{"FLUSHALL", "", "remove every key"},
	{"INFO", "[section ...]", "server information"},
	{"AUTH", "password", "authenticate"},
}

func printHelp(w io.Writer, topic []string) {
	if len(topic) > 0 {
		want := strings.ToUpper(topic[0])
		for _, h := range commandHelp {
			if h.name == want {
				fmt.Fprintf(w, "  %s %s\n  %s\n", h.name, h.args, h.summary)
				return
			}
		}
		fmt.Fprintf(w, "no help for %q; any command is sent to the server as typed\n", topic[0])
		return
	}
	fmt.Fprintln(w, "Type a command and its arguments, e.g.  set greeting \"hello world\"")
	fmt.Fprintln(w, "Quote arguments with spaces; \"double quotes\" take \\n \\r \\t \\\" \\\\ \\xHH escapes.")
	fmt.Fprintln(w, "help COMMAND shows one command; quit or Ctrl-D leaves. Commands:")
	for _, h := range commandHelp {
		fmt.Fprintf(w, "  %-9s %s\n", h.name, h.args)
	}
}
