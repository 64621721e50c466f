package statestore

import (
	"strings"
	"testing"
	"time"

	"github.com/awf-dev/awf/internal/domain/state"
)

// TestDirSyncOnlyWhenNeeded checks that saves of a running run skip the directory sync unless
// the file is new, outputs moved, or the run ended.
func TestDirSyncOnlyWhenNeeded(t *testing.T) {
	s, err := New(t.TempDir(), WithOutputThreshold(16))
	if err != nil {
		t.Fatal(err)
	}
	run := &state.RunState{ID: "r1", Workflow: "w", Status: state.Running, StartedAt: time.Unix(0, 0)}
	steps := []struct {
		mutate func()
		want   int64
	}{
		{func() {}, 1}, // new file
		{func() { run.Step("a").Status = state.Completed }, 1},
		{func() { run.Step("b").Output = strings.Repeat("x", 100) }, 2}, // an output file written
		{func() { run.Step("c").Status = state.Completed }, 2},
		{func() { run.Step("b").Output = "small" }, 3}, // an output file to delete
		{func() { run.Status = state.Completed }, 4},   // the end
	}
	for i, st := range steps {
		st.mutate()
		if err := s.Save(t.Context(), run); err != nil {
			t.Fatal(err)
		}
		if got := s.dirSyncs.Load(); got != st.want {
			t.Errorf("after save %d: %d directory syncs, want %d", i+1, got, st.want)
		}
	}
}
