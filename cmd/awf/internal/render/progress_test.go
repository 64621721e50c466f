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
