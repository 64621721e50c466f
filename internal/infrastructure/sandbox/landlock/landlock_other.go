//go:build !linux

package landlock

import "errors"

// Rules are what a sandboxed process may reach.
type Rules struct {
	Read, Write []string
	RestrictNet bool
	ConnectTCP  []uint16
}

// Result says what Apply enforced.
type Result struct {
	ABI     int
	Net     bool
	Missing []string
}

// ErrUnsupported means the kernel has no Landlock.
var ErrUnsupported = errors.New("landlock: only on Linux")

// ABI returns 0 outside Linux.
func ABI() int { return 0 }

// Apply fails outside Linux.
func Apply(Rules) (Result, error) { return Result{}, ErrUnsupported }

// Programs starts programs on the calling thread outside Linux.
type Programs struct{}

// NewPrograms returns nil outside Linux.
func NewPrograms() (*Programs, error) { return nil, nil }

// Start runs start.
func (p *Programs) Start(start func() error) error { return start() }
