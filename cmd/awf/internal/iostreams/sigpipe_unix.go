//go:build unix

package iostreams

import (
	"os"
	"os/signal"
	"syscall"
)

// SurviveClosedPipes keeps the process alive when the reader of its standard output or
// error goes away: Go's runtime otherwise dies of SIGPIPE at the first write to a closed pipe
// on fd 1 or 2. With SIGPIPE caught (not ignored: ignored signals stay ignored in the
// processes awf starts, which expect the default), such a write fails with EPIPE, and System's
// streams drop it.
func SurviveClosedPipes() {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
}
