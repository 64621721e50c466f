//go:build unix

package process

import (
	"os"
	"syscall"
)

// procGroup is a started program with everything it starts: on Unix its process group, which
// it leads (detach).
type procGroup struct{ pgid int }

// newProcGroup is the group of p, started with detach.
func newProcGroup(p *os.Process) (procGroup, error) { return procGroup{pgid: p.Pid}, nil }

// kill sends SIGKILL to every process of the group. A process that left it (setsid) is not
// reached; on Linux a PID namespace covers that case, where awf can create one.
func (g procGroup) kill() { syscall.Kill(-g.pgid, syscall.SIGKILL) }

// release frees what the group holds: nothing on Unix.
func (g procGroup) release() {}
