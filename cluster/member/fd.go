package member

import "golang.org/x/sys/unix"

func writeFD(fd int, b []byte) (int, error) { return unix.Write(fd, b) }
