package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/goblin-kv/goblin/command"
)

// The prompt's help and completion come from goblin's command table
// (package command), the one the server decodes with: a command the server
// learns shows up here without a change to goblin-client.

// lookupCommand finds the command words name ("set", "client setname"), or
// returns nil.
func lookupCommand(words []string) *command.Spec {
	if len(words) == 0 {
		return nil
	}
	op := command.ByName([]byte(words[0]))
	if len(words) > 1 && len(command.Subcommands(op)) > 0 {
		if sub := command.Subcommand(op, []byte(words[1])); sub != command.OpNone {
			op = sub
		}
	}
	return command.Lookup(op)
}

// listedCommands are the commands help lists and completion offers: every
// command and subcommand, but not a container such as CLIENT whose name
// alone is no command.
func listedCommands() []*command.Spec {
	var out []*command.Spec
	for _, op := range command.All() {
		if s := command.Lookup(op); s != nil && !s.Dispatch {
			out = append(out, s)
		}
	}
	return out
}

// groups returns the command groups (COMMAND DOCS's group: string,
// generic, server...) in name order, each with its commands.
func groups() ([]string, map[string][]*command.Spec) {
	by := map[string][]*command.Spec{}
	for _, s := range listedCommands() {
		by[s.Group] = append(by[s.Group], s)
	}
	names := make([]string, 0, len(by))
	for g := range by {
		names = append(names, g)
	}
	sort.Strings(names)
	return names, by
}

// printHelp prints the prompt's help: with no topic, how to type commands
// and the command groups; "help @group" that group's commands with their
// usage; "help CMD" one command's usage and summary.
func printHelp(w io.Writer, topic []string) {
	if len(topic) > 0 && strings.HasPrefix(topic[0], "@") {
		names, by := groups()
		g := strings.ToLower(strings.TrimPrefix(topic[0], "@"))
		if len(by[g]) == 0 {
			fmt.Fprintf(w, "no group %q: the groups are @%s\n", topic[0], strings.Join(names, ", @"))
			return
		}
		for _, s := range by[g] {
			fmt.Fprintf(w, "  %s\n    %s\n", s.Usage(), s.Summary)
		}
		return
	}
	if len(topic) > 0 {
		s := lookupCommand(topic)
		if s == nil {
			fmt.Fprintf(w, "no help for %q: goblin has no such command; over RESP it is sent to the server as typed\n",
				strings.Join(topic, " "))
			return
		}
		fmt.Fprintf(w, "  %s\n  %s\n  group: @%s\n", s.Usage(), s.Summary, s.Group)
		return
	}
	fmt.Fprintln(w, "Type a command and its arguments, e.g.  set greeting \"hello world\"")
	fmt.Fprintln(w, "Quote arguments with spaces; \"double quotes\" take \\n \\r \\t \\\" \\\\ \\xHH escapes.")
	fmt.Fprintln(w, "help @GROUP lists a group's commands, help COMMAND shows one (Tab completes both);")
	fmt.Fprintln(w, "monitor streams what the server runs until Ctrl-C; clear clears the screen; quit, exit or Ctrl-D leaves.")
	fmt.Fprintln(w, "Groups:")
	names, by := groups()
	for _, g := range names {
		var cmds []string
		for _, s := range by[g] {
			cmds = append(cmds, s.DisplayName())
		}
		list := strings.Join(cmds, " ")
		if len(list) > 56 {
			list = list[:strings.LastIndexByte(list[:53], ' ')] + " ..."
		}
		fmt.Fprintf(w, "  @%-13s %3d  %s\n", g, len(cmds), list)
	}
}

// complete offers the commands whose names start with what is typed: the
// first word, or a container's subcommand after it ("client s" offers
// "client SETNAME").
func complete(line string) []string {
	words := strings.Fields(line)
	var out []string
	if len(words) > 0 && strings.EqualFold(words[0], "help") && (len(words) > 1 || strings.HasSuffix(line, " ")) {
		return completeHelp(line)
	}
	switch {
	case len(words) == 0:
		return nil
	case len(words) == 1 && !strings.HasSuffix(line, " "):
		for _, op := range command.All() {
			s := command.Lookup(op)
			if s.Container == command.OpNone && hasPrefixFold(s.Name, words[0]) {
				out = append(out, s.DisplayName())
			}
		}
	case len(words) <= 2:
		c := command.ByName([]byte(words[0]))
		typed := ""
		if len(words) == 2 {
			typed = words[1]
		} else if !strings.HasSuffix(line, " ") {
			return nil
		}
		keep := line[:strings.LastIndex(line, words[0])+len(words[0])] + " "
		for _, sub := range command.Subcommands(c) {
			s := command.Lookup(sub)
			name := s.Name[strings.IndexByte(s.Name, '|')+1:]
			if hasPrefixFold(name, typed) {
				out = append(out, keep+strings.ToUpper(name))
			}
		}
	}
	return out
}

// hasPrefixFold reports whether the lower-case name starts with typed, in
// any case.
func hasPrefixFold(name, typed string) bool {
	return len(typed) <= len(name) && strings.EqualFold(name[:len(typed)], typed)
}

// completeHelp completes "help" topics: groups (@string; all of them
// after "help "), command names, and a container's subcommands after it
// (help client s).
func completeHelp(line string) []string {
	rest := strings.TrimLeft(line[strings.Index(strings.ToLower(line), "help")+len("help"):], " ")
	keep := line[:len(line)-len(rest)]
	var out []string
	if rest == "" || !strings.Contains(rest, " ") && strings.HasPrefix(rest, "@") {
		names, _ := groups()
		for _, g := range names {
			if hasPrefixFold("@"+g, rest) {
				out = append(out, keep+"@"+g)
			}
		}
		return out
	}
	for _, c := range complete(rest) {
		out = append(out, keep+c)
	}
	return out
}
