//go:build !linux

package arena

import "errors"

func mapRegion(int, pageAdvice) ([]byte, error) { return nil, errors.New("no anonymous mappings here") }

func adviseHugeLater([]byte) {}

func unmapRegion([]byte) {}
