package portstest

import (
	"slices"
	"sync"

	"github.com/awf-dev/awf/internal/domain/ports"
)

// EventRecorder is a [ports.Events] that keeps every event in the order emitted. The zero
// value is ready to use; it is safe for concurrent use, as parallel steps emit concurrently.
type EventRecorder struct {
	mu     sync.Mutex
	events []ports.Event
}

var _ ports.Events = (*EventRecorder)(nil)

// Emit records e.
func (r *EventRecorder) Emit(e ports.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

// Events returns a copy of the events recorded so far.
func (r *EventRecorder) Events() []ports.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// Kinds returns the kinds of the events recorded so far, in order: the usual thing to compare.
func (r *EventRecorder) Kinds() []ports.EventKind {
	r.mu.Lock()
	defer r.mu.Unlock()
	kinds := make([]ports.EventKind, len(r.events))
	for i, e := range r.events {
		kinds[i] = e.Kind
	}
	return kinds
}

// Reset forgets the events recorded so far.
func (r *EventRecorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = nil
}
