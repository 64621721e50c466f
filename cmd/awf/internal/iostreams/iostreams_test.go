package iostreams

import (
	"errors"
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
