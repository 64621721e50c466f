package portstest

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/awf-dev/awf/internal/domain/ports"
)

func TestEventRecorder(t *testing.T) {
	var r EventRecorder
	r.Emit(ports.Event{Kind: ports.RunStarted, RunID: "r"})
	r.Emit(ports.Event{Kind: ports.StepStarted, Step: "s"})
	if got, want := r.Kinds(), []ports.EventKind{ports.RunStarted, ports.StepStarted}; !slices.Equal(got, want) {
		t.Errorf("Kinds() = %v, want %v", got, want)
	}
	events := r.Events()
	events[0].RunID = "changed"
	if got := r.Events()[0].RunID; got != "r" {
		t.Errorf("changing Events()'s result changed the recorder: RunID %q", got)
	}
	r.Reset()
	if n := len(r.Events()); n != 0 {
		t.Errorf("Events() after Reset has %d events", n)
	}
}

func TestEventRecorderConcurrent(t *testing.T) {
	var r EventRecorder
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 50 {
				r.Emit(ports.Event{Kind: ports.ToolFinished, Step: fmt.Sprint(w), Attempt: i})
				_ = r.Events()
			}
		})
	}
	wg.Wait()
	perStep := map[string][]int{}
	for _, e := range r.Events() {
		perStep[e.Step] = append(perStep[e.Step], e.Attempt)
	}
	for w := range 4 {
		if got := perStep[fmt.Sprint(w)]; len(got) != 50 || !slices.IsSorted(got) {
			t.Errorf("events of emitter %d = %v, want 0..49 in order", w, got)
		}
	}
}
