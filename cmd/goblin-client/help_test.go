package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// issue15Commands are the string, keyspace, database, transaction and
// connection commands added beyond the first set, as a user types them.
var issue15Commands = strings.Split("SETNX SETEX PSETEX GETSET GETDEL GETEX APPEND STRLEN GETRANGE SUBSTR SETRANGE "+
	"INCRBYFLOAT MSETNX LCS SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD BITFIELD_RO KEYS SCAN UNLINK TOUCH RENAME "+
	"RENAMENX COPY RANDOMKEY EXPIREAT PEXPIREAT EXPIRETIME PEXPIRETIME DUMP RESTORE SELECT SWAPDB MOVE FLUSHDB DBSIZE "+
	"MULTI EXEC DISCARD WATCH UNWATCH HELLO RESET TIME LASTSAVE WAIT MONITOR COMMAND INFO", " ")

// issue15Subcommands are its container subcommands.
var issue15Subcommands = strings.Split("OBJECT ENCODING,OBJECT FREQ,OBJECT IDLETIME,OBJECT REFCOUNT,OBJECT HELP,"+
	"MEMORY USAGE,MEMORY HELP,CLIENT ID,CLIENT INFO,CLIENT LIST,CLIENT KILL,CLIENT NO-EVICT,CLIENT NO-TOUCH,"+
	"CLIENT PAUSE,CLIENT UNPAUSE,CLIENT REPLY,CLIENT TRACKING,CLIENT HELP,COMMAND COUNT,COMMAND INFO,COMMAND DOCS,"+
	"COMMAND LIST,COMMAND GETKEYS,COMMAND HELP,CONFIG GET,CONFIG SET,CONFIG RESETSTAT,CONFIG HELP,FUNCTION FLUSH,"+
	"FUNCTION LIST", ",")

// TestIssue15CommandsInHelpAndCompletion: the help of its group lists
// every command and subcommand of that set, help NAME shows its usage,
// and completion offers it from its first letters.
func TestIssue15CommandsInHelpAndCompletion(t *testing.T) {
	for _, c := range append(slices.Clone(issue15Commands), issue15Subcommands...) {
		words := strings.Fields(c)
		var group bytes.Buffer
		if s := lookupCommand(words); s == nil {
			t.Errorf("help %s: no such command", c)
			continue
		} else if printHelp(&group, []string{"@" + s.Group}); !strings.Contains(group.String(), "  "+s.Usage()+"\n") {
			t.Errorf("help @%s does not list %s", s.Group, s.Usage())
		}
		var one bytes.Buffer
		printHelp(&one, words)
		if !strings.HasPrefix(strings.TrimSpace(one.String()), c) {
			t.Errorf("help %s = %q", c, one.String())
		}
		line := strings.ToLower(c[:len(c)-1]) // all but the last letter
		want := c
		if len(words) == 2 {
			line = strings.ToLower(words[0]) + " " + strings.ToLower(words[1][:len(words[1])-1])
			want = strings.ToLower(words[0]) + " " + words[1]
		}
		if got := complete(line); !slices.Contains(got, want) {
			t.Errorf("complete(%q) = %q, lacks %q", line, got, want)
		}
	}
}
