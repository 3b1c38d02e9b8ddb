package command

// Error texts are Redis 7's, byte for byte, whichever protocol carries
// them; these helpers build the ones that quote the client's input.

// AppendSanitized appends at most max bytes of s with CR and LF replaced by
// spaces, as Redis does when it quotes input in an error text.
func AppendSanitized(b, s []byte, max int) []byte {
	if len(s) > max {
		s = s[:max]
	}
	for _, c := range s {
		if c == '\r' || c == '\n' {
			c = ' '
		}
		b = append(b, c)
	}
	return b
}

// AppendWrongArgs appends "ERR wrong number of arguments for 'name'
// command".
func AppendWrongArgs(b []byte, name string) []byte {
	b = append(b, "ERR wrong number of arguments for '"...)
	b = append(b, name...)
	return append(b, "' command"...)
}

// AppendUnknownSubcommand appends "ERR unknown subcommand 'sub'. Try
// CONTAINER HELP." (container in upper case, as Redis prints it).
func AppendUnknownSubcommand(b, sub []byte, container string) []byte {
	b = append(b, "ERR unknown subcommand '"...)
	b = AppendSanitized(b, sub, 128)
	b = append(b, "'. Try "...)
	for i := 0; i < len(container); i++ {
		c := container[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		b = append(b, c)
	}
	return append(b, " HELP."...)
}

// AppendUnknownCommand appends Redis 7's text for an unknown command:
// "ERR unknown command 'foo', with args beginning with: 'a' 'b' " (each
// argument quoted and followed by a space, added while the list is shorter
// than 128 bytes, each cut to what is left of the 128).
func AppendUnknownCommand(b []byte, args [][]byte) []byte {
	b = append(b, "ERR unknown command '"...)
	b = AppendSanitized(b, args[0], 128)
	b = append(b, "', with args beginning with: "...)
	start := len(b)
	for _, a := range args[1:] {
		used := len(b) - start
		if used >= 128 {
			break
		}
		b = append(b, '\'')
		b = AppendSanitized(b, a, 128-used)
		b = append(b, "' "...)
	}
	return b
}
