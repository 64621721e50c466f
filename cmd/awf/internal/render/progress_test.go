package render

import (
	"strings"
	"testing"
	"time"

	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/internal/domain/ports"
)

func events() []ports.Event {
	return []ports.Event{
		{Kind: ports.StepStarted, Step: "build"},
		{Kind: ports.ToolFinished, Step: "build", Tool: "read_file", Meta: "read a.go", Status: "ok", Duration: 3 * time.Millisecond},
		{Kind: ports.StepFinished, Step: "build", Status: "completed", Duration: 1500 * time.Millisecond},
		{Kind: ports.StepStarted, Step: "test"},
		{Kind: ports.StepFinished, Step: "test", Status: "failed", Message: "exit status 1: boom\nmore", Duration: time.Second},
		{Kind: ports.Warning, Message: "input x undeclared"},
	}
}

func TestPlainLines(t *testing.T) {
	ios, _, out, errOut := iostreams.Test()
	p := New(ios, time.Now)
	for _, e := range events() {
		p.Emit(e)
	}
	p.Close()
	want := "build: started\n" +
		"  → read_file read a.go (3ms) ok\n" +
		"✓ build (1.5s)\n" +
		"test: started\n" +
		"✗ test failed: exit status 1: boom … (1s)\n" +
		"warning: input x undeclared\n"
	if got := errOut.String(); got != want {
		t.Errorf("plain output:\n%s\nwant:\n%s", got, want)
	}
	if out.Len() != 0 {
		t.Errorf("progress wrote to stdout: %q", out.String())
	}
}

func TestQuietKeepsFailuresAndWarnings(t *testing.T) {
	ios, _, _, errOut := iostreams.Test()
	ios.SetQuiet(true)
	p := New(ios, time.Now)
	for _, e := range events() {
		p.Emit(e)
	}
	p.Close()
	want := "✗ test failed: exit status 1: boom … (1s)\nwarning: input x undeclared\n"
	if got := errOut.String(); got != want {
		t.Errorf("quiet output = %q, want %q", got, want)
	}
}

func TestLiveLine(t *testing.T) {
	ios, _, _, errOut := iostreams.Test()
	ios.SetStderrTTY(true)
	now := time.Unix(0, 0)
	p := New(ios, func() time.Time { return now })
	p.Emit(ports.Event{Kind: ports.StepStarted, Step: "build"})
	now = now.Add(2 * time.Second)
	p.Emit(ports.Event{Kind: ports.ToolStarted, Step: "build", Tool: "shell"})
	if !strings.Contains(errOut.String(), "build 2s") {
		t.Errorf("live line lacks elapsed time: %q", errOut.String())
	}
	p.Emit(ports.Event{Kind: ports.StepFinished, Step: "build", Status: "completed", Duration: 2 * time.Second})
	p.Close()
	if !strings.Contains(errOut.String(), "\r\033[K✓ build (2s)\n") {
		t.Errorf("finished line does not clear the live line: %q", errOut.String())
	}
}

func TestToolLinesNameTheToolOnce(t *testing.T) {
	tests := []struct{ tool, meta, want string }{
		{"read_file", "read src/a.go", "agent: tool read_file read src/a.go\n"},
		{"search_code", `search_code pattern="x"`, "agent: tool search_code pattern=\"x\"\n"},
		{"run_tests", "run_tests", "agent: tool run_tests\n"},
		{"shell", "", "agent: tool shell\n"},
		{"runner", "run_tests", "agent: tool runner run_tests\n"},
	}
	for _, tc := range tests {
		ios, _, _, errOut := iostreams.Test()
		p := New(ios, time.Now)
		p.Emit(ports.Event{Kind: ports.ToolStarted, Step: "agent", Tool: tc.tool, Meta: tc.meta})
		p.Close()
		if got := errOut.String(); got != tc.want {
			t.Errorf("tool %q meta %q: %q, want %q", tc.tool, tc.meta, got, tc.want)
		}
	}
}

func TestFailedStepLineSaysTheStatusOnce(t *testing.T) {
	ios, _, _, errOut := iostreams.Test()
	p := New(ios, time.Now)
	p.Emit(ports.Event{Kind: ports.StepFinished, Step: "work", Status: "interrupted", Message: "interrupted: interrupt signal received", Duration: time.Second})
	p.Emit(ports.Event{Kind: ports.StepFinished, Step: "b", Status: "failed", Message: "exit status 1", Duration: time.Second})
	p.Close()
	want := "✗ work interrupted: interrupt signal received (1s)\n✗ b failed: exit status 1 (1s)\n"
	if got := errOut.String(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
