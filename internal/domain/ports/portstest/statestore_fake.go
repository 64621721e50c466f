// Package portstest holds in-memory fakes of the ports, function adapters and conformance
// suites that the fakes and the real adapters both pass, so that tests of the application
// run against fakes that behave like the adapters they stand for.
package portstest

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"path"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
)

// MemStateStore is an in-memory [ports.StateStore]. It deep-copies on Save and on Load, so a
// test in which code keeps using a state it saved, or changes one it loaded, sees the same
// results as with the real store. Dynamic values (inputs, responses, tool arguments) are
// copied as a serialising store reads them back: maps become map[string]any, lists []any,
// integers int and floats float64. It keeps every saved version for History.
//
// The zero value is not usable: call NewMemStateStore. Safe for concurrent use.
type MemStateStore struct {
	mu      sync.Mutex
	runs    map[string]*state.RunState
	history map[string][]*state.RunState
	appends map[string]int
	locks   map[string]bool
	saveErr error
}

var (
	_ ports.StateStore  = (*MemStateStore)(nil)
	_ ports.StepJournal = (*MemStateStore)(nil)
)

// NewMemStateStore returns an empty store.
func NewMemStateStore() *MemStateStore {
	return &MemStateStore{runs: map[string]*state.RunState{}, history: map[string][]*state.RunState{},
		appends: map[string]int{}, locks: map[string]bool{}}
}

// MemOwner is the owner that MemStateStore names for every locked run: it has no processes.
var MemOwner = ports.RunOwner{PID: 1, Host: "memory"}

// Lock marks run id owned until unlock is called; a run already owned is a
// *ports.RunBusyError naming MemOwner.
func (m *MemStateStore) Lock(ctx context.Context, id string) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkMemID(id); err != nil {
		return nil, fmt.Errorf("lock run: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.locks[id] {
		return nil, &ports.RunBusyError{ID: id, Owner: MemOwner}
	}
	m.locks[id] = true
	var once sync.Once
	return func() {
		once.Do(func() {
			m.mu.Lock()
			delete(m.locks, id)
			m.mu.Unlock()
		})
	}, nil
}

// Owner reports MemOwner for a locked run.
func (m *MemStateStore) Owner(id string) (ports.RunOwner, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.locks[id] {
		return MemOwner, true
	}
	return ports.RunOwner{}, false
}

// Save stores a deep copy of run. An id that is empty or could name a path ("..", "a/b") is a
// fault.Usage error, as with the real store.
func (m *MemStateStore) Save(ctx context.Context, run *state.RunState) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if run == nil {
		return fault.New(fault.System, "save: nil run")
	}
	if err := checkMemID(run.ID); err != nil {
		return fmt.Errorf("save run: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.saveErr != nil {
		return fmt.Errorf("save run %s: %w", run.ID, m.saveErr)
	}
	c := CloneRun(run)
	m.runs[run.ID] = c
	m.history[run.ID] = append(m.history[run.ID], c)
	return nil
}

// AppendStep stores a version of run as the statestore's journal does: the last saved version
// with a deep copy of step's record and run's UpdatedAt, so that changes to other steps wait
// for the next Save. When there is no saved version, or anything but the step and UpdatedAt
// changed in the run's head or its list of steps, it stores a deep copy of run, as Save does.
// A step the run does not have is a fault.System error. It counts its calls (StepAppends).
func (m *MemStateStore) AppendStep(ctx context.Context, run *state.RunState, step string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if run == nil {
		return fault.New(fault.System, "append step: nil run")
	}
	if err := checkMemID(run.ID); err != nil {
		return fmt.Errorf("append step: %w", err)
	}
	if run.States[step] == nil {
		return fault.New(fault.System, "append step: run %s has no step %q", run.ID, step)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.saveErr != nil {
		return fmt.Errorf("save step %q of run %s: %w", step, run.ID, m.saveErr)
	}
	m.appends[run.ID]++
	prev := m.runs[run.ID]
	c := CloneRun(run)
	if prev != nil && sameOutline(prev, c) {
		st := c.States[step]
		c = CloneRun(prev)
		c.States[step], c.UpdatedAt = st, run.UpdatedAt
	}
	m.runs[run.ID] = c
	m.history[run.ID] = append(m.history[run.ID], c)
	return nil
}

// sameOutline reports whether two runs have the same head (all but steps and UpdatedAt),
// the same order and the same step names.
func sameOutline(a, b *state.RunState) bool {
	ha, hb := *a, *b
	ha.States, hb.States, ha.UpdatedAt, hb.UpdatedAt = nil, nil, time.Time{}, time.Time{}
	if !reflect.DeepEqual(ha, hb) || len(a.States) != len(b.States) {
		return false
	}
	for name := range a.States {
		if _, ok := b.States[name]; !ok {
			return false
		}
	}
	return true
}

// StepAppends returns how many times AppendStep was called for run id.
func (m *MemStateStore) StepAppends(id string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.appends[id]
}

// Load returns a deep copy of the last saved version of run id. An unknown id is a fault.Usage
// error.
func (m *MemStateStore) Load(ctx context.Context, id string) (*state.RunState, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkMemID(id); err != nil {
		return nil, fmt.Errorf("load run: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.runs[id]
	if !ok {
		return nil, fault.New(fault.Usage, "no run %q in memory", id)
	}
	return CloneRun(r), nil
}

// List returns a summary of every run, newest first by StartedAt (ties by id).
func (m *MemStateStore) List(ctx context.Context) ([]ports.RunSummary, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]ports.RunSummary, 0, len(m.runs))
	for _, r := range m.runs {
		out = append(out, ports.RunSummary{
			ID: r.ID, Workflow: r.Workflow, Status: r.Status, StartedAt: r.StartedAt,
			FinishedAt: clonePtr(r.FinishedAt), Error: r.Error, StateFile: m.Path(r.ID),
			Parent: r.Parent, DurationMs: r.Duration().Milliseconds(),
		})
	}
	slices.SortFunc(out, func(a, b ports.RunSummary) int {
		if c := b.StartedAt.Compare(a.StartedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out, nil
}

// IDs returns the id of every run, sorted.
func (m *MemStateStore) IDs(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.runs)), nil
}

// Path returns a made-up path, "memory/<id>.yaml": nothing is written there.
func (m *MemStateStore) Path(id string) string { return path.Join("memory", id+".yaml") }

// History returns deep copies of every version of run id saved so far, oldest first, so that
// a test can check what was saved at each step and tool-call boundary.
func (m *MemStateStore) History(id string) []*state.RunState {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*state.RunState, len(m.history[id]))
	for i, r := range m.history[id] {
		out[i] = CloneRun(r)
	}
	return out
}

// FailSaves makes every later Save and AppendStep return err (wrapped), as a full disk would;
// nil restores normal Saves.
func (m *MemStateStore) FailSaves(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.saveErr = err
}

// checkMemID rejects the ids every store must reject: empty, or able to name another path.
func checkMemID(id string) error {
	if id == "" || id == "." || id == ".." || strings.ContainsAny(id, `/\`) || strings.HasPrefix(id, ".") {
		return fault.New(fault.Usage, "invalid run id %q", id)
	}
	return nil
}

// CloneRun returns a deep copy of r, with dynamic values normalised as MemStateStore
// describes. Nil gives nil.
func CloneRun(r *state.RunState) *state.RunState {
	if r == nil {
		return nil
	}
	c := *r
	c.Inputs = cloneMap(r.Inputs)
	c.FinishedAt = clonePtr(r.FinishedAt)
	c.Segments = slices.Clone(r.Segments)
	for i := range c.Segments {
		c.Segments[i].EndedAt = clonePtr(r.Segments[i].EndedAt)
	}
	if r.States != nil {
		c.States = make(map[string]*state.StepState, len(r.States))
		for k, s := range r.States {
			c.States[k] = cloneStep(s)
		}
	}
	c.Order = slices.Clone(r.Order)
	c.Sources = maps.Clone(r.Sources)
	if r.Overrides != nil {
		c.Overrides = make([]state.Override, len(r.Overrides))
		for i, o := range r.Overrides {
			o.Changed = slices.Clone(o.Changed)
			c.Overrides[i] = o
		}
	}
	return &c
}

func cloneStep(s *state.StepState) *state.StepState {
	if s == nil {
		return nil
	}
	c := *s
	c.Response = cloneValue(s.Response)
	c.ExitCode = clonePtr(s.ExitCode)
	c.Command = cloneArgv(s.Command)
	c.StartedAt = clonePtr(s.StartedAt)
	c.FinishedAt = clonePtr(s.FinishedAt)
	if s.ToolCalls != nil {
		c.ToolCalls = make([]state.ToolCallRecord, len(s.ToolCalls))
		for i, tc := range s.ToolCalls {
			c.ToolCalls[i] = tc
			c.ToolCalls[i].Arguments = cloneMap(tc.Arguments)
			c.ToolCalls[i].Result = clonePtr(tc.Result)
			if r := c.ToolCalls[i].Result; r != nil {
				r.Command, r.Changes = cloneArgv(r.Command), slices.Clone(r.Changes)
			}
			c.ToolCalls[i].Intent = cloneMap(tc.Intent)
			c.ToolCalls[i].Recovery = clonePtr(tc.Recovery)
		}
	}
	c.ToolStats = clonePtr(s.ToolStats)
	c.Agent = clonePtr(s.Agent)
	if s.Turns != nil {
		c.Turns = make([]state.Turn, len(s.Turns))
		for i, t := range s.Turns {
			t.Usage, t.Calls = clonePtr(t.Usage), slices.Clone(t.Calls)
			c.Turns[i] = t
		}
	}
	c.Tokens = clonePtr(s.Tokens)
	if s.Conversation != nil {
		conv := *s.Conversation
		if conv.Messages != nil {
			conv.Messages = make([]state.Message, len(s.Conversation.Messages))
			for i, msg := range s.Conversation.Messages {
				msg.ToolCalls = slices.Clone(msg.ToolCalls)
				msg.Thinking = slices.Clone(msg.Thinking)
				conv.Messages[i] = msg
			}
		}
		c.Conversation = &conv
	}
	c.Vars = maps.Clone(s.Vars)
	return &c
}

// cloneArgv copies a list of argv.
func cloneArgv(a [][]string) [][]string {
	if a == nil {
		return nil
	}
	c := make([][]string, len(a))
	for i, w := range a {
		c[i] = slices.Clone(w)
	}
	return c
}

// clonePtr copies the value p points to; the value must hold no references.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = cloneValue(v)
	}
	return c
}

// cloneValue deep-copies a dynamic value into the types a YAML or JSON round trip gives.
// Structs other than time.Time are copied by value.
func cloneValue(v any) any {
	switch x := v.(type) {
	case nil, bool, string, int, float64, time.Time:
		return x
	case map[string]any:
		return cloneMap(x)
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = cloneValue(e)
		}
		return c
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return int(rv.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if u := rv.Uint(); u <= math.MaxInt {
			return int(u)
		}
		return rv.Uint()
	case reflect.Float32, reflect.Float64:
		return rv.Float()
	case reflect.Bool:
		return rv.Bool()
	case reflect.String:
		return rv.String()
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return nil
		}
		return cloneValue(rv.Elem().Interface())
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return nil
		}
		c := make([]any, rv.Len())
		for i := range c {
			c[i] = cloneValue(rv.Index(i).Interface())
		}
		return c
	case reflect.Map:
		if rv.IsNil() {
			return nil
		}
		c := make(map[string]any, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			c[fmt.Sprint(it.Key().Interface())] = cloneValue(it.Value().Interface())
		}
		return c
	}
	return v
}
