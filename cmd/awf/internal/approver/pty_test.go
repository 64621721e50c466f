package approver

import (
	"context"
	"testing"

	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/cmd/awf/internal/ptytest"
	"github.com/awf-dev/awf/internal/domain/ports"
)

// pty is the test's pseudo-terminal: awf's side as its stdin and stderr, the person's side
// played by the test.
type pty struct {
	*ptytest.PTY
	t *testing.T
}

func openPTY(t *testing.T) *pty { return &pty{PTY: ptytest.Open(t), t: t} }

// streams are iostreams on the terminal side, detected as terminals.
func (p *pty) streams() *iostreams.IOStreams {
	ios, _, _, _ := iostreams.Test()
	ios.In, ios.ErrOut = p.Term, p.Term
	ios.SetStdinTTY(true)
	ios.SetStderrTTY(true)
	return ios
}

// waitFor waits until the screen shows want count times, and returns the screen.
func (p *pty) waitFor(want string, count int) string {
	p.t.Helper()
	s, ok := p.WaitFor(want, count)
	if !ok {
		p.t.Fatalf("the terminal never showed %q %d times; it shows:\n%s", want, count, s)
	}
	return s
}

// typeLine types a line as a person would.
func (p *pty) typeLine(s string) {
	p.t.Helper()
	if err := p.Type(s); err != nil {
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
