package history

import (
	"bytes"
	"testing"
	"time"

	"github.com/awf-dev/awf/internal/domain/ports"
)

// TestTree checks the history's tree: children under their parent, oldest first, a child
// whose parent is not listed at the top level, and a limit that counts top-level runs.
func TestTree(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2026, 1, 1, 0, m, 0, 0, time.UTC) }
	runs := []ports.RunSummary{ // newest first, as the store lists them
		{ID: "p2", Workflow: "main", StartedAt: at(9)},
		{ID: "c3", Workflow: "child", StartedAt: at(8), Parent: "p1"},
		{ID: "g1", Workflow: "grand", StartedAt: at(7), Parent: "c1"},
		{ID: "c1", Workflow: "child", StartedAt: at(6), Parent: "p1"},
		{ID: "orphan", Workflow: "child", StartedAt: at(5), Parent: "gone"},
		{ID: "p1", Workflow: "main", StartedAt: at(4)},
	}
	var got bytes.Buffer
	for _, r := range Tree(runs, 0) {
		got.WriteString(r.Prefix + r.ID + "\n")
	}
	want := "p2\norphan\np1\n├─ c1\n│  └─ g1\n└─ c3\n"
	if got.String() != want {
		t.Errorf("Tree:\n%s\nwant:\n%s", got.String(), want)
	}
	if rows := Tree(runs, 2); len(rows) != 2 || rows[1].ID != "orphan" {
		t.Errorf("Tree(limit 2) = %+v, want p2 and orphan", rows)
	}
}
