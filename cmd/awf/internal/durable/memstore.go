package durable

import (
	"context"
	"maps"
	"slices"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
)

// memStore is the state store of a run inside its workflow: the run's state lives in the
// workflow (rebuilt by replay, read by the state query), so a save keeps it and writes
// nothing. Runs are owned by their workflow execution, so locks always succeed.
type memStore struct {
	runs map[string]*state.RunState
}

var _ ports.StateStore = (*memStore)(nil)

func (m *memStore) Save(_ context.Context, run *state.RunState) error {
	m.runs[run.ID] = run
	return nil
}

func (m *memStore) Load(_ context.Context, id string) (*state.RunState, error) {
	if st, ok := m.runs[id]; ok {
		return st, nil
	}
	return nil, fault.New(fault.Usage, "no run %s in this workflow", id)
}

func (m *memStore) List(context.Context) ([]ports.RunSummary, error) { return nil, nil }

func (m *memStore) IDs(context.Context) ([]string, error) { return nil, nil }

// Path names the run on the Temporal server.
func (m *memStore) Path(id string) string { return "temporal:" + id }

func (m *memStore) Lock(context.Context, string) (func(), error) { return func() {}, nil }

func (m *memStore) Owner(string) (ports.RunOwner, bool) { return ports.RunOwner{}, false }

// children are the runs other than root, in the order of their ids (a replay gives the same).
func (m *memStore) children(root string) []*state.RunState {
	var out []*state.RunState
	for _, id := range slices.Sorted(maps.Keys(m.runs)) {
		if id != root {
			out = append(out, m.runs[id])
		}
	}
	return out
}
