//go:build !linux

package process

import (
	"context"
	"os"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/infrastructure/sandbox"
)

// servers holds no helper outside Linux: there is no pid namespace to clean between calls.
type servers struct{}

func (*servers) close() {}

// runServed serves nothing outside Linux: every call gets a helper of its own.
func (r *Runner) runServed(context.Context, ports.ProcessRequest, *Request, *sandbox.Spec, time.Time) (ports.ProcessResult, error, bool) {
	return ports.ProcessResult{}, nil, false
}

// serve refuses: a persistent helper is Linux only, and the parent never asks for one elsewhere.
func (c HelperConfig) serve(_ *Request, _, status *os.File) int {
	return c.fail(status, fault.New(fault.System, "process helper: persistent helpers are Linux only"))
}
