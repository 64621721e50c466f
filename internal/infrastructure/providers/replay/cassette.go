// Package replay plays recorded model turns (cassettes), so that a workflow's agent steps run
// offline and deterministically while their tools run for real, and records cassettes from
// live runs. A Player checks every request against the recorded one and refuses, naming the
// first difference, a run that goes another way; a Recorder wraps any provider. Both give one
// ports.Provider per agent step.
package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"

	"github.com/goccy/go-yaml"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/yamlnode"
)

// Version is the cassette format this package writes and reads.
const Version = 1

// Cassette is a recorded sequence of model turns: for each agent step, in order, the request
// awf sent and the reply it got.
type Cassette struct {
	Version int `yaml:"version" json:"version"`
	// Note says how the cassette was made; awf does not read it.
	Note         string        `yaml:"note,omitempty" json:"note,omitempty"`
	Interactions []Interaction `yaml:"interactions" json:"interactions"`
}

// Interaction is one model turn of one step. Workflow and Step say whose turn it is: each
// step replays its own turns in order, so steps running in parallel do not disturb each
// other. An interaction without a workflow serves a step of that name in any workflow.
type Interaction struct {
	Workflow string   `yaml:"workflow,omitempty" json:"workflow,omitempty"`
	Step     string   `yaml:"step" json:"step"`
	Request  Request  `yaml:"request" json:"request"`
	Response Response `yaml:"response" json:"response"`
}

// Request is what awf asked: the model, the system prompt, the conversation and the names of
// the tools offered.
type Request struct {
	Model    string          `yaml:"model,omitempty" json:"model,omitempty"`
	System   string          `yaml:"system,omitempty" json:"system,omitempty"`
	Messages []state.Message `yaml:"messages" json:"messages"`
	Tools    []string        `yaml:"tools,omitempty" json:"tools,omitempty"`
}

// Response is the model's reply.
type Response struct {
	Content      string           `yaml:"content,omitempty" json:"content,omitempty"`
	ToolCalls    []state.CallRef  `yaml:"tool_calls,omitempty" json:"tool_calls,omitempty"`
	Usage        *state.Tokens    `yaml:"usage,omitempty" json:"usage,omitempty"`
	FinishReason string           `yaml:"finish_reason,omitempty" json:"finish_reason,omitempty"`
	Refusal      string           `yaml:"refusal,omitempty" json:"refusal,omitempty"`
	Thinking     []state.Thinking `yaml:"thinking,omitempty" json:"thinking,omitempty"`
	Model        string           `yaml:"model,omitempty" json:"model,omitempty"`
}

// Load reads a cassette. A missing or unreadable file, unknown keys and another version are
// fault.Usage errors: the user named the file.
func Load(path string) (*Cassette, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fault.New(fault.Usage, "replay: cassette %s does not exist", path)
	}
	if err != nil {
		return nil, fault.Wrap(fault.Usage, fmt.Errorf("replay: read cassette: %w", err))
	}
	if data, err = yamlnode.CheckFile(path, data); err != nil {
		return nil, fault.New(fault.Usage, "replay: cassette %w", err)
	}
	var c Cassette
	dec := yaml.NewDecoder(bytes.NewReader(data), yaml.DisallowUnknownField())
	if err := dec.Decode(&c); err != nil {
		return nil, fault.New(fault.Usage, "replay: cassette %s: %s", path, yaml.FormatError(err, false, false))
	}
	if c.Version != Version {
		return nil, fault.New(fault.Usage, "replay: cassette %s has version %d; this awf reads version %d", path, c.Version, Version)
	}
	for i, in := range c.Interactions {
		if in.Step == "" {
			return nil, fault.New(fault.Usage, "replay: cassette %s: interaction %d names no step", path, i+1)
		}
	}
	return &c, nil
}

// Encode returns the cassette as YAML, multi-line text as literal blocks for people to read.
// When go-yaml would not read that back exactly (it mishandles a few strings), the cassette is
// written as indented JSON instead, which is YAML too.
func Encode(c *Cassette) ([]byte, error) {
	data, err := yaml.MarshalWithOptions(c, yamlOptions...)
	if err == nil {
		var back Cassette
		if yaml.Unmarshal(data, &back) == nil && reflect.DeepEqual(normal(c), normal(&back)) {
			return data, nil
		}
	}
	data, err = json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode cassette: %w", err)
	}
	return append(data, '\n'), nil
}

// yamlOptions are the options of every YAML encoding of a cassette.
var yamlOptions = []yaml.EncodeOption{yaml.UseLiteralStyleIfMultiline(true), yaml.IndentSequence(true)}

// encoder encodes a cassette that only grows, turn by turn, as a Recorder makes it: each
// interaction is encoded (and checked to decode as itself) once, when it is added, so that
// recording a turn costs what that turn holds, not what the whole cassette does (a request
// holds the step's conversation so far, and the cassette every request: encoding all of it
// again took 0.9 s at the hundredth turn of a step). What it produces decodes as Encode's.
type encoder struct {
	items []byte // the interactions encoded so far, as lines of the sequence under "interactions:"
	n     int    // how many
	// whole is set once an interaction does not come back from YAML as itself: the cassette
	// is then encoded whole every time, by Encode (which turns to JSON).
	whole bool
}

// encode returns the encoding of c, whose first e.n interactions are those encoded before.
func (e *encoder) encode(c *Cassette) ([]byte, error) {
	for !e.whole && e.n < len(c.Interactions) {
		item, ok := encodeItem(c.Interactions[e.n])
		if !ok {
			e.whole = true
			break
		}
		e.items = append(e.items, item...)
		e.n++
	}
	if e.whole {
		return Encode(c)
	}
	head, err := yaml.MarshalWithOptions(&Cassette{Version: c.Version, Note: c.Note}, yamlOptions...)
	const empty = "interactions: []\n"
	if err != nil || !bytes.HasSuffix(head, []byte(empty)) || e.n == 0 {
		return Encode(c)
	}
	out := append(head[:len(head)-len(empty)], "interactions:\n"...)
	return append(out, e.items...), nil
}

// encodeItem encodes in as an item of the sequence under "interactions:", and reports whether
// it decodes as in.
func encodeItem(in Interaction) ([]byte, bool) {
	// IndentSequence indents a sequence at the top as it does one under a key.
	item, err := yaml.MarshalWithOptions([]Interaction{in}, yamlOptions...)
	if err != nil || !bytes.HasPrefix(item, []byte("  - ")) {
		return nil, false
	}
	var back Cassette
	if yaml.Unmarshal(append([]byte("interactions:\n"), item...), &back) != nil || len(back.Interactions) != 1 {
		return nil, false
	}
	want := Cassette{Interactions: []Interaction{in}}
	return item, reflect.DeepEqual(normal(&want), normal(&back))
}

// normal makes empty and nil slices alike, as YAML does.
func normal(c *Cassette) *Cassette {
	out := *c
	out.Interactions = make([]Interaction, len(c.Interactions))
	for i, in := range c.Interactions {
		if len(in.Request.Messages) == 0 {
			in.Request.Messages = nil
		}
		msgs := make([]state.Message, len(in.Request.Messages))
		for j, m := range in.Request.Messages {
			if len(m.ToolCalls) == 0 {
				m.ToolCalls = nil
			}
			if len(m.Thinking) == 0 {
				m.Thinking = nil
			}
			msgs[j] = m
		}
		if len(msgs) > 0 {
			in.Request.Messages = msgs
		}
		if len(in.Request.Tools) == 0 {
			in.Request.Tools = nil
		}
		if len(in.Response.ToolCalls) == 0 {
			in.Response.ToolCalls = nil
		}
		if len(in.Response.Thinking) == 0 {
			in.Response.Thinking = nil
		}
		out.Interactions[i] = in
	}
	if len(out.Interactions) == 0 {
		out.Interactions = nil
	}
	return &out
}

// write replaces the file at path atomically: a temporary file in the same directory,
// synced, then renamed over it.
func write(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}
