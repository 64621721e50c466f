package iostreams

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestPrompt(t *testing.T) {
	ios, in, _, errOut := Test()
	if _, err := ios.Prompt("x? "); !errors.Is(err, ErrCannotPrompt) {
		t.Fatalf("Prompt without a terminal: err = %v, want ErrCannotPrompt", err)
	}
	ios.SetStdinTTY(true)
	ios.SetStderrTTY(true)
	in.WriteString("first\r\nsecond")
	for _, want := range []string{"first", "second"} {
		got, err := ios.Prompt("name: ")
		if err != nil || got != want {
			t.Errorf("Prompt = %q, %v; want %q", got, err, want)
		}
	}
	if errOut.String() != "name: name: " {
		t.Errorf("prompt labels = %q", errOut.String())
	}
	ios.SetNeverPrompt(true)
	if ios.CanPrompt() {
		t.Error("CanPrompt with --non-interactive = true")
	}
}

func TestProgressAndColor(t *testing.T) {
	ios, _, _, _ := Test()
	if ios.ShowProgress() || ios.ColorEnabled() {
		t.Error("progress or colour on a non-terminal")
	}
	ios.SetStderrTTY(true)
	if !ios.ShowProgress() {
		t.Error("no progress on a terminal")
	}
	ios.SetQuiet(true)
	if ios.ShowProgress() {
		t.Error("progress with --quiet")
	}
}

// failingWriter fails every write, as a pipe whose reader went away does.
type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	f.n++
	return 0, errors.New("broken pipe")
}

func TestDropWriterDropsAfterFailure(t *testing.T) {
	w := &failingWriter{}
	ios := &IOStreams{Out: &dropWriter{w: w, name: "stdout"}, ErrOut: &bytes.Buffer{}}
	for range 3 {
		if n, err := fmt.Fprint(ios.Out, "progress"); n != len("progress") || err != nil {
			t.Fatalf("write = %d, %v; want it to report success", n, err)
		}
	}
	if w.n != 1 {
		t.Errorf("writes tried = %d, want 1: later ones are dropped", w.n)
	}
	err := ios.WriteErrors()
	if err == nil || !strings.Contains(err.Error(), "stdout") || !strings.Contains(err.Error(), "broken pipe") {
		t.Errorf("WriteErrors = %v, want the stdout failure", err)
	}
	if err := (&IOStreams{Out: &dropWriter{w: &bytes.Buffer{}}}).WriteErrors(); err != nil {
		t.Errorf("WriteErrors without a failure = %v", err)
	}
}

// NO_COLOR wins over everything, FORCE_COLOR over CLICOLOR_FORCE, and either forces colour
// without a terminal; FORCE_COLOR=0 and CLICOLOR=0 turn it off.
func TestColorFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want Color
	}{
		{nil, ColorAuto},
		{map[string]string{"NO_COLOR": "1", "FORCE_COLOR": "1", "CLICOLOR_FORCE": "1"}, ColorNever},
		{map[string]string{"NO_COLOR": "", "FORCE_COLOR": "1"}, ColorAlways},
		{map[string]string{"FORCE_COLOR": "3", "TERM": "dumb"}, ColorAlways},
		{map[string]string{"FORCE_COLOR": "0", "CLICOLOR_FORCE": "1"}, ColorNever},
		{map[string]string{"FORCE_COLOR": "false"}, ColorNever},
		{map[string]string{"CLICOLOR_FORCE": "1", "CLICOLOR": "0"}, ColorAlways},
		{map[string]string{"CLICOLOR_FORCE": "0"}, ColorAuto},
		{map[string]string{"CLICOLOR": "0"}, ColorNever},
		{map[string]string{"TERM": "dumb"}, ColorNever},
	} {
		if got := ColorFromEnv(func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("ColorFromEnv(%v) = %d, want %d", tc.env, got, tc.want)
		}
	}
	ios, _, _, _ := Test()
	ios.color = ColorAlways
	if !ios.ColorEnabled() {
		t.Error("forced colour is off without a terminal")
	}
	ios.SetStderrTTY(true)
	ios.color = ColorNever
	if ios.ColorEnabled() {
		t.Error("NO_COLOR colour is on at a terminal")
	}
}
