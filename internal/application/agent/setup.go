package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/awf-dev/awf/internal/application/runner"
	"github.com/awf-dev/awf/internal/bom"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
)

// Conversation strategies and stop reasons.
const (
	modeConversation = "conversation"

	strategySliding   = "sliding_window"
	strategyMiddle    = "truncate_middle"
	strategySummarize = "summarize"

	// StoppedByCondition and the other StoppedBy values are what conversation.stopped_by
	// records.
	StoppedByCondition = "stop_condition"
	StoppedByMaxTurns  = "max_turns"
	StoppedByNoCalls   = "no_tool_calls"
	StoppedByMaxCalls  = "max_calls"
)

// prepare renders the step's prompts, resolves its provider and tools and builds the loop.
func (x *Executor) prepare(ctx context.Context, sc runner.StepContext) (*loop, error) {
	a := sc.Step.Agent
	l := &loop{
		x: x, sc: sc, a: a, step: sc.Step.Name,
		maxCalls:   orDefault(a.ToolOptions.MaxCalls, DefaultMaxCalls),
		maxRepeats: orDefault(a.ToolOptions.MaxRepeats, DefaultMaxRepeats),
		conv:       a.Mode == modeConversation || a.ContinueFrom != "",
		ids:        map[string]bool{},
	}
	if l.conv {
		if a.Conversation != nil {
			l.convOpts = *a.Conversation
		}
		l.convOpts.MaxTurns = orDefault(l.convOpts.MaxTurns, DefaultMaxTurns)
	}
	system, err := x.render("system_prompt", a.SystemPrompt, sc.Scope)
	if err != nil {
		return nil, err
	}
	if l.prompt, err = x.prompt(sc); err != nil {
		return nil, err
	}
	if err := l.tooling(ctx); err != nil {
		return nil, err
	}
	if err := l.provider(ctx); err != nil {
		return nil, err
	}
	if a.OutputFormat == "json" {
		system = joinText(system, jsonInstructions(a.OutputSchema))
	}
	if err := l.history(system); err != nil {
		return nil, err
	}
	l.resume = newResume(sc.Previous)
	if sc.Previous != nil && sc.Previous.Tokens != nil {
		l.tokens = *sc.Previous.Tokens
	}
	if sc.Previous != nil {
		l.turns = slices.Clone(sc.Previous.Turns)
	}
	return l, nil
}

func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// render renders one template field, naming it in errors.
func (x *Executor) render(field, tmpl string, scope ports.Scope) (string, error) {
	if tmpl == "" {
		return "", nil
	}
	s, err := x.d.Templater.Render(tmpl, scope)
	if err != nil {
		return "", fmt.Errorf("%s: %w", field, err)
	}
	return s, nil
}

// prompt renders the step's prompt, or reads prompt_file (relative to the workflow's
// directory) and renders its text.
func (x *Executor) prompt(sc runner.StepContext) (string, error) {
	a := sc.Step.Agent
	if a.PromptFile == "" {
		return x.render("prompt", a.Prompt, sc.Scope)
	}
	path, err := x.render("prompt_file", a.PromptFile, sc.Scope)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(path) && sc.Workflow != nil && sc.Workflow.Dir != "" {
		path = filepath.Join(sc.Workflow.Dir, path)
	}
	data, err := x.d.ReadFile(path)
	if err != nil {
		return "", fault.Wrap(fault.Invalid, fmt.Errorf("prompt_file: %w", err))
	}
	if data, err = bom.Strip(data); err != nil { // a mark left in would be sent to the model
		return "", fault.Wrap(fault.Invalid, fmt.Errorf("prompt_file %s: %w", path, err))
	}
	return x.render("prompt_file "+path, string(data), sc.Scope)
}

// tooling describes the step's tools.
func (l *loop) tooling(ctx context.Context) error {
	names := l.a.Tools
	if len(names) == 0 {
		return nil
	}
	infos, err := l.x.d.Catalog.Describe(ctx, ports.ToolQuery{
		RunID: l.sc.RunID, Step: l.step, Names: names, WorkDir: l.sc.WorkDir,
	})
	if err != nil {
		return fmt.Errorf("tools: %w", err)
	}
	if len(infos) != len(names) {
		return fault.New(fault.System, "tools: the catalog described %d tools for %d names", len(infos), len(names))
	}
	l.info = make(map[string]ports.ToolInfo, len(infos))
	for i, info := range infos {
		info.Schema.Name = names[i]
		l.info[names[i]] = info
		l.tools = append(l.tools, info.Schema)
	}
	l.toolNames = slices.Clone(names)
	return nil
}

// provider resolves the step's provider and merges request options: the provider's
// configured ones under the step's, without "model", which the request names on its own.
func (l *loop) provider(ctx context.Context) error {
	model, _ := l.a.Options["model"].(string)
	if v, ok := l.a.Options["model"]; ok && model == "" && v != nil {
		return fault.New(fault.Invalid, "options.model: want a string, got %T", v)
	}
	inputs, _ := l.sc.Scope["inputs"].(map[string]any)
	rp, err := l.x.d.Providers.Provider(ctx, ports.ProviderRef{
		Workflow: l.sc.Workflow, Step: l.step, Name: l.a.Provider, Model: model,
		ToolFormat: l.a.ToolOptions.ToolFormat,
		RunID:      l.sc.RunID, Inputs: inputs, Tools: l.toolNames,
	})
	if err != nil {
		return fmt.Errorf("provider: %w", err)
	}
	if rp.Provider == nil {
		return fault.New(fault.System, "provider %q: resolved to nothing", l.a.Provider)
	}
	l.prov, l.provName, l.model = rp.Provider, rp.Name, rp.Model
	l.endpoint, l.cassette = rp.Endpoint, rp.Cassette
	if l.provName == "" {
		l.provName = l.a.Provider
	}
	opts := maps.Clone(rp.Options)
	if opts == nil {
		opts = map[string]any{}
	}
	maps.Copy(opts, l.a.Options)
	delete(opts, "model")
	if l.allowTruncated, err = takeAllowTruncated(opts); err != nil {
		return err
	}
	if len(opts) > 0 {
		l.options = opts
	}
	return nil
}

// history starts the conversation: the system prompt, then the conversation continued from
// another step (continue_from), then this step's prompt as a user message.
func (l *loop) history(system string) error {
	var prior []state.Message
	if from := l.a.ContinueFrom; from != "" {
		msgs, turns, err := l.continued(from)
		if err != nil {
			return err
		}
		if len(msgs) > 0 && msgs[0].Role == "system" {
			if system == "" {
				system = msgs[0].Content
			}
			msgs = msgs[1:]
		}
		prior, l.priorTurns = msgs, turns
	}
	if system != "" {
		l.hist = append(l.hist, state.Message{Role: "system", Content: system})
		l.sysOff = 1
	}
	for _, m := range prior {
		l.append(m)
		for _, c := range m.ToolCalls {
			l.ids[c.ID] = true
		}
	}
	l.append(state.Message{Role: "user", Content: l.prompt})
	return nil
}

// continued returns the conversation of an earlier agent step.
func (l *loop) continued(from string) ([]state.Message, int, error) {
	if l.sc.Lookup == nil {
		return nil, 0, fault.New(fault.System, "continue_from: the runner gave no way to look up step %q", from)
	}
	s, ok := l.sc.Lookup(from)
	if !ok {
		return nil, 0, fault.New(fault.Invalid, "continue_from: step %q has not run", from)
	}
	if s.Conversation == nil || len(s.Conversation.Messages) == 0 {
		return nil, 0, fault.New(fault.Invalid,
			"continue_from: step %q recorded no conversation (it must be an agent step with mode: conversation)", from)
	}
	return slices.Clone(s.Conversation.Messages), s.Conversation.Turns, nil
}

// jsonInstructions tells the model what output_format: json expects.
func jsonInstructions(schema map[string]any) string {
	s := "Give your final answer as a single JSON value and nothing else: no prose, no code fence."
	if len(schema) == 0 {
		return s
	}
	data, err := json.Marshal(schema)
	if err != nil {
		return s
	}
	return s + " It must conform to this JSON Schema:\n" + string(data)
}

func joinText(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return strings.TrimRight(a, "\n") + "\n\n" + b
}
