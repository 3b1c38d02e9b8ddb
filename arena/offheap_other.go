//go:build !linux

package arena

import "errors"

func mapRegion(int, bool) ([]byte, error) { return nil, errors.New("no anonymous mappings here") }

func unmapRegion([]byte) {}
