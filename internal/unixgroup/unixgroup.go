// Package unixgroup turns the group= option of goblin's shared-memory
// transports (the ring's directory, the Aeron directory) into a gid: a
// group name, or a numeric gid, as chgrp(1) takes it.
package unixgroup

import (
	"fmt"
	"os/user"
	"strconv"
)

// Lookup returns the gid of group g, a name or a number.
func Lookup(g string) (int, error) {
	if gid, err := strconv.Atoi(g); err == nil && gid >= 0 {
		return gid, nil
	}
	gr, err := user.LookupGroup(g)
	if err != nil {
		return 0, fmt.Errorf("group %q: %w", g, err)
	}
	return strconv.Atoi(gr.Gid)
}
