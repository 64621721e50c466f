package approver

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/internal/domain/ports"
)

// pty is a pseudo-terminal pair: awf's side (the terminal, as its stdin and stderr) and the
// person's side (the master), with everything the terminal shows collected.
type pty struct {
	t      *testing.T
	master *os.File
	term   *os.File

	mu     sync.Mutex
	screen strings.Builder
	more   chan struct{} // signalled when the screen grows
}

func openPTY(t *testing.T) *pty {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	var n int
	rc, err := master.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var ioErr error
	err = rc.Control(func(fd uintptr) {
		if ioErr = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); ioErr != nil {
			return
		}
		n, ioErr = unix.IoctlGetInt(int(fd), unix.TIOCGPTN)
	})
	if err != nil || ioErr != nil {
		t.Fatalf("unlock pty: %v %v", err, ioErr)
	}
	term, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	p := &pty{t: t, master: master, term: term, more: make(chan struct{}, 1)}
	go p.collect()
	t.Cleanup(func() {
		term.Close()
		master.Close()
	})
	return p
}

func (p *pty) collect() {
	buf := make([]byte, 4096)
	for {
		n, err := p.master.Read(buf)
		if n > 0 {
			p.mu.Lock()
			p.screen.Write(buf[:n])
			p.mu.Unlock()
			select {
			case p.more <- struct{}{}:
			default:
			}
		}
		if err != nil {
			return
		}
	}
}

// streams are iostreams on the terminal side, detected as terminals.
func (p *pty) streams() *iostreams.IOStreams {
	ios, _, _, _ := iostreams.Test()
	ios.In, ios.ErrOut = p.term, p.term
	ios.SetStdinTTY(true)
	ios.SetStderrTTY(true)
	return ios
}

// waitFor waits until the screen shows want count times, and returns the screen.
func (p *pty) waitFor(want string, count int) string {
	p.t.Helper()
	deadline := time.After(10 * time.Second) // a hang guard, not a timing assertion
	for {
		p.mu.Lock()
		s := p.screen.String()
		p.mu.Unlock()
		if strings.Count(s, want) >= count {
			return s
		}
		select {
		case <-p.more:
		case <-deadline:
			p.t.Fatalf("the terminal never showed %q %d times; it shows:\n%s", want, count, s)
		}
	}
}

// typeLine types a line as a person would.
func (p *pty) typeLine(s string) {
	p.t.Helper()
	if _, err := p.master.Write([]byte(s + "\r")); err != nil {
		p.t.Fatal(err)
	}
}

// approveAsync runs Approve in the background.
func approveAsync(ctx context.Context, a *Terminal, req ports.ApprovalRequest) chan result {
	ch := make(chan result, 1)
	go func() {
		ans, err := a.Approve(ctx, req)
		ch <- result{ans, err}
	}()
	return ch
}
