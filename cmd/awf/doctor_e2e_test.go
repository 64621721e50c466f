package main

import (
	"strings"
	"testing"
)

// awf doctor says what matters: the layers, and what the missing ones mean for a run; nothing
// about programs awf does not use (it said "bubblewrap: not installed (not needed)").
func TestDoctorSaysOnlyWhatMatters(t *testing.T) {
	e := newEnv(t)
	out := e.mustRun(0, "doctor").stdout
	if strings.Contains(out, "bubblewrap") {
		t.Errorf("doctor mentions bubblewrap, which awf does not use:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	missing := strings.Contains(out, " NO ")
	switch {
	case missing && !strings.HasPrefix(last, "missing: "):
		t.Errorf("a layer is missing but the last line does not say what that means: %q", last)
	case !missing && !strings.HasPrefix(last, "every layer is available"):
		t.Errorf("every layer is there but the last line is %q", last)
	}
}
