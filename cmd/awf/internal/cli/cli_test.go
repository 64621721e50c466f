package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

func TestExitCode(t *testing.T) {
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want int
	}{
		{"nil", t.Context(), nil, 0},
		{"usage", t.Context(), fault.New(fault.Usage, "x"), 1},
		{"invalid", t.Context(), workflow.Problems{{Msg: "x"}}, 2},
		{"execution", t.Context(), fault.New(fault.Execution, "x"), 3},
		{"system", t.Context(), fault.New(fault.System, "x"), 4},
		{"unclassified", t.Context(), errors.New("x"), 4},
		{"denied", t.Context(), fault.New(fault.Denied, "x"), 5},
		{"interrupted", canceled, fault.New(fault.Execution, "x"), 130},
		{"canceled error", t.Context(), context.Canceled, 130},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := exitCode(tc.ctx, tc.err); got != tc.want {
				t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.want)
			}
		})
	}
}

// TestReferenceIsCurrent keeps docs/cli-reference.md in step with the command tree.
func TestReferenceIsCurrent(t *testing.T) {
	f := testFactory()
	var buf bytes.Buffer
	WriteReference(&buf, NewCmdRoot(f))
	path := filepath.Join("..", "..", "..", "..", "docs", "cli-reference.md")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (regenerate with UPDATE_GOLDEN=1 go test ./cmd/awf/internal/cli)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("%s is stale: regenerate with UPDATE_GOLDEN=1 go test ./cmd/awf/internal/cli", path)
	}
}
