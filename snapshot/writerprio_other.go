//go:build !linux

package snapshot

func lowerThread() {}

func onMainThread() bool { return false }
