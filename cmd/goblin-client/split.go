package main

import (
	"errors"

	"github.com/goblin-kv/goblin/proto/resp"
)

var errUnbalanced = errors.New("unbalanced quotes")

// splitArgs splits a command line the way redis-cli does, with the RESP
// package's splitter (the one the server splits inline requests with):
// words separated by white space; "double quotes" take \n \r \t \b \a \"
// \\ and \xHH escapes; 'single quotes' take only \'. A closing quote must
// be followed by a space or the end of the line.
func splitArgs(line string) ([]string, error) {
	words, err := resp.SplitArgs(line)
	if errors.Is(err, resp.ErrUnbalancedQuotes) {
		return nil, errUnbalanced
	}
	return words, err
}
