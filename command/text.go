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

// DeniedProtectedMode is the error Redis 7.0 writes to a client that
// connects over TCP from beyond the loopback interface while protected
// mode is on and the default user has no password, before it closes the
// connection (without the leading '-' and the CRLF). Its words, the typo
// "Setup a an" included, are Redis 7.0's.
const DeniedProtectedMode = "DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside."
