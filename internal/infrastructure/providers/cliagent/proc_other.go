//go:build !unix

package cliagent

import "os/exec"

// killGroup leaves the default: exec kills the command itself when ctx ends.
func killGroup(*exec.Cmd) {}
