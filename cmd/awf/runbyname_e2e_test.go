package main

import (
	"strings"
	"testing"
)

// What `awf list` shows can be run by that name: by file name and by the name a workflow
// declares; a name that is neither is still a clear "no such file".
func TestRunByTheNameListShows(t *testing.T) {
	e := newEnv(t)
	e.write("workflows/hello.yaml", "name: hello\nsteps:\n  - {name: a, type: shell, command: echo hello}\noutput: \"{{states.a.output}}\"\n")
	e.write(".awf/workflows/deploy-prod.yaml", "name: ship\nsteps:\n  - {name: a, type: shell, command: echo shipped}\noutput: \"{{states.a.output}}\"\n")
	list := e.mustRun(0, "list").stdout
	if !strings.Contains(list, "hello") || !strings.Contains(list, "ship") {
		t.Fatalf("awf list:\n%s", list)
	}
	for name, want := range map[string]string{"hello": "hello", "ship": "shipped", "deploy-prod": "shipped"} {
		if out := e.mustRun(0, "run", name, "--quiet").stdout; strings.TrimSpace(out) != want {
			t.Errorf("awf run %s printed %q, want %q", name, out, want)
		}
	}
	r := e.mustRun(1, "run", "nosuch")
	if !strings.Contains(r.stderr, "nosuch") {
		t.Errorf("awf run nosuch: %s", r.stderr)
	}
}
