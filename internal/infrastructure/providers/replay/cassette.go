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
	"slices"

	"github.com/goccy/go-yaml"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/yamlnode"
)

// Version is the cassette format this package writes. It reads version 1 too, whose requests
// hold their whole conversation (Request.Prior is version 2's).
const Version = 2

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
	Model  string `yaml:"model,omitempty" json:"model,omitempty"`
	System string `yaml:"system,omitempty" json:"system,omitempty"`
	// Prior is, in a cassette file, how many messages of the step's previous request open this
	// request's conversation, which Messages then goes on with: a conversation grows turn by
	// turn, and a cassette of n turns that held each request whole held each message about
	// n/2 times (a file, and a recording cost per turn, growing with the square of the
	// turns). In memory it is 0 and Messages the whole conversation: Load puts it back,
	// Encode takes the prior messages out.
	Prior    int             `yaml:"prior,omitempty" json:"prior,omitempty"`
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
	if c.Version != 1 && c.Version != Version {
		return nil, fault.New(fault.Usage, "replay: cassette %s has version %d; this awf reads versions 1 to %d", path, c.Version, Version)
	}
	for i, in := range c.Interactions {
		if in.Step == "" {
			return nil, fault.New(fault.Usage, "replay: cassette %s: interaction %d names no step", path, i+1)
		}
	}
	if err := c.expand(); err != nil {
		return nil, fault.New(fault.Usage, "replay: cassette %s: %w", path, err)
	}
	return &c, nil
}

// conversations are the whole conversation of each step's last request, by workflow and
// step: what the next request of the step is written after.
type conversations map[[2]string][]state.Message

// compact returns in as a cassette file holds it: its request's messages after those it
// shares with the step's previous request (Prior).
func (last *conversations) compact(in Interaction) Interaction {
	if *last == nil {
		*last = conversations{}
	}
	k := [2]string{in.Workflow, in.Step}
	whole := in.Request.Messages
	prev := (*last)[k]
	n := 0
	for n < len(prev) && n < len(whole) && reflect.DeepEqual(normalMessage(prev[n]), normalMessage(whole[n])) {
		n++
	}
	(*last)[k] = whole
	in.Request.Prior, in.Request.Messages = n, whole[n:]
	return in
}

// expand gives each request its whole conversation: the Prior first messages of the previous
// request of the same workflow and step, then its own. A conversation that grew extends the
// previous one's slice; one cut short (a context strategy, a new attempt) is copied, within
// a budget: four times the messages the file holds, and 65,536 more. Without it, a small file
// of requests each cutting a long conversation by one message would take memory growing with
// the square of its size.
func (c *Cassette) expand() error {
	written := 0
	for _, in := range c.Interactions {
		written += len(in.Request.Messages)
	}
	budget, copied := 4*written+1<<16, 0
	last := conversations{}
	for i := range c.Interactions {
		in := &c.Interactions[i]
		k := [2]string{in.Workflow, in.Step}
		prev, prior := last[k], in.Request.Prior
		switch {
		case prior < 0 || prior > 0 && c.Version < 2:
			return fmt.Errorf("interaction %d: prior %d: want none in version 1, else at least 0", i+1, prior)
		case prior > len(prev):
			return fmt.Errorf("interaction %d: prior %d: the previous request of step %q has %d messages", i+1, prior, in.Step, len(prev))
		case prior == len(prev) && prior > 0:
			// The conversation goes on: it grows the previous one's slice, which no other
			// request grows (the next of the step extends this one).
			in.Request.Messages = append(prev, in.Request.Messages...)
		case prior > 0:
			if copied += prior; copied > budget {
				return fmt.Errorf("interaction %d: putting back the conversations would copy more than %d messages "+
					"(4 times the %d the file holds, and 65,536): a cassette awf recorded never does", i+1, budget, written)
			}
			in.Request.Messages = slices.Concat(prev[:prior], in.Request.Messages)
		}
		in.Request.Prior = 0
		last[k] = in.Request.Messages
	}
	return nil
}

// Encode returns the cassette as YAML of this version (each request by what it adds to the
// step's previous one), multi-line text as literal blocks for people to read. When go-yaml
// would not read that back exactly (it mishandles a few strings), the cassette is written as
// indented JSON instead, which is YAML too.
func Encode(c *Cassette) ([]byte, error) {
	out := &Cassette{Version: Version, Note: c.Note, Interactions: make([]Interaction, len(c.Interactions))}
	var last conversations
	for i, in := range c.Interactions {
		out.Interactions[i] = last.compact(in)
	}
	data, err := yaml.MarshalWithOptions(out, yamlOptions...)
	if err == nil {
		var back Cassette
		if yaml.Unmarshal(data, &back) == nil && reflect.DeepEqual(normal(out), normal(&back)) {
			return data, nil
		}
	}
	data, err = json.MarshalIndent(out, "", "  ")
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
	last  conversations
	// whole is set once an interaction does not come back from YAML as itself: the cassette
	// is then encoded whole every time, by Encode (which turns to JSON).
	whole bool
}

// encode returns the encoding of c, whose first e.n interactions are those encoded before.
func (e *encoder) encode(c *Cassette) ([]byte, error) {
	for !e.whole && e.n < len(c.Interactions) {
		item, ok := encodeItem(e.last.compact(c.Interactions[e.n]))
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
	head, err := yaml.MarshalWithOptions(&Cassette{Version: Version, Note: c.Note}, yamlOptions...)
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
			msgs[j] = normalMessage(m)
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

// normalMessage makes m's empty and nil slices alike, as YAML does.
func normalMessage(m state.Message) state.Message {
	if len(m.ToolCalls) == 0 {
		m.ToolCalls = nil
	}
	if len(m.Thinking) == 0 {
		m.Thinking = nil
	}
	return m
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
