package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/goblin-kv/goblin/request"
)

// The prompt's help and completion come from the server's command table
// (package request), the same one COMMAND answers from.

// groupOrder is the order help lists command groups in.
var groupOrder = []string{"string", "bitmap", "generic", "transactions", "connection", "server"}

// printHelp writes the help for topic ("set", "client list", "client",
// "@string"), or the list of every command when topic is empty.
func printHelp(w io.Writer, topic []string) {
	if len(topic) == 0 {
		fmt.Fprintln(w, "Type a command and its arguments, e.g.  set greeting \"hello world\"")
		fmt.Fprintln(w, "Quote arguments with spaces; \"double quotes\" take \\n \\r \\t \\\" \\\\ \\xHH escapes.")
		fmt.Fprintln(w, "help COMMAND shows one command, help @GROUP a group; quit or Ctrl-D leaves. Commands:")
		for _, g := range groups() {
			fmt.Fprintf(w, "  @%s\n", g)
			for _, op := range request.All() {
				if s := request.Lookup(op); s.Group == g && !s.Dispatch {
					fmt.Fprintf(w, "    %s\n", s.Usage())
				}
			}
		}
		return
	}
	if g, ok := strings.CutPrefix(topic[0], "@"); ok {
		n := 0
		for _, op := range request.All() {
			if s := request.Lookup(op); strings.EqualFold(s.Group, g) && !s.Dispatch {
				printCommand(w, s)
				n++
			}
		}
		if n == 0 {
			fmt.Fprintf(w, "no group %q; the groups are @%s\n", g, strings.Join(groups(), " @"))
		}
		return
	}
	op := request.ByFullName(strings.Join(topic, "|"))
	if op == request.OpNone {
		op = request.ByFullName(topic[0])
	}
	s := request.Lookup(op)
	if s == nil {
		fmt.Fprintf(w, "no help for %q; any command is sent to the server as typed\n", strings.Join(topic, " "))
		return
	}
	printCommand(w, s)
	for _, sub := range request.Subcommands(op) {
		printCommand(w, request.Lookup(sub))
	}
}

func printCommand(w io.Writer, s *request.Spec) {
	if s.Dispatch {
		fmt.Fprintf(w, "  %s <subcommand>\n  %s\n\n", s.DisplayName(), s.Summary)
		return
	}
	fmt.Fprintf(w, "  %s\n  %s\n  group: %s  since: %s  complexity: %s\n\n", s.Usage(), s.Summary, s.Group, s.Since, s.Complexity)
}

// groups returns the command groups in help order.
func groups() []string {
	seen := map[string]bool{}
	for _, op := range request.All() {
		seen[request.Lookup(op).Group] = true
	}
	var out []string
	for _, g := range groupOrder {
		if seen[g] {
			out = append(out, g)
			delete(seen, g)
		}
	}
	var rest []string
	for g := range seen {
		rest = append(rest, g)
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// complete returns the completions of a partly typed line: command names,
// and after a container's name ("client "), its subcommands.
func complete(line string) []string {
	words := strings.Fields(line)
	endsInSpace := strings.HasSuffix(line, " ")
	var out []string
	switch {
	case len(words) == 0 || (len(words) == 1 && !endsInSpace):
		prefix := ""
		if len(words) == 1 {
			prefix = strings.ToUpper(words[0])
		}
		for _, op := range request.All() {
			s := request.Lookup(op)
			if s.Container == request.OpNone && strings.HasPrefix(s.DisplayName(), prefix) {
				out = append(out, s.DisplayName())
			}
		}
	case len(words) == 1 || (len(words) == 2 && !endsInSpace):
		c := request.ByName([]byte(words[0]))
		prefix := ""
		if len(words) == 2 {
			prefix = strings.ToUpper(words[1])
		}
		for _, sub := range request.Subcommands(c) {
			if name := request.Lookup(sub).DisplayName(); strings.HasPrefix(name, strings.ToUpper(words[0])+" "+prefix) {
				out = append(out, name)
			}
		}
	}
	return out
}
