package toolwire

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/tools/command"
	"github.com/awf-dev/awf/internal/infrastructure/tools/file"
	"github.com/awf-dev/awf/internal/infrastructure/tools/httptool"
)

func TestWithin(t *testing.T) {
	tests := []struct {
		glob    string
		allowed []string
		want    bool
	}{
		{"src/**", nil, true},
		{"/etc/**", nil, false},
		{"../**", nil, false},
		{"src/**", []string{"src/**"}, true},
		{"src/pkg/*.go", []string{"src/**"}, true},
		{"docs/**", []string{"src/**"}, false},
		{"src/**", []string{"src/**/*.go"}, false}, // not a whole tree: cannot prove containment
		{"**", []string{"src/**"}, false},
	}
	for _, tc := range tests {
		if got := within("/w", tc.glob, tc.allowed); got != tc.want {
			t.Errorf("within(%q, %v) = %v, want %v", tc.glob, tc.allowed, got, tc.want)
		}
	}
}

func TestRestrictedBuiltins(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "src"), 0o755)
	os.WriteFile(filepath.Join(dir, "src", "a.go"), []byte("package a\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("s"), 0o644)
	build := Restricted(file.Policy{WorkDir: dir}, httptool.Policy{Hosts: []string{"api.example.com"}}, command.Config{})

	rf, err := build(workflow.ToolSpec{Name: "read_file", Builtin: true, Restrictions: &workflow.Restrictions{Paths: []string{"src/**"}}})
	if err != nil || rf == nil {
		t.Fatalf("restricted read_file: %v, %v", rf, err)
	}
	if res := rf.Execute(context.Background(), tool.Invocation{Args: map[string]any{"path": "src/a.go"}}); !res.Succeeded() {
		t.Errorf("read inside the restriction: %+v", res)
	}
	if res := rf.Execute(context.Background(), tool.Invocation{Args: map[string]any{"path": "secret.txt"}}); res.Succeeded() {
		t.Errorf("read outside the restriction succeeded: %+v", res)
	}
	_, err = build(workflow.ToolSpec{Name: "write_file", Builtin: true, Restrictions: &workflow.Restrictions{Paths: []string{"/etc/**"}}})
	if err == nil || !strings.Contains(err.Error(), "only narrow") {
		t.Errorf("widening restriction: err = %v", err)
	}
	_, err = build(workflow.ToolSpec{Name: "http_request", Builtin: true, Restrictions: &workflow.Restrictions{Hosts: []string{"evil.example"}}})
	if err == nil {
		t.Error("a host outside sandbox.hosts was accepted")
	}
	if tl, err := build(workflow.ToolSpec{Name: "read_file", Builtin: true}); tl != nil || err != nil {
		t.Errorf("no restrictions: %v, %v; want the plain built-in (nil, nil)", tl, err)
	}
}
