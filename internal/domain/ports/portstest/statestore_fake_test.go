package portstest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
)

func TestMemStateStore(t *testing.T) {
	StateStoreSuite(t, func(*testing.T) ports.StateStore { return NewMemStateStore() })
}

func TestMemStateStoreJournal(t *testing.T) {
	StepJournalSuite(t, func(*testing.T) JournalStore { return NewMemStateStore() })
}

// TestMemStateStoreAppendKeepsOtherSteps checks that AppendStep takes only the named step
// from the run, as the statestore's journal does, unless the run's outline changed.
func TestMemStateStoreAppendKeepsOtherSteps(t *testing.T) {
	ctx := t.Context()
	s := NewMemStateStore()
	run := journalRun("r")
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	run.States["plan"].Output = "changed, not saved"
	run.States["work"].Attempts = 5
	if err := s.AppendStep(ctx, run, "work"); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if got.States["plan"].Output != "the plan\n" || got.States["work"].Attempts != 5 {
		t.Errorf("after AppendStep(work): plan output %q, work attempts %d; want the saved plan and 5 attempts",
			got.States["plan"].Output, got.States["work"].Attempts)
	}
	run.Status = state.Failed
	if err := s.AppendStep(ctx, run, "work"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Load(ctx, "r"); got.Status != state.Failed || got.States["plan"].Output != run.States["plan"].Output {
		t.Errorf("after a head change, AppendStep saved status %s, plan output %q; want the whole run", got.Status, got.States["plan"].Output)
	}
	if n := s.StepAppends("r"); n != 2 {
		t.Errorf("StepAppends = %d, want 2", n)
	}
}

func TestMemStateStoreNormalizesDynamicValues(t *testing.T) {
	s := NewMemStateStore()
	n := 7
	run := &state.RunState{ID: "r", Inputs: map[string]any{
		"strings": []string{"a", "b"}, "int64": int64(3), "uint8": uint8(2), "float32": float32(1.5),
		"ints": map[string]int{"a": 1}, "pointer": &n, "nil": (*int)(nil), "array": [2]bool{true, false},
	}}
	if err := s.Save(t.Context(), run); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(t.Context(), "r")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"strings": []any{"a", "b"}, "int64": 3, "uint8": 2, "float32": 1.5,
		"ints": map[string]any{"a": 1}, "pointer": 7, "nil": nil, "array": []any{true, false},
	}
	if d := diffValues(got.Inputs, want); d != "" {
		t.Errorf("Load().Inputs: %s", d)
	}
}

func TestMemStateStoreHistory(t *testing.T) {
	s := NewMemStateStore()
	run := &state.RunState{ID: "r", Status: state.Running}
	for _, st := range []state.Status{state.Running, state.Completed} {
		run.Status = st
		if err := s.Save(t.Context(), run); err != nil {
			t.Fatal(err)
		}
	}
	h := s.History("r")
	if len(h) != 2 || h[0].Status != state.Running || h[1].Status != state.Completed {
		t.Fatalf("History() = %+v, want running then completed", h)
	}
	h[0].Status = state.Failed
	if again := s.History("r"); again[0].Status != state.Running {
		t.Errorf("changing History()'s result changed the store: %v", again[0].Status)
	}
}

func TestMemStateStoreFailSaves(t *testing.T) {
	s := NewMemStateStore()
	disk := errors.New("disk full")
	s.FailSaves(disk)
	if err := s.Save(t.Context(), &state.RunState{ID: "r"}); !errors.Is(err, disk) {
		t.Errorf("Save() = %v, want %v", err, disk)
	}
	s.FailSaves(nil)
	if err := s.Save(t.Context(), &state.RunState{ID: "r"}); err != nil {
		t.Errorf("Save() after FailSaves(nil) = %v", err)
	}
}

// TestCloneRunSharesNothing walks the suite's full run and its clone side by side: no map,
// slice or pointer may be shared, or the fake would hide aliasing bugs.
func TestCloneRunSharesNothing(t *testing.T) {
	run := fullRun("r")
	if shared := sharedRefs("run", reflect.ValueOf(run), reflect.ValueOf(CloneRun(run))); len(shared) > 0 {
		t.Errorf("CloneRun shares memory with its argument at %v", shared)
	}
}

func sharedRefs(path string, a, b reflect.Value) []string {
	if !a.IsValid() || !b.IsValid() {
		return nil
	}
	var out []string
	switch a.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice:
		if a.IsNil() || b.IsNil() {
			return nil
		}
		if a.Kind() != reflect.Slice || a.Len() > 0 {
			if a.UnsafePointer() == b.UnsafePointer() {
				out = append(out, path)
			}
		}
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !a.IsNil() && !b.IsNil() {
			out = append(out, sharedRefs(path, a.Elem(), b.Elem())...)
		}
	case reflect.Struct:
		for i := range a.NumField() {
			if a.Type().Field(i).IsExported() {
				out = append(out, sharedRefs(path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i))...)
			}
		}
	case reflect.Map:
		for it := a.MapRange(); it.Next(); {
			out = append(out, sharedRefs(path+"["+it.Key().String()+"]", it.Value(), b.MapIndex(it.Key()))...)
		}
	case reflect.Slice:
		for i := range min(a.Len(), b.Len()) {
			out = append(out, sharedRefs(path+"[]", a.Index(i), b.Index(i))...)
		}
	}
	return out
}
