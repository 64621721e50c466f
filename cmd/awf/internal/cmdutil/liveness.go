package cmdutil

import (
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
)

// ProcessGone is the error status and history show for a run whose state says running but
// that no process owns: it was cut off (killed, out of disk space, ...) before it could
// record its end. Its status is shown as interrupted.
const ProcessGone = "interrupted (process gone): the state says running, but no process owns the run; awf resume continues it"

// Gone reports whether a run recorded in status st is running according to its state but no
// process owns it (ports.StateStore.Owner): the state lies, the run is over.
func Gone(store ports.StateStore, id string, st state.Status) bool {
	if st != state.Running {
		return false
	}
	_, owned := store.Owner(id)
	return !owned
}
