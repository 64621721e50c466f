package approver

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/internal/application/approval"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

type result struct {
	ans ports.Answer
	err error
}

func shellRequest(cmd string) ports.ApprovalRequest {
	args := map[string]any{"command": cmd}
	return ports.ApprovalRequest{RunID: "r1", Step: "build", CallID: "c1", Tool: "shell", Meta: "run " + cmd,
		Args: args, Canonical: tool.Canonical{Actions: []map[string]any{args}}, Reason: "tool shell asks for approval"}
}

func TestAnswersThroughAPseudoTerminal(t *testing.T) {
	tests := []struct {
		typed []string
		want  ports.Answer
	}{
		{[]string{"y"}, ports.AnswerYes},
		{[]string{"YES"}, ports.AnswerYes},
		{[]string{"n"}, ports.AnswerNo},
		{[]string{""}, ports.AnswerNo},
		{[]string{"always"}, ports.AnswerAlways},
		{[]string{"maybe", "a"}, ports.AnswerAlways},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.typed, ","), func(t *testing.T) {
			p := openPTY(t)
			a := New(p.streams(), Options{})
			done := approveAsync(t.Context(), a, shellRequest("make"))
			for i, line := range tc.typed {
				p.waitFor("Allow?", i+1)
				p.typeLine(line)
			}
			r := <-done
			if r.err != nil || r.ans != tc.want {
				t.Errorf("typed %q: Approve = %q, %v; want %q", tc.typed, r.ans, r.err, tc.want)
			}
			if len(tc.typed) > 1 {
				p.waitFor(`"maybe" is not an answer`, 1)
			}
		})
	}
}

func TestPromptShowsCallEscaped(t *testing.T) {
	p := openPTY(t)
	a := New(p.streams(), Options{})
	req := ports.ApprovalRequest{
		Tool: "write_file", Step: "implement", Meta: "write src/\x1b[2Jx.go",
		Args: map[string]any{"path": "src/\x1b[2Jx.go", "content": strings.Repeat("A", 1000), "mode": 420,
			"note": "left\u202eright"},
		Canonical: tool.Canonical{Actions: []map[string]any{{"path": "/work/src/\x1b[2Jx.go"}}},
		Timeout:   time.Minute,
	}
	done := approveAsync(t.Context(), a, req)
	screen := p.waitFor("Allow?", 1)
	p.typeLine("n")
	<-done
	for _, want := range []string{
		"approve a tool call: write_file (step implement)",
		`what:   write src/\x1b[2Jx.go`,
		`path: "src/\x1b[2Jx.go"`,
		`note: "left\u202eright"`,
		"mode: 420",
		`content: "` + strings.Repeat("A", MaxValue) + `… (700 more bytes)"`,
		`it would run:`,
		`- path: "/work/src/\x1b[2Jx.go"`,
		"(denied after 1m0s)",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("prompt lacks %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, "\x1b") || strings.Contains(screen, "\u202e") {
		t.Errorf("prompt contains a raw control character:\n%q", screen)
	}
}

func TestTimeoutThroughAPseudoTerminal(t *testing.T) {
	p := openPTY(t)
	a := New(p.streams(), Options{})
	req := shellRequest("make")
	req.Timeout = 50 * time.Millisecond
	r := <-approveAsync(t.Context(), a, req)
	if r.err != nil || r.ans != ports.AnswerTimeout {
		t.Fatalf("Approve = %q, %v; want timeout", r.ans, r.err)
	}
	screen := p.waitFor("timed out: denied", 1)
	if !strings.Contains(screen, "in this run (denied after 50ms): timed out: denied") {
		t.Errorf("the prompt line does not end with the timeout:\n%s", screen)
	}
	// A late answer is not taken for the next question.
	p.typeLine("y")
	waitRead(t, a)
	done := approveAsync(t.Context(), a, shellRequest("make install"))
	p.waitFor("Allow?", 2)
	p.typeLine("n")
	if r := <-done; r.ans != ports.AnswerNo {
		t.Errorf("after a late answer: Approve = %q, %v; want no", r.ans, r.err)
	}
}

// TestAlwaysThroughTheFlow runs the approval flow on the terminal: "always" approves the same
// canonical call again without asking, and nothing else.
func TestAlwaysThroughTheFlow(t *testing.T) {
	p := openPTY(t)
	flow, err := approval.New(approval.Config{
		Tools:    []workflow.ToolSpec{{Name: "shell", Approval: "prompt"}},
		Approver: New(p.streams(), Options{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	decide := func(cmd string) chan ports.ApprovalDecision {
		ch := make(chan ports.ApprovalDecision, 1)
		go func() {
			r := shellRequest(cmd)
			d, err := flow.Decide(t.Context(), approval.Request{RunID: "r1", Tool: "shell", Args: r.Args, Canonical: r.Canonical})
			if err != nil {
				t.Error(err)
			}
			ch <- d
		}()
		return ch
	}
	first := decide("git status")
	p.waitFor("Allow?", 1)
	p.typeLine("a")
	if d := <-first; !d.Allowed || d.Answer != ports.AnswerAlways {
		t.Fatalf("first call = %+v", d)
	}
	// Nothing is typed now: if the terminal were asked, this would wait for ever.
	if d := <-decide("git status"); !d.Allowed || d.Rule != "always" {
		t.Errorf("identical call = %+v, want allowed by the earlier always", d)
	}
	other := decide("git status --short")
	p.waitFor("Allow?", 2)
	p.typeLine("n")
	if d := <-other; d.Allowed {
		t.Errorf("different call = %+v, want asked and refused", d)
	}
}

func TestPromptsAreSerialised(t *testing.T) {
	p := openPTY(t)
	a := New(p.streams(), Options{})
	var wg sync.WaitGroup
	answers := make(chan ports.Answer, 2)
	for _, cmd := range []string{"one", "two"} {
		wg.Go(func() {
			ans, _ := a.Approve(t.Context(), shellRequest(cmd))
			answers <- ans
		})
	}
	screen := p.waitFor("Allow?", 1)
	if n := strings.Count(screen, "approve a tool call"); n != 1 {
		t.Errorf("%d prompts on screen at once:\n%s", n, screen)
	}
	p.typeLine("y")
	p.waitFor("Allow?", 2)
	p.typeLine("n")
	wg.Wait()
	close(answers)
	got := map[ports.Answer]bool{}
	for a := range answers {
		got[a] = true
	}
	if !got[ports.AnswerYes] || !got[ports.AnswerNo] {
		t.Errorf("answers = %v, want one yes and one no", got)
	}
}

func TestNoTerminalNeverBlocks(t *testing.T) {
	ios, in, _, errOut := iostreams.Test()
	in.WriteString("y\n")
	a := New(ios, Options{})
	if _, err := a.Approve(t.Context(), shellRequest("make")); !errors.Is(err, ports.ErrNoApprover) {
		t.Errorf("Approve without a terminal: %v, want ErrNoApprover", err)
	}
	if errOut.Len() != 0 {
		t.Errorf("printed %q without a terminal", errOut.String())
	}
	// A terminal, but prompts forbidden (--non-interactive, CI).
	p := openPTY(t)
	ios = p.streams()
	ios.SetNeverPrompt(true)
	if _, err := New(ios, Options{}).Approve(t.Context(), shellRequest("make")); !errors.Is(err, ports.ErrNoApprover) {
		t.Errorf("Approve with prompts forbidden: %v, want ErrNoApprover", err)
	}
}

func TestClosedInputFailsEveryPrompt(t *testing.T) {
	ios, _, _, _ := iostreams.Test() // empty input: closed at once
	ios.SetStdinTTY(true)
	ios.SetStderrTTY(true)
	a := New(ios, Options{})
	for i := range 2 {
		_, err := a.Approve(t.Context(), shellRequest("make"))
		if err == nil || !strings.Contains(err.Error(), "standard input closed") {
			t.Errorf("prompt %d on closed input: %v", i+1, err)
		}
	}
}

func TestCancelWhileAsking(t *testing.T) {
	p := openPTY(t)
	a := New(p.streams(), Options{})
	ctx, cancel := context.WithCancel(t.Context())
	done := approveAsync(ctx, a, shellRequest("make"))
	p.waitFor("Allow?", 1)
	cancel()
	if r := <-done; !errors.Is(r.err, context.Canceled) {
		t.Errorf("Approve after cancel = %q, %v", r.ans, r.err)
	}
}

func TestPauseAroundPrompt(t *testing.T) {
	ios, in, _, _ := iostreams.Test()
	ios.SetStdinTTY(true)
	ios.SetStderrTTY(true)
	in.WriteString("y\n")
	var events []string
	a := New(ios, Options{Pause: func() func() {
		events = append(events, "pause")
		return func() { events = append(events, "resume") }
	}})
	if ans, err := a.Approve(t.Context(), shellRequest("make")); err != nil || ans != ports.AnswerYes {
		t.Fatalf("Approve = %q, %v", ans, err)
	}
	if strings.Join(events, ",") != "pause,resume" {
		t.Errorf("events = %v", events)
	}
}

// waitRead waits until the terminal's reader holds a line.
func waitRead(t *testing.T, a *Terminal) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second) // a hang guard, not a timing assertion
	for len(a.lines) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the reader never read the typed line")
		}
		runtime.Gosched()
	}
}

func TestTypeAheadIsNotAnAnswer(t *testing.T) {
	p := openPTY(t)
	a := New(p.streams(), Options{})
	p.typeLine("y") // typed before any question
	p.waitFor("y", 1)
	done := approveAsync(t.Context(), a, shellRequest("rm -rf build"))
	p.waitFor("Allow?", 1)
	p.typeLine("n")
	if r := <-done; r.ans != ports.AnswerNo {
		t.Errorf("Approve after type-ahead = %q, %v; want the answer typed after the question", r.ans, r.err)
	}
}
