package webui

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"mvdan.cc/sh/v3/syntax"

	auditcmd "github.com/awf-dev/awf/cmd/awf/internal/cmd/audit"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// runView is the run page.
type runView struct {
	Run      *state.RunState
	Duration time.Duration
	Stats    runStats
	Live     bool
	CutOff   bool
	// SubRuns are the runs this one started (sub-workflows), oldest first.
	SubRuns  []ports.RunSummary
	Timeline []*stepNode
	// Inputs are the run's inputs as JSON.
	Inputs string
	Output textView
	// AuditNote says why the audit log could not add its verdicts ("" when it could).
	AuditNote string
}

func (v *runView) live() bool { return v.Live }

// stepNode is one step on the timeline. Kids are the steps that ran inside it (the children
// of a parallel step), shown side by side.
type stepNode struct {
	Name string
	S    *state.StepState
	Kids []*stepNode
	// BarX and BarW place the step on the run's time axis, in thousandths of the run's span.
	BarX, BarW int
	Command    []string
	SubRun     string
	Output     textView
	Stderr     textView
	Turns      []turnView
	// Calls are the step's tool calls no turn asked for (a tool step's; an agent step's in
	// runs recorded before turns were).
	Calls    []*callView
	Messages []messageView
	Denied   int
}

// messageView is a message of a conversation recorded before turns were, its content cut.
type messageView struct {
	state.Message
	Text textView
}

// turnView is one model reply with the calls it asked for.
type turnView struct {
	N     int
	Turn  state.Turn
	Calls []*callView
}

// callView is one tool call.
type callView struct {
	Rec     state.ToolCallRecord
	Anchor  string
	Args    textView
	Output  textView
	Error   string
	Denied  bool
	Verdict *ports.AuditVerdict
	// Decision says who let the call run or refused it, as awf audit does.
	Decision string
	Changes  []changeView
}

// changeView is a file a call changed, its diff split into lines to colour.
type changeView struct {
	state.FileChange
	Lines []diffLine
}

type diffLine struct{ Class, Text string }

// buildRun makes the run page's view of run.
func (s *Server) buildRun(ctx context.Context, run *state.RunState) *runView {
	v := &runView{Run: run, Duration: run.Duration(), Stats: statsOf(run), Inputs: prettyJSON(run.Inputs)}
	if run.Status == state.Running {
		_, owned := s.cfg.Runs.Owner(run.ID)
		v.Live, v.CutOff = owned, !owned
		if owned { // the time so far, not up to the last save
			v.Duration = state.ActiveTime(run.StartedAt, s.cfg.Now(), run.Segments)
		}
	}
	v.Output = inlineText(run.Output, outputLink(run.ID, "", ""))
	if sums, err := s.cfg.Runs.List(ctx); err == nil {
		for _, sum := range sums {
			if sum.Parent == run.ID {
				v.SubRuns = append(v.SubRuns, sum)
			}
		}
		slices.Reverse(v.SubRuns)
	}
	audits, note := s.auditOf(run.ID)
	v.AuditNote = note
	v.Timeline = timeline(run, s.cfg.Now(), audits, parentsOf(run, s.workflow(run.WorkflowFile)))
	return v
}

// callKey finds a call's audit record: its step and id.
type callKey struct{ step, id string }

// auditOf returns the completion records of run id's calls (depth 0) by step and call id.
func (s *Server) auditOf(id string) (map[callKey]ports.AuditRecord, string) {
	if s.audit == nil {
		return nil, "no audit log configured"
	}
	recs, _, err := s.audit.Records(id)
	if err != nil {
		return nil, err.Error()
	}
	out := make(map[callKey]ports.AuditRecord, len(recs))
	for _, r := range recs {
		if r.RunID == id && r.Depth == 0 && r.CallID != "" {
			out[callKey{r.Step, r.CallID}] = r
		}
	}
	return out, ""
}

// timeline lays out run's steps in the order they started, each parallel step's children
// inside it, side by side. parents names the parallel step of each child (parentsOf).
func timeline(run *state.RunState, now time.Time, audits map[callKey]ports.AuditRecord, parents map[string]string) []*stepNode {
	start, end := run.StartedAt, run.UpdatedAt
	if run.FinishedAt != nil {
		end = *run.FinishedAt
	}
	if run.Status == state.Running && now.After(end) {
		end = now
	}
	nodes := map[string]*stepNode{}
	var roots []*stepNode
	for _, name := range run.Order {
		st := run.States[name]
		if st == nil || nodes[name] != nil {
			continue
		}
		n := newStepNode(run.ID, name, st, audits)
		n.BarX, n.BarW = bar(start, end, st, now)
		nodes[name] = n
		if p := nodes[parents[name]]; p != nil {
			p.Kids = append(p.Kids, n)
			continue
		}
		roots = append(roots, n)
	}
	return roots
}

// parentsOf maps each child of a parallel step to that step. The state does not record it:
// it comes from the run's workflow (wf) when it could be loaded, else from what the state
// does show, the output of each parallel step that ended (a JSON object whose keys are its
// completed children).
func parentsOf(run *state.RunState, wf *workflow.Workflow) map[string]string {
	parents := map[string]string{}
	if wf != nil {
		var walk func(steps []workflow.Step)
		walk = func(steps []workflow.Step) {
			for i := range steps {
				if p := steps[i].Parallel; p != nil {
					for _, c := range p.Steps {
						parents[c.Name] = steps[i].Name
					}
					walk(p.Steps)
				}
			}
		}
		walk(wf.Steps)
		return parents
	}
	for _, name := range run.Order {
		st := run.States[name]
		if st == nil || len(st.Command) > 0 || len(st.ToolCalls) > 0 || st.ExitCode != nil || !strings.HasPrefix(st.Output, "{") {
			continue
		}
		var outputs map[string]any
		if json.Unmarshal([]byte(st.Output), &outputs) != nil {
			continue
		}
		for child := range outputs {
			if _, ok := run.States[child]; ok && child != name {
				parents[child] = name
			}
		}
	}
	return parents
}

// bar places st on the axis from start to end, in thousandths; a step without times has
// none (0, 0).
func bar(start, end time.Time, st *state.StepState, now time.Time) (x, w int) {
	span := end.Sub(start)
	if st.StartedAt == nil || span <= 0 {
		return 0, 0
	}
	fin := now
	if st.FinishedAt != nil {
		fin = *st.FinishedAt
	}
	x = int(min(max(st.StartedAt.Sub(start)*1000/span, 0), 996))
	w = int(min(max(fin.Sub(*st.StartedAt)*1000/span, 0), time.Duration(1000-x)))
	return x, max(w, 4) // a quick step still shows
}

func newStepNode(runID, name string, st *state.StepState, audits map[callKey]ports.AuditRecord) *stepNode {
	n := &stepNode{Name: name, S: st, SubRun: st.Vars[state.SubRunVar]}
	for _, argv := range st.Command {
		n.Command = append(n.Command, shellLine(argv))
	}
	n.Output = inlineText(st.Output, outputLink(runID, name, ""))
	n.Stderr = inlineText(st.Stderr, "")
	calls := make(map[string]*callView, len(st.ToolCalls))
	var order []*callView
	for _, rec := range st.ToolCalls {
		c := newCallView(runID, name, rec, audits)
		if c.Denied {
			n.Denied++
		}
		calls[rec.ID] = c
		order = append(order, c)
	}
	asked := map[*callView]bool{}
	for i, t := range st.Turns {
		tv := turnView{N: i + 1, Turn: t}
		for _, id := range t.Calls {
			if c := calls[id]; c != nil && !asked[c] {
				asked[c] = true
				tv.Calls = append(tv.Calls, c)
			}
		}
		n.Turns = append(n.Turns, tv)
	}
	for _, c := range order {
		if !asked[c] {
			n.Calls = append(n.Calls, c)
		}
	}
	if len(st.Turns) == 0 && st.Conversation != nil {
		for _, m := range st.Conversation.Messages {
			n.Messages = append(n.Messages, messageView{Message: m, Text: inlineText(m.Content, "")})
		}
	}
	return n
}

func newCallView(runID, step string, rec state.ToolCallRecord, audits map[callKey]ports.AuditRecord) *callView {
	c := &callView{Rec: rec, Anchor: CallAnchor(step, rec.ID), Args: inlineText(prettyJSON(rec.Arguments), textLink(runID, step, rec.ID, true))}
	if a, ok := audits[callKey{step, rec.ID}]; ok {
		c.Verdict = a.Verdict
		c.Decision = auditcmd.Decision(a)
	}
	if r := rec.Result; r != nil {
		c.Denied = r.Denied
		c.Error = r.Error
		c.Output = inlineText(r.Output, outputLink(runID, step, rec.ID))
		if c.Decision == "" && r.Approval != "" {
			c.Decision = r.Approval
		}
		for _, ch := range r.Changes {
			c.Changes = append(c.Changes, changeView{FileChange: ch, Lines: diffLines(ch.Diff)})
		}
	}
	return c
}

// CallAnchor is the id of a call's element on its run's page (the audit page links to it).
func CallAnchor(step, callID string) string { return "call-" + step + "-" + callID }

// shellLine writes argv as one shell command, each word quoted where the shell would read it
// otherwise.
func shellLine(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		q, err := syntax.Quote(a, syntax.LangBash)
		if err != nil { // a NUL byte: no quoting can hold it
			q = "'" + strings.ReplaceAll(a, "\x00", `\0`) + "'"
		}
		words[i] = q
	}
	return strings.Join(words, " ")
}

// diffLines splits a unified diff into lines with a class each: added, removed, hunk header.
func diffLines(diff string) []diffLine {
	if diff == "" {
		return nil
	}
	var out []diffLine
	for line := range strings.Lines(diff) {
		line = strings.TrimSuffix(line, "\n")
		class := ""
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
			class = "dh"
		case strings.HasPrefix(line, "@@"):
			class = "dhunk"
		case strings.HasPrefix(line, "+"):
			class = "dadd"
		case strings.HasPrefix(line, "-"):
			class = "ddel"
		}
		out = append(out, diffLine{Class: class, Text: line})
	}
	return out
}

func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
	run, err := s.load(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, "run", run.Workflow+" "+cut(run.ID, 8), s.buildRun(r.Context(), run))
}
