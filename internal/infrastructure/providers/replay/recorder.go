package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
)

// Recorder records the model turns of a live run into a cassette, writing the file again
// (atomically) after every turn, so that an interrupted run leaves a usable cassette of what
// it did. The file is not touched before the first turn. Safe for concurrent use.
type Recorder struct {
	path string

	mu  sync.Mutex
	c   Cassette
	enc encoder
}

// NewRecorder records into the cassette at path, replacing it.
func NewRecorder(path string) *Recorder {
	return &Recorder{path: path, c: Cassette{Version: Version,
		Note: "recorded by awf run --record; replay with awf run --replay FILE"}}
}

// Wrap returns a provider that asks p and records each successful turn as a turn of the
// workflow's step. Failed turns are not recorded: the provider's error is returned as is.
func (r *Recorder) Wrap(workflow, step string, p ports.Provider) ports.Provider {
	return &stepRecorder{r: r, workflow: workflow, step: step, p: p}
}

// SetNote replaces the cassette's note, which says how it was made.
func (r *Recorder) SetNote(note string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.c.Note = note
}

// Interactions returns how many turns were recorded.
func (r *Recorder) Interactions() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.c.Interactions)
}

// Save writes the cassette.
func (r *Recorder) Save() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.saveLocked()
}

func (r *Recorder) saveLocked() error {
	data, err := r.enc.encode(&r.c)
	if err == nil {
		err = write(r.path, data)
	}
	if err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("record: write cassette %s: %w", r.path, err))
	}
	return nil
}

type stepRecorder struct {
	r              *Recorder
	workflow, step string
	p              ports.Provider
}

// Chat asks the wrapped provider and records the turn. A cassette that cannot be written is
// an error of kind fault.System: the user asked for the recording.
func (s *stepRecorder) Chat(ctx context.Context, req ports.ChatRequest) (ports.ChatResponse, error) {
	resp, err := s.p.Chat(ctx, req)
	if err != nil {
		return resp, err
	}
	in := Interaction{
		Workflow: s.workflow,
		Step:     s.step,
		Request:  requestOf(req),
		Response: Response{
			Content:      resp.Content,
			ToolCalls:    slices.Clone(resp.ToolCalls),
			FinishReason: resp.FinishReason,
			Refusal:      resp.Refusal,
			Thinking:     slices.Clone(resp.Thinking),
			Model:        resp.Model,
		},
	}
	if resp.Usage != (state.Tokens{}) {
		u := resp.Usage
		in.Response.Usage = &u
	}
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	s.r.c.Interactions = append(s.r.c.Interactions, in)
	if err := s.r.saveLocked(); err != nil {
		return ports.ChatResponse{}, err
	}
	return resp, nil
}

// requestOf is what a cassette keeps of a request.
func requestOf(req ports.ChatRequest) Request {
	r := Request{Model: req.Model, System: req.System, Messages: slices.Clone(req.Messages)}
	for _, t := range req.Tools {
		r.Tools = append(r.Tools, t.Name)
	}
	return r
}

// sameJSON reports whether two JSON texts hold the same value; text that is not JSON is
// compared as it is.
func sameJSON(a, b string) bool {
	if a == b {
		return true
	}
	var va, vb any
	if json.Unmarshal([]byte(a), &va) != nil || json.Unmarshal([]byte(b), &vb) != nil {
		return false
	}
	ja, err1 := json.Marshal(va)
	jb, err2 := json.Marshal(vb)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}
