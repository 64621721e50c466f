package approver

import (
	"errors"
	"strings"
	"testing"

	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/internal/domain/ports"
)

// TestSettleThroughAPseudoTerminal: the person chooses what to do with a call a crash cut off:
// run it again, skip it or mark it done; anything else, an empty line included, is asked again.
func TestSettleThroughAPseudoTerminal(t *testing.T) {
	tests := []struct {
		typed []string
		want  ports.Settlement
	}{
		{[]string{"r"}, ports.SettleRerun},
		{[]string{"skip"}, ports.SettleSkip},
		{[]string{"", "D"}, ports.SettleDone},
	}
	req := ports.SettleRequest{RunID: "r1", Step: "notify", CallID: "call_3", Tool: "send_mail", Meta: "send_mail to=\"bob\"",
		Args: map[string]any{"to": "bob\x1b[2J"}}
	for _, tc := range tests {
		t.Run(strings.Join(tc.typed, ","), func(t *testing.T) {
			p := openPTY(t)
			a := New(p.streams(), Options{})
			type settled struct {
				s   ports.Settlement
				err error
			}
			done := make(chan settled, 1)
			go func() {
				s, err := a.Settle(t.Context(), req)
				done <- settled{s, err}
			}()
			for i, line := range tc.typed {
				p.waitFor("mark it [d]one", i+1)
				p.typeLine(line)
			}
			r := <-done
			if r.err != nil || r.s != tc.want {
				t.Errorf("typed %q: Settle = %q, %v; want %q", tc.typed, r.s, r.err, tc.want)
			}
			p.waitFor("a tool call was in flight (about to run, or running) when the run stopped: send_mail (step notify, call call_3)", 1)
			p.waitFor(`to: "bob\x1b[2J"`, 1)
		})
	}
}

func TestSettleWithoutATerminalNeverBlocks(t *testing.T) {
	ios, in, _, errOut := iostreams.Test()
	in.WriteString("r\n")
	if _, err := New(ios, Options{}).Settle(t.Context(), ports.SettleRequest{Tool: "send_mail"}); !errors.Is(err, ports.ErrNoApprover) {
		t.Errorf("Settle without a terminal: %v, want ErrNoApprover", err)
	}
	if errOut.Len() != 0 {
		t.Errorf("printed %q without a terminal", errOut.String())
	}
}
