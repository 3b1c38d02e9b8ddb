//go:build !invariants

package command

const invariantsBuild = false
