package approver

import (
	"cmp"
	"os"
	"os/user"
	"path/filepath"
	"strconv"

	"github.com/awf-dev/awf/internal/domain/ports"
)

var _ ports.ApproverIdentity = (*Terminal)(nil)

// Identity says who answers the prompt: the OS user running awf (their login name, else the
// uid) and the terminal device standard input reads from (/dev/pts/3), "" when it is not one
// awf can name. The audit log records both with each answer.
func (t *Terminal) Identity() (name, tty string) {
	name = strconv.Itoa(os.Getuid())
	if u, err := user.Current(); err == nil {
		name = cmp.Or(u.Username, name)
	}
	if f, ok := t.io.In.(*os.File); ok {
		tty = ttyName(f)
	}
	return name, tty
}

// ttyName is the device f reads from, found through /proc where there is one.
func ttyName(f *os.File) string {
	p, err := os.Readlink(filepath.Join("/proc/self/fd", strconv.Itoa(int(f.Fd()))))
	if err != nil || len(p) < 5 || p[:5] != "/dev/" {
		return ""
	}
	return p
}
