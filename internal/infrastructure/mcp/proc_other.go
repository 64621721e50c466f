//go:build !unix

package mcp

import "os/exec"

// ownGroup does nothing where process groups are not available.
func ownGroup(*exec.Cmd) {}

// killGroup does nothing where process groups are not available; wire's command transport still
// stops the server itself.
func killGroup(int) {}
