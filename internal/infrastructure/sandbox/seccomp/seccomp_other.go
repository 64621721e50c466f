//go:build !linux

package seccomp

import "errors"

// Options selects what the filter allows.
type Options struct {
	// AllowInet lets processes open any AF_INET and AF_INET6 socket (host network).
	AllowInet bool
	// DenyMemfd refuses memfd_create.
	DenyMemfd bool
}

// Supported reports whether a filter can be installed: never outside Linux.
func Supported() bool { return false }

// Install fails outside Linux.
func Install(Options) error { return errors.New("seccomp: only on Linux") }
