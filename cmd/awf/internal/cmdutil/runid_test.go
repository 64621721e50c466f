package cmdutil

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/ports/portstest"
	"github.com/awf-dev/awf/internal/domain/state"
)

// listCounter counts the calls of List, which reads every run's state.
type listCounter struct {
	ports.StateStore
	lists int
}

func (c *listCounter) List(ctx context.Context) ([]ports.RunSummary, error) {
	c.lists++
	return c.StateStore.List(ctx)
}

// TestRunID resolves full ids, unique prefixes, ambiguous prefixes and unknown ids; only an
// ambiguous prefix reads the runs' states (to describe the candidates).
func TestRunID(t *testing.T) {
	ctx := t.Context()
	mem := portstest.NewMemStateStore()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, id := range []string{"abc123", "abd456", "xyz789"} {
		run := &state.RunState{ID: id, Workflow: "wf", Status: state.Completed, StartedAt: start.Add(time.Duration(i) * time.Hour)}
		if err := mem.Save(ctx, run); err != nil {
			t.Fatal(err)
		}
	}
	store := &listCounter{StateStore: mem}
	for _, tc := range []struct{ arg, want string }{
		{"abc123", "abc123"}, {"abc", "abc123"}, {"x", "xyz789"}, {"nope", "nope"},
	} {
		if got, err := RunID(ctx, store, tc.arg); err != nil || got != tc.want {
			t.Errorf("RunID(%q) = %q, %v; want %q", tc.arg, got, err, tc.want)
		}
	}
	if store.lists != 0 {
		t.Errorf("resolving ids and unique prefixes read every run's state %d times", store.lists)
	}
	_, err := RunID(ctx, store, "ab")
	if fault.KindOf(err) != fault.Usage || !strings.Contains(err.Error(), "abc123") || !strings.Contains(err.Error(), "abd456") ||
		strings.Contains(err.Error(), "xyz789") {
		t.Errorf("RunID(ambiguous) = %v, want a usage error naming both candidates", err)
	}
	if _, err := RunID(ctx, store, ""); fault.KindOf(err) != fault.Usage {
		t.Errorf("RunID(\"\") = %v, want a usage error", err)
	}
}
