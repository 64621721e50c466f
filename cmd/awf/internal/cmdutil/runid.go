package cmdutil

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
)

// RunID returns the id of the run that id names in store: a run's full id, or a prefix of
// exactly one run's id (`awf audit` and `awf history` print the first 8 characters). A prefix
// of several is a usage error listing them; an id no run has is returned as given, for Load
// to report as unknown. Only the ids are looked at (store.IDs), and the summaries of the runs
// a prefix is ambiguous between: no command that names a run pays for every run kept.
func RunID(ctx context.Context, store ports.StateStore, id string) (string, error) {
	if id == "" {
		return "", fault.New(fault.Usage, "empty run id")
	}
	ids, err := store.IDs(ctx)
	if err != nil {
		return "", err
	}
	var matches []string
	for _, r := range ids {
		if r == id {
			return id, nil
		}
		if strings.HasPrefix(r, id) {
			matches = append(matches, r)
		}
	}
	switch len(matches) {
	case 0:
		return id, nil
	case 1:
		return matches[0], nil
	}
	runs, err := store.List(ctx)
	if err != nil {
		return "", err
	}
	var candidates []string
	for _, r := range runs { // newest first
		if slices.Contains(matches, r.ID) {
			candidates = append(candidates, describeRun(r))
		}
	}
	return "", AmbiguousRun(id, candidates)
}

// AmbiguousRun is the usage error for a run id prefix that several runs share: candidates
// describe them, one per line.
func AmbiguousRun(prefix string, candidates []string) error {
	return fault.New(fault.Usage, "run id %q is ambiguous: it starts %d runs; give more of the id:\n  %s",
		prefix, len(candidates), strings.Join(candidates, "\n  "))
}

// describeRun is one candidate of AmbiguousRun: id, workflow, status and start time.
func describeRun(r ports.RunSummary) string {
	return fmt.Sprintf("%s  %s  %s  %s", r.ID, r.Workflow, r.Status, r.StartedAt.Local().Format("2006-01-02 15:04:05"))
}
