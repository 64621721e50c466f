package webui

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
)

// runStats is what the runs list shows of a run beyond its summary: its tool calls, those
// refused, and the tools called.
type runStats struct {
	state.CallCounts
	// Err says why the run could not be loaded for them.
	Err string
}

// statsOf counts the tool calls of every step of run.
func statsOf(run *state.RunState) runStats { return runStats{CallCounts: run.CountCalls()} }

// statsCache keeps each run's stats while its files are unchanged, so that the runs list
// loads only the runs that changed since it was last shown.
type statsCache struct {
	mu   sync.Mutex
	runs map[string]cachedStats
}

type cachedStats struct {
	key   uint64
	stats runStats
}

func newStatsCache() *statsCache { return &statsCache{runs: map[string]cachedStats{}} }

// get returns sum's stats, loading the run when its files changed since it was last loaded
// (dir tells), or taking them from the store's index of finished runs.
func (c *statsCache) get(ctx context.Context, runs Runs, sum ports.RunSummary, dir dirIndex) runStats {
	if sum.Counts != nil { // from the store's index: no need to load the run
		return runStats{CallCounts: *sum.Counts}
	}
	key := dir.fingerprint(sum.ID + ".")
	c.mu.Lock()
	e, ok := c.runs[sum.ID]
	c.mu.Unlock()
	if ok && e.key == key {
		return e.stats
	}
	var st runStats
	run, err := runs.Load(ctx, sum.ID)
	if err != nil {
		st.Err = err.Error()
	} else {
		st = statsOf(run)
	}
	c.mu.Lock()
	c.runs[sum.ID] = cachedStats{key: key, stats: st}
	c.mu.Unlock()
	return st
}

// runRow is one run in the list.
type runRow struct {
	ports.RunSummary
	runStats
	Duration time.Duration
	// CutOff is true for a run whose state says running but that no process owns: it died
	// without recording its end.
	CutOff bool
	// Depth is how deep the run is nested under its parents in the list (0: not nested).
	Depth    int
	children []*runRow
}

// runFilter is the runs list's form.
type runFilter struct {
	Status, Workflow, Tool, Decision, Q string
}

func filterOf(r *http.Request) runFilter {
	q := r.URL.Query()
	return runFilter{Status: q.Get("status"), Workflow: q.Get("workflow"), Tool: q.Get("tool"), Decision: q.Get("decision"), Q: strings.TrimSpace(q.Get("q"))}
}

// match reports whether row passes every field of f; Q matches the run's id, workflow, status,
// error or a tool it called, ignoring case.
func (f runFilter) match(row *runRow) bool {
	switch {
	case f.Status != "" && string(row.Status) != f.Status:
		return false
	case f.Workflow != "" && row.Workflow != f.Workflow:
		return false
	case f.Tool != "" && !slices.Contains(row.Tools, f.Tool):
		return false
	case f.Decision == ports.DecisionDeny && row.Denials == 0:
		return false
	case f.Decision == ports.DecisionAllow && row.Allowed == 0:
		return false
	}
	if f.Q == "" {
		return true
	}
	q := strings.ToLower(f.Q)
	for _, s := range append([]string{row.ID, row.Workflow, string(row.Status), row.Error, row.Unreadable}, row.Tools...) {
		if strings.Contains(strings.ToLower(s), q) {
			return true
		}
	}
	return false
}

// runsView is the runs list page.
type runsView struct {
	Filter runFilter
	Rows   []*runRow
	Total  int
	// Running is true when a run shown is running (and has a process).
	Running   bool
	Statuses  []state.Status
	Workflows []string
	Tools     []string
}

// listRuns builds the runs list: newest first, each sub-workflow run under its parent (when
// the parent is shown too), filtered by f.
func (s *Server) listRuns(ctx context.Context, f runFilter) (*runsView, error) {
	sums, err := s.cfg.Runs.List(ctx)
	if err != nil {
		return nil, err
	}
	v := &runsView{Filter: f, Total: len(sums), Statuses: []state.Status{state.Running, state.Completed, state.Failed, state.Interrupted}}
	dir := readDirIndex(s.cfg.StateDir)
	byID := map[string]*runRow{}
	var shown []*runRow
	for _, sum := range sums {
		row := &runRow{RunSummary: sum, Duration: time.Duration(sum.DurationMs) * time.Millisecond}
		if sum.Unreadable == "" {
			row.runStats = s.stats.get(ctx, s.cfg.Runs, sum, dir)
		}
		if sum.Status == state.Running {
			_, owned := s.cfg.Runs.Owner(sum.ID)
			row.CutOff = !owned
			v.Running = v.Running || owned
		}
		addUnique(&v.Workflows, sum.Workflow)
		for _, t := range row.Tools {
			addUnique(&v.Tools, t)
		}
		if f.match(row) {
			byID[sum.ID] = row
			shown = append(shown, row)
		}
	}
	slices.Sort(v.Workflows)
	slices.Sort(v.Tools)
	var roots []*runRow
	for _, row := range shown {
		if p := byID[row.Parent]; p != nil && p != row {
			p.children = append(p.children, row)
			continue
		}
		roots = append(roots, row)
	}
	seen := map[*runRow]bool{}
	for _, row := range append(roots, shown...) { // shown: rows whose parents form a loop
		v.Rows = flatten(v.Rows, row, 0, seen)
	}
	return v, nil
}

// flatten appends row and, under it, its children oldest first (the order they were
// started in), each one level deeper. seen guards against parents that form a loop.
func flatten(out []*runRow, row *runRow, depth int, seen map[*runRow]bool) []*runRow {
	if seen[row] {
		return out
	}
	seen[row] = true
	row.Depth = depth
	out = append(out, row)
	for i := len(row.children) - 1; i >= 0; i-- { // List is newest first
		out = flatten(out, row.children[i], depth+1, seen)
	}
	return out
}

func addUnique(list *[]string, s string) {
	if s != "" && !slices.Contains(*list, s) {
		*list = append(*list, s)
	}
}

func (s *Server) runsPage(w http.ResponseWriter, r *http.Request) {
	v, err := s.listRuns(r.Context(), filterOf(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, "runs", "Runs", v)
}
