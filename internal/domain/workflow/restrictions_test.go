package workflow

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRestrictionsAnd(t *testing.T) {
	a := &Restrictions{Commands: []string{"ls", "git"}, Paths: []string{"src/**"}, Hosts: []string{"a.example"}}
	b := &Restrictions{Commands: []string{"git", "curl"}, Paths: []string{"src/pkg/*.go", "docs/**"}}
	got := a.And(b)
	want := &Restrictions{Commands: []string{"git"}, Paths: []string{"src/pkg/*.go"}, Hosts: []string{"a.example"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("And (-want +got):\n%s", diff)
	}
	if got := (*Restrictions)(nil).And(b); got != b {
		t.Errorf("nil.And(b) = %+v, want b", got)
	}
	if got := a.And(&Restrictions{Commands: []string{}}); len(got.Commands) != 0 || got.Commands == nil {
		t.Errorf("an empty list must stay empty (allow nothing): %+v", got.Commands)
	}
	if got := (&Restrictions{Exec: "allowlist"}).And(&Restrictions{}); got.Exec != "allowlist" {
		t.Errorf("exec: allowlist lost: %q", got.Exec)
	}
}

func TestValidateRestrictions(t *testing.T) {
	tests := []struct {
		name    string
		tool    ToolSpec
		sandbox *Policy
		errors  int
		warns   int
	}{
		{"shell: every kind applies", ToolSpec{Name: "shell", Builtin: true, Restrictions: &Restrictions{Commands: []string{"ls"}, Paths: []string{"src/**"}, Hosts: []string{"a"}}}, nil, 0, 0},
		{"read_file with commands and hosts", ToolSpec{Name: "read_file", Builtin: true, Restrictions: &Restrictions{Commands: []string{"ls"}, Hosts: []string{"a"}}}, nil, 0, 2},
		{"http_request with paths", ToolSpec{Name: "http_request", Builtin: true, Restrictions: &Restrictions{Paths: []string{"x"}}}, nil, 0, 1},
		{"unknown built-in", ToolSpec{Name: "nope", Builtin: true, Restrictions: &Restrictions{Paths: []string{"x"}}}, nil, 1, 0},
		{"use: entry", ToolSpec{Name: "u", Use: "x/y", Restrictions: &Restrictions{Commands: []string{"ls"}}}, nil, 0, 1},
		{"container", ToolSpec{Name: "t", Command: "ls", Restrictions: &Restrictions{Commands: []string{"ls"}, Hosts: []string{"a"}}}, &Policy{Backend: "container"}, 2, 0},
		{"container, no network", ToolSpec{Name: "t", Command: "ls", Restrictions: &Restrictions{Hosts: []string{}}}, &Policy{Backend: "container"}, 0, 0},
		{"interpreter", ToolSpec{Name: "t", Command: "ls", Restrictions: &Restrictions{Commands: []string{"/usr/bin/python3", "ls"}}}, nil, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := &validator{w: &Workflow{Sandbox: tc.sandbox}}
			v.restrictions("tools[0]", tc.tool)
			var errs, warns int
			for _, p := range v.probs {
				if p.Severity == SeverityWarning {
					warns++
				} else {
					errs++
				}
			}
			if errs != tc.errors || warns != tc.warns {
				t.Errorf("%d errors, %d warnings, want %d and %d: %v", errs, warns, tc.errors, tc.warns, v.probs)
			}
		})
	}
}
