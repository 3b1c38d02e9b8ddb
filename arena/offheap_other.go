//go:build !linux

package arena

import "errors"

func mapRegion(int, pageAdvice) ([]byte, error) { return nil, errors.New("no anonymous mappings here") }

func adviseHugeLater([]byte) {}

func populate([]byte) {}

func collapseRange(uintptr, int) error { return errors.New("no huge pages here") }

func unmapRegion([]byte) {}
