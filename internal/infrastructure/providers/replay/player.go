package replay

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
)

// Player plays a cassette. Each step gets its own cursor over the interactions recorded for
// it. A request must match the next recorded one: model, system prompt, tool names, and the
// conversation message by message (the model-visible turn structure: roles, texts, calls and
// which call each result answers), except the text of tool results, which tools produce
// afresh on every run (timings in test output, for one). A result that failed now and
// succeeded when recorded (or the reverse) is played on and reported in the reply's
// Divergence, unless it was denied now (approval, policy): that is a mismatch. Safe for
// concurrent use.
type Player struct {
	path string
	c    *Cassette

	mu   sync.Mutex
	next map[string]int // step key -> how many of its interactions were played
	// turns are the interactions of each workflow's step, found once: a turn does not look
	// through the whole cassette.
	turns map[[2]string]stepTurns
	// byStep indexes the interactions by workflow and step, built at the first step that
	// plays: a step does not look through the whole cassette either (10,000 agent steps, one
	// turn each, would compare 10^8 names).
	byStep map[[2]string][]int
}

// stepTurns are the indexes of the interactions a step plays, and the key of its cursor.
type stepTurns struct {
	idxs []int
	key  string
}

// Open loads the cassette at path for playing.
func Open(path string) (*Player, error) {
	c, err := Load(path)
	if err != nil {
		return nil, err
	}
	return NewPlayer(path, c), nil
}

// NewPlayer plays c; path names the cassette in messages.
func NewPlayer(path string, c *Cassette) *Player {
	return &Player{path: path, c: c, next: map[string]int{}, turns: map[[2]string]stepTurns{}}
}

// Step returns the provider of one agent step of a workflow.
func (p *Player) Step(workflow, step string) ports.Provider {
	return &stepPlayer{p: p, workflow: workflow, step: step}
}

// Unused describes the steps whose recorded interactions were not all played, one line per
// step: a run that ended early, or a cassette holding more than this run needed.
func (p *Player) Unused() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	counts := map[string]int{}
	for _, in := range p.c.Interactions {
		counts[key(in.Workflow, in.Step)]++
	}
	var out []string
	for k, n := range counts {
		if played := p.next[k]; played < n {
			out = append(out, fmt.Sprintf("%s: %d of %d recorded model turns not played", k, n-played, n))
		}
	}
	sort.Strings(out)
	return out
}

func key(workflow, step string) string {
	if workflow == "" {
		return step
	}
	return workflow + "/" + step
}

// interactions returns the indexes of the interactions recorded for a step, and the key of
// its cursor: those of the workflow's step, else those recorded without a workflow. p.mu is
// held.
func (p *Player) interactions(workflow, step string) ([]int, string) {
	if t, ok := p.turns[[2]string{workflow, step}]; ok {
		return t.idxs, t.key
	}
	idxs, k := p.find(workflow, step)
	p.turns[[2]string{workflow, step}] = stepTurns{idxs, k}
	return idxs, k
}

// find returns the interactions of the workflow's step, else those of the step recorded
// without a workflow, and the key of their cursor. p.mu is held.
func (p *Player) find(workflow, step string) ([]int, string) {
	if p.byStep == nil {
		p.byStep = map[[2]string][]int{}
		for i, in := range p.c.Interactions {
			k := [2]string{in.Workflow, in.Step}
			p.byStep[k] = append(p.byStep[k], i)
		}
	}
	if exact := p.byStep[[2]string{workflow, step}]; len(exact) > 0 {
		return exact, key(workflow, step)
	}
	return p.byStep[[2]string{"", step}], key("", step)
}

type stepPlayer struct {
	p              *Player
	workflow, step string
}

// Seek makes the step's next reply its nth recorded one (0 is the first). An engine that
// runs each model turn as a task of its own, on whichever worker takes it (the temporal
// engine), says which turn of the step it plays: a player opened by another worker, or after
// a crash, would count from the first.
func (s *stepPlayer) Seek(n int) {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	_, k := s.p.interactions(s.workflow, s.step)
	s.p.next[k] = max(n, 0)
}

// Chat returns the recorded reply when req matches the next recorded request of the step.
// A mismatch, or a request beyond what was recorded, is a fault.Execution error (the step
// fails, and so the run: exit code 3) that names the first difference and says how to record
// the cassette again.
func (s *stepPlayer) Chat(ctx context.Context, req ports.ChatRequest) (ports.ChatResponse, error) {
	if err := ctx.Err(); err != nil {
		return ports.ChatResponse{}, err
	}
	p := s.p
	p.mu.Lock()
	defer p.mu.Unlock()
	idxs, k := p.interactions(s.workflow, s.step)
	n := p.next[k]
	if n >= len(idxs) {
		return ports.ChatResponse{}, fault.New(fault.Execution,
			"replay: step %q asked the model a %s time, but the cassette %s holds %d model turns for it%s",
			s.step, ordinal(n+1), p.path, len(idxs), p.advice())
	}
	in := p.c.Interactions[idxs[n]]
	diff, divergence := compare(in.Request, req)
	if diff != "" {
		return ports.ChatResponse{}, fault.New(fault.Execution,
			"replay: request %d of step %q differs from the cassette %s (interaction %d): %s%s",
			n+1, s.step, p.path, idxs[n]+1, diff, p.advice())
	}
	p.next[k] = n + 1
	if req.OnDelta != nil && in.Response.Content != "" {
		req.OnDelta(in.Response.Content)
	}
	resp := ports.ChatResponse{
		Content:      in.Response.Content,
		ToolCalls:    slices.Clone(in.Response.ToolCalls),
		FinishReason: in.Response.FinishReason,
		Refusal:      in.Response.Refusal,
		Thinking:     slices.Clone(in.Response.Thinking),
		Model:        in.Response.Model,
		Divergence:   divergence,
	}
	if u := in.Response.Usage; u != nil {
		resp.Usage = *u
	}
	if resp.Model == "" {
		resp.Model = in.Request.Model
	}
	return resp, nil
}

func (p *Player) advice() string {
	return fmt.Sprintf(".\nA cassette replays one recorded run: use the inputs, workflow and tool approvals it was "+
		"recorded with, or record it again against a live provider with --record %s", p.path)
}

func ordinal(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return fmt.Sprintf("%dth", n)
	case n%10 == 1:
		return fmt.Sprintf("%dst", n)
	case n%10 == 2:
		return fmt.Sprintf("%dnd", n)
	case n%10 == 3:
		return fmt.Sprintf("%drd", n)
	}
	return fmt.Sprintf("%dth", n)
}

// compare returns the first difference between a recorded request and req, in words, or ""
// when they match. A tool result that succeeded when recorded and failed now, or the other
// way round, does not stop the replay: the model saw a result for that call either way, and
// a real tool's outcome can differ between runs (a call a crash cut off, settled on resume as
// of unknown outcome, for one). Such differences come back as divergence, to be recorded.
func compare(rec Request, req ports.ChatRequest) (diff, divergence string) {
	if rec.Model != req.Model {
		return fmt.Sprintf("model is %q, was %q", req.Model, rec.Model), ""
	}
	if d := textDiff(rec.System, req.System); d != "" {
		return "the system prompt differs: " + d, ""
	}
	names := make([]string, len(req.Tools))
	for i, t := range req.Tools {
		names[i] = t.Name
	}
	if !slices.Equal(rec.Tools, names) {
		return fmt.Sprintf("the tools offered are [%s], were [%s]", strings.Join(names, ", "), strings.Join(rec.Tools, ", ")), ""
	}
	var soft []string
	for i := range max(len(rec.Messages), len(req.Messages)) {
		if i >= len(rec.Messages) {
			return fmt.Sprintf("the conversation has %d messages, was %d: messages[%d] (%s) is new", len(req.Messages), len(rec.Messages), i, describe(req.Messages[i])), ""
		}
		if i >= len(req.Messages) {
			return fmt.Sprintf("the conversation has %d messages, was %d: messages[%d] (%s) is missing", len(req.Messages), len(rec.Messages), i, describe(rec.Messages[i])), ""
		}
		hard, s := messageDiff(rec.Messages[i], req.Messages[i])
		if hard != "" {
			return fmt.Sprintf("messages[%d] (%s): %s", i, describe(req.Messages[i]), hard), ""
		}
		if s != "" {
			soft = append(soft, fmt.Sprintf("messages[%d] (%s): %s", i, describe(req.Messages[i]), s))
		}
	}
	return "", strings.Join(soft, "; ")
}

func describe(m state.Message) string {
	switch {
	case m.Role == "tool":
		return fmt.Sprintf("result of %s %s", m.Name, m.ToolCallID)
	case len(m.ToolCalls) > 0:
		return fmt.Sprintf("%s with %d tool calls", m.Role, len(m.ToolCalls))
	}
	return m.Role
}

// deniedPrefix starts the result of a call the governed path refused (see the agent loop).
const deniedPrefix = "Denied: "

// messageDiff compares two messages: hard is a difference that stops the replay, soft one
// it records and goes on with (a tool result's success; its text is not compared, see
// Player).
func messageDiff(rec, got state.Message) (hard, soft string) {
	switch {
	case rec.Role != got.Role:
		return fmt.Sprintf("role is %q, was %q", got.Role, rec.Role), ""
	case rec.ToolCallID != got.ToolCallID:
		return fmt.Sprintf("answers call %q, was %q", got.ToolCallID, rec.ToolCallID), ""
	case rec.Name != got.Name:
		return fmt.Sprintf("tool is %q, was %q", got.Name, rec.Name), ""
	case rec.IsError != got.IsError && got.IsError && strings.HasPrefix(got.Content, deniedPrefix):
		// A denial is how the run was set up (approvals, policy), not how a tool behaved:
		// replaying on would show the model a run that did not happen.
		return fmt.Sprintf("the call failed now but succeeded when recorded: %s", snippet(got.Content, 200)), ""
	case rec.IsError != got.IsError && got.IsError:
		soft = fmt.Sprintf("the call failed now but succeeded when recorded: %s", snippet(got.Content, 200))
	case rec.IsError != got.IsError:
		soft = "the call succeeded now but failed when recorded"
	}
	if got.Role != "tool" {
		if d := textDiff(rec.Content, got.Content); d != "" {
			return "the text differs: " + d, ""
		}
	}
	if len(rec.ToolCalls) != len(got.ToolCalls) {
		return fmt.Sprintf("%d tool calls, were %d", len(got.ToolCalls), len(rec.ToolCalls)), ""
	}
	for j, c := range got.ToolCalls {
		r := rec.ToolCalls[j]
		if c.ID != r.ID || c.Name != r.Name || !sameJSON(c.Arguments, r.Arguments) {
			return fmt.Sprintf("tool call %d is %s %s (%s), was %s %s (%s)", j, c.Name, c.Arguments, c.ID, r.Name, r.Arguments, r.ID), ""
		}
	}
	return "", soft
}

// textDiff shows where two texts part, with some context, or "" when they are equal.
func textDiff(rec, got string) string {
	if rec == got {
		return ""
	}
	i := 0
	for i < len(rec) && i < len(got) && rec[i] == got[i] {
		i++
	}
	from := max(0, i-30)
	return fmt.Sprintf("at byte %d, now %s, was %s", i, excerpt(got, from), excerpt(rec, from))
}

func excerpt(s string, from int) string {
	if from >= len(s) {
		return "(end of text)"
	}
	s = s[from:]
	out := snippet(s, 60)
	if from > 0 {
		out = "..." + out
	}
	return out
}

// snippet quotes the start of s.
func snippet(s string, n int) string {
	if len(s) > n {
		return fmt.Sprintf("%q...", s[:n])
	}
	return fmt.Sprintf("%q", s)
}
