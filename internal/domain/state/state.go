// Package state is the record of a run: what the run state file holds (DESIGN section 6, seed
// 002 "State Structure"). It is plain data with YAML names; the statestore adapter writes it.
package state

import (
	"slices"
	"time"
)

// Status is the lifecycle state of a run or a step.
type Status string

// Statuses.
const (
	Pending     Status = "pending"
	Running     Status = "running"
	Completed   Status = "completed"
	Failed      Status = "failed"
	Skipped     Status = "skipped"
	Interrupted Status = "interrupted"
)

// Done reports whether a step in this status need not run again on resume.
func (s Status) Done() bool { return s == Completed || s == Skipped }

// Ended reports whether a run in this status has ended (for now: a failed or interrupted run
// can be resumed).
func (s Status) Ended() bool { return s == Completed || s == Failed || s == Interrupted }

// RunState is one run, as written to .awf/runs/<id>.yaml.
type RunState struct {
	ID           string         `yaml:"id" json:"run_id"`
	Workflow     string         `yaml:"workflow" json:"workflow"`
	WorkflowFile string         `yaml:"workflow_file" json:"workflow_file"`
	Status       Status         `yaml:"status" json:"status"`
	Inputs       map[string]any `yaml:"inputs" json:"inputs"`
	StartedAt    time.Time      `yaml:"started_at" json:"started_at"`
	UpdatedAt    time.Time      `yaml:"updated_at" json:"updated_at"`
	FinishedAt   *time.Time     `yaml:"finished_at,omitempty" json:"finished_at,omitempty"`
	Error        string         `yaml:"error,omitempty" json:"error,omitempty"`
	Output       string         `yaml:"output,omitempty" json:"output,omitempty"`
	Resumed      int            `yaml:"resumed,omitempty" json:"resumed,omitempty"`
	Parent       string         `yaml:"parent,omitempty" json:"parent,omitempty"`
	// Segments are the runs of a process on this run, once it has been resumed: the time
	// between them (the run waiting to be resumed) is not part of its duration. A run never
	// resumed has none: it ran from StartedAt to FinishedAt.
	Segments []Segment             `yaml:"segments,omitempty" json:"segments,omitempty"`
	States   map[string]*StepState `yaml:"states" json:"states"`
	// WorkDir is the directory shell steps ran in, kept so that a resumed run runs where the
	// original did. Empty means the process's current directory.
	WorkDir string `yaml:"work_dir,omitempty" json:"work_dir,omitempty"`
	// Order lists step names in the order they started, so readers see the run's sequence.
	Order []string `yaml:"order" json:"order"`
	// Sources are the digests of the files the run's workflow was loaded from, by absolute
	// path: the workflow, the workflows it calls and the tool definitions it can reach
	// (manifests, .tool files). Resume compares them with the files as they are now and
	// refuses a changed workflow unless forced. Runs of earlier versions have none.
	Sources map[string]string `yaml:"sources,omitempty" json:"sources,omitempty"`
	// Overrides records every resume that was told to overlook something, so that a
	// reviewer knows the run did not simply go on from a sound record.
	Overrides []Override `yaml:"overrides,omitempty" json:"overrides,omitempty"`
}

// Override is one resume that went on despite a check: changed files (--force) or a damaged
// journal (--from-last-valid).
type Override struct {
	At time.Time `yaml:"at" json:"at"`
	// Flag is the resume flag that asked for it: "--force" or "--from-last-valid".
	Flag string `yaml:"flag" json:"flag"`
	// Changed lists the files that differed from the run's Sources (see ChangedSources).
	Changed []string `yaml:"changed,omitempty" json:"changed,omitempty"`
	// Dropped says what of a damaged journal was left out.
	Dropped string `yaml:"dropped,omitempty" json:"dropped,omitempty"`
}

// Resume flags that an Override names.
const (
	ForceFlag         = "--force"
	FromLastValidFlag = "--from-last-valid"
)

// SourceMissing is the digest of a source file that could not be read.
const SourceMissing = "missing"

// ChangedSources lists, sorted, the files whose digests differ between was (a run's Sources)
// and now (the same files and those loaded now, hashed again), each with what happened to
// it: "path (changed)", "path (deleted)" or "path (added)". A run without Sources (was is
// empty: written by an earlier version) has nothing to compare and gives none.
func ChangedSources(was, now map[string]string) []string {
	if len(was) == 0 {
		return nil
	}
	var out []string
	for p, d := range was {
		switch n, ok := now[p]; {
		case !ok || n == d:
		case n == SourceMissing:
			out = append(out, p+" (deleted)")
		default:
			out = append(out, p+" (changed)")
		}
	}
	for p, n := range now {
		if _, ok := was[p]; !ok && n != SourceMissing {
			out = append(out, p+" (added)")
		}
	}
	slices.Sort(out)
	return out
}

// Segment is one process's run on a run: from StartedAt to EndedAt; the last segment of a run
// ends at the run's FinishedAt (or, while it runs, its UpdatedAt) and has no EndedAt.
type Segment struct {
	StartedAt time.Time  `yaml:"started_at" json:"started_at"`
	EndedAt   *time.Time `yaml:"ended_at,omitempty" json:"ended_at,omitempty"`
}

// StartSegment records that a process resumes the run at now: the segment before ended at
// FinishedAt or, when the process of that segment died, at the last save (UpdatedAt).
func (r *RunState) StartSegment(now time.Time) {
	end := r.lastTime()
	if len(r.Segments) == 0 {
		r.Segments = []Segment{{StartedAt: r.StartedAt}}
	}
	r.Segments[len(r.Segments)-1].EndedAt = &end
	r.Segments = append(r.Segments, Segment{StartedAt: now})
}

// Duration is the time processes spent on the run, without the time it waited to be resumed:
// up to FinishedAt, or up to the last save (UpdatedAt) for a run that has not finished.
func (r *RunState) Duration() time.Duration {
	return ActiveTime(r.StartedAt, r.lastTime(), r.Segments)
}

// lastTime is when the run's current (last) segment ended, or its last save.
func (r *RunState) lastTime() time.Time {
	if r.FinishedAt != nil {
		return *r.FinishedAt
	}
	return r.UpdatedAt
}

// ActiveTime is the duration of a run that started at started, was last active at last and
// ran in segments (none: one segment from started to last).
func ActiveTime(started, last time.Time, segments []Segment) time.Duration {
	if len(segments) == 0 {
		return max(last.Sub(started), 0)
	}
	var d time.Duration
	for _, s := range segments {
		end := last
		if s.EndedAt != nil {
			end = *s.EndedAt
		}
		d += max(end.Sub(s.StartedAt), 0)
	}
	return d
}

// Step returns the named step's state, creating it (pending) if absent.
func (r *RunState) Step(name string) *StepState {
	if r.States == nil {
		r.States = map[string]*StepState{}
	}
	s, ok := r.States[name]
	if !ok {
		s = &StepState{Status: Pending}
		r.States[name] = s
		r.Order = append(r.Order, name)
	}
	return s
}

// StepState is one step's record. Output holds the step's output; when it is large the store
// moves it beside the state file and sets OutputFile instead.
type StepState struct {
	Status     Status `yaml:"status" json:"status"`
	Output     string `yaml:"output,omitempty" json:"output,omitempty"`
	OutputFile string `yaml:"output_file,omitempty" json:"output_file,omitempty"`
	OutputSize int64  `yaml:"output_size,omitempty" json:"output_size,omitempty"`
	Response   any    `yaml:"response,omitempty" json:"response,omitempty"`
	ExitCode   *int   `yaml:"exit_code,omitempty" json:"exit_code,omitempty"`
	// Command is what a shell step ran: the words of each simple command, values bound.
	Command      [][]string       `yaml:"command,omitempty" json:"command,omitempty"`
	Stderr       string           `yaml:"stderr,omitempty" json:"stderr,omitempty"`
	Error        string           `yaml:"error,omitempty" json:"error,omitempty"`
	Attempts     int              `yaml:"attempts,omitempty" json:"attempts,omitempty"`
	StartedAt    *time.Time       `yaml:"started_at,omitempty" json:"started_at,omitempty"`
	FinishedAt   *time.Time       `yaml:"finished_at,omitempty" json:"finished_at,omitempty"`
	DurationMs   int64            `yaml:"duration_ms,omitempty" json:"duration_ms,omitempty"`
	ToolCalls    []ToolCallRecord `yaml:"tool_calls,omitempty" json:"tool_calls,omitempty"`
	ToolStats    *ToolStats       `yaml:"tool_stats,omitempty" json:"tool_stats,omitempty"`
	Tokens       *Tokens          `yaml:"tokens,omitempty" json:"tokens,omitempty"`
	Conversation *Conversation    `yaml:"conversation,omitempty" json:"conversation,omitempty"`
	// Agent is an agent step's model: provider, model, endpoint host and cassette.
	Agent *AgentRecord `yaml:"agent,omitempty" json:"agent,omitempty"`
	// Turns records each model reply of an agent step, in order, across resumed attempts.
	Turns []Turn            `yaml:"turns,omitempty" json:"turns,omitempty"`
	Vars  map[string]string `yaml:"vars,omitempty" json:"vars,omitempty"`
}

// CallCounts counts a run's tool calls: all of them, those that got a result other than a
// denial (Allowed) and those refused (Denials), and the tools they named, sorted. The run
// viewer lists them for every run; the index of finished runs keeps them so that it need not
// load each run.
type CallCounts struct {
	Calls   int      `json:"calls"`
	Allowed int      `json:"allowed"`
	Denials int      `json:"denials"`
	Tools   []string `json:"tools,omitempty"`
}

// CountCalls counts the tool calls of every step of r.
func (r *RunState) CountCalls() CallCounts {
	var n CallCounts
	for _, s := range r.States {
		for _, c := range s.ToolCalls {
			n.Calls++
			switch {
			case c.Result != nil && c.Result.Denied:
				n.Denials++
			case c.Result != nil:
				n.Allowed++
			}
			if !slices.Contains(n.Tools, c.Tool) {
				n.Tools = append(n.Tools, c.Tool)
			}
		}
	}
	slices.Sort(n.Tools)
	return n
}

// RawArgsKey holds, in a call's recorded Arguments, the text of arguments that were not a JSON
// object, so that a reviewer sees what the model sent (the agent loop and awf mcp serve both
// record such calls this way).
const RawArgsKey = "_raw"

// SubRunVar is the step var in which a workflow step records the id of the child run it
// started, so that resume continues that run and readers can follow it.
const SubRunVar = "sub_run"

// ToolCallRecord is one tool call of a step, as seed 002 shows it.
type ToolCallRecord struct {
	ID        string          `yaml:"id" json:"id"`
	Tool      string          `yaml:"tool" json:"tool"`
	Arguments map[string]any  `yaml:"arguments" json:"arguments"`
	Result    *ToolCallResult `yaml:"result,omitempty" json:"result,omitempty"`
	// InFlight is true while the call runs; a crash leaves it true for resume to report.
	InFlight bool `yaml:"in_flight,omitempty" json:"in_flight,omitempty"`
	// Intent is what the tool's check needs to know of the call, recorded before it runs
	// (write_file: the digest of the content it meant to write); see tool.Checker.
	Intent map[string]any `yaml:"intent,omitempty" json:"intent,omitempty"`
	// Outcome is OutcomeUnknown for a call a crash cut off whose effect nobody established.
	Outcome string `yaml:"outcome,omitempty" json:"outcome,omitempty"`
	// Recovery says what resume decided about a call a crash cut off, and who decided.
	Recovery *Recovery `yaml:"recovery,omitempty" json:"recovery,omitempty"`
}

// OutcomeUnknown is ToolCallRecord.Outcome for a call cut off by a crash whose effect is
// not known: it was neither checked nor run again, and the model was told so.
const OutcomeUnknown = "unknown"

// Recovery is what resume decided about a call a crash left in flight.
type Recovery struct {
	// Decision is one of the Recovery* decisions.
	Decision string `yaml:"decision" json:"decision"`
	// By is who decided: RecoveredByCheck, ByUser, ByIdempotent or ByNonInteractive.
	By string `yaml:"by" json:"by"`
	// Detail is what the check saw, or why nothing could decide.
	Detail string `yaml:"detail,omitempty" json:"detail,omitempty"`
}

// Recovery decisions and deciders.
const (
	RecoveryDone    = "done"    // the call took effect (its check says so, or the person): not run again
	RecoveryRerun   = "rerun"   // run again: its check says it did not take effect, it is idempotent, or the person chose to
	RecoverySkip    = "skip"    // not run again; the model is told it was skipped (the person chose)
	RecoveryUnknown = "unknown" // not run again; the model is told the outcome is unknown

	RecoveredByCheck          = "check"
	RecoveredByUser           = "user"
	RecoveredByIdempotent     = "idempotent"
	RecoveredByNonInteractive = "non_interactive"
)

// ToolCallResult is the outcome of one call.
type ToolCallResult struct {
	Success bool   `yaml:"success" json:"success"`
	Output  string `yaml:"output,omitempty" json:"output,omitempty"`
	// OutputFile and OutputSize replace Output in a state file when the store moved a large
	// output beside it (as StepState's do); in memory they are empty.
	OutputFile string `yaml:"output_file,omitempty" json:"output_file,omitempty"`
	OutputSize int64  `yaml:"output_size,omitempty" json:"output_size,omitempty"`
	Error      string `yaml:"error,omitempty" json:"error,omitempty"`
	DurationMs int64  `yaml:"duration_ms" json:"duration_ms"`
	Approval   string `yaml:"approval,omitempty" json:"approval,omitempty"`
	Denied     bool   `yaml:"denied,omitempty" json:"denied,omitempty"`
	// Layer and Rule say, for a denial, which layer refused the call and under which rule
	// (as the audit record's verdict does).
	Layer     string `yaml:"layer,omitempty" json:"layer,omitempty"`
	Rule      string `yaml:"rule,omitempty" json:"rule,omitempty"`
	Truncated bool   `yaml:"truncated,omitempty" json:"truncated,omitempty"`
	Cached    bool   `yaml:"cached,omitempty" json:"cached,omitempty"`
	// Command is the argv of each command a command tool ran, after binding its arguments.
	Command [][]string `yaml:"command,omitempty" json:"command,omitempty"`
	// Changes are the files the call changed (write_file), with digests and a diff.
	Changes []FileChange `yaml:"changes,omitempty" json:"changes,omitempty"`
}

// FileChange is one file a tool call changed: its SHA-256 digests before and after ("" for
// a file that did not exist) and, for a text file within the diff limit, a unified diff;
// DiffOmitted says why a diff is missing.
type FileChange struct {
	Path        string `yaml:"path" json:"path"`
	Before      string `yaml:"before,omitempty" json:"before,omitempty"`
	After       string `yaml:"after" json:"after"`
	Diff        string `yaml:"diff,omitempty" json:"diff,omitempty"`
	DiffOmitted string `yaml:"diff_omitted,omitempty" json:"diff_omitted,omitempty"`
}

// ToolStats sums a step's tool calls.
type ToolStats struct {
	TotalCalls      int   `yaml:"total_calls" json:"total_calls"`
	Successful      int   `yaml:"successful" json:"successful"`
	Failed          int   `yaml:"failed" json:"failed"`
	Denied          int   `yaml:"denied" json:"denied"`
	TotalDurationMs int64 `yaml:"total_duration_ms" json:"total_duration_ms"`
}

// Add counts one finished call.
func (s *ToolStats) Add(r ToolCallResult) {
	s.TotalCalls++
	switch {
	case r.Denied:
		s.Denied++
	case r.Success:
		s.Successful++
	default:
		s.Failed++
	}
	s.TotalDurationMs += r.DurationMs
}

// Tokens counts model tokens where the provider reports them.
type Tokens struct {
	Input  int `yaml:"input" json:"input"`
	Output int `yaml:"output" json:"output"`
	Total  int `yaml:"total" json:"total"`
}

// Add accumulates another count.
func (t *Tokens) Add(o Tokens) {
	t.Input += o.Input
	t.Output += o.Output
	t.Total += o.Total
}

// Turn is one model reply of an agent step.
type Turn struct {
	// Usage is the tokens of this reply, where the provider reports them.
	Usage *Tokens `yaml:"usage,omitempty" json:"usage,omitempty"`
	// Text is the model's text in this reply (what it said between or before its calls).
	Text string `yaml:"text,omitempty" json:"text,omitempty"`
	// Calls are the ids of the tool calls the reply asked for.
	Calls []string `yaml:"calls,omitempty" json:"calls,omitempty"`
	// FinishReason is why the reply ended: stop, tool_calls, length, refusal,
	// content_filter, or a provider's own reason.
	FinishReason string `yaml:"finish_reason" json:"finish_reason"`
	// Divergence says, under --replay, how the request differed from the cassette's where
	// replay went on anyway (a tool result that failed now and succeeded when recorded).
	Divergence string `yaml:"divergence,omitempty" json:"divergence,omitempty"`
}

// Conversation is the message history of an agent step in conversation mode.
type Conversation struct {
	Turns     int       `yaml:"turns" json:"turns"`
	StoppedBy string    `yaml:"stopped_by,omitempty" json:"stopped_by,omitempty"`
	Messages  []Message `yaml:"messages" json:"messages"`
}

// Message is one message of a conversation, in a provider-neutral form.
type Message struct {
	Role    string `yaml:"role" json:"role"` // system | user | assistant | tool
	Content string `yaml:"content,omitempty" json:"content,omitempty"`
	// ContentFile and ContentSize replace Content in a state file when the store moved a large
	// content beside it (as ToolCallResult's OutputFile does); in memory they are empty.
	ContentFile string    `yaml:"content_file,omitempty" json:"content_file,omitempty"`
	ContentSize int64     `yaml:"content_size,omitempty" json:"content_size,omitempty"`
	ToolCalls   []CallRef `yaml:"tool_calls,omitempty" json:"tool_calls,omitempty"`
	ToolCallID  string    `yaml:"tool_call_id,omitempty" json:"tool_call_id,omitempty"`
	Name        string    `yaml:"name,omitempty" json:"name,omitempty"`
	IsError     bool      `yaml:"is_error,omitempty" json:"is_error,omitempty"`
	// Thinking holds the reasoning blocks of an assistant message (Anthropic's extended
	// thinking), kept exactly as the model sent them: the API refuses a conversation whose
	// last assistant turn with tool calls comes back without them, or with them changed.
	Thinking []Thinking `yaml:"thinking,omitempty" json:"thinking,omitempty"`
}

// Thinking is one reasoning block of a reply: its text and the signature that lets the API
// check it comes back unmodified, or (Redacted) the encrypted data of a block the provider
// withheld.
type Thinking struct {
	Text      string `yaml:"text,omitempty" json:"text,omitempty"`
	Signature string `yaml:"signature,omitempty" json:"signature,omitempty"`
	// Redacted holds the data of a redacted_thinking block; Text and Signature are empty.
	Redacted string `yaml:"redacted,omitempty" json:"redacted,omitempty"`
}

// CallRef is a tool call inside a message: the model's request.
type CallRef struct {
	ID        string `yaml:"id" json:"id"`
	Name      string `yaml:"name" json:"name"`
	Arguments string `yaml:"arguments" json:"arguments"` // JSON object text
}

// Equal reports whether r and o record the same result, field by field (the state store
// compares records at every save, so without reflection).
func (r *ToolCallResult) Equal(o *ToolCallResult) bool {
	if r == nil || o == nil {
		return r == o
	}
	return r.Success == o.Success && r.Output == o.Output && r.OutputFile == o.OutputFile &&
		r.OutputSize == o.OutputSize && r.Error == o.Error && r.DurationMs == o.DurationMs &&
		r.Approval == o.Approval && r.Denied == o.Denied && r.Layer == o.Layer && r.Rule == o.Rule &&
		r.Truncated == o.Truncated && r.Cached == o.Cached &&
		slices.EqualFunc(r.Command, o.Command, slices.Equal) && slices.Equal(r.Changes, o.Changes)
}

// AgentRecord says which model an agent step talked to: the provider's name, the model asked
// for, the host of the provider's base URL, and the --replay or --record cassette file.
type AgentRecord struct {
	Provider string `yaml:"provider" json:"provider"`
	Model    string `yaml:"model,omitempty" json:"model,omitempty"`
	Endpoint string `yaml:"endpoint,omitempty" json:"endpoint,omitempty"`
	Cassette string `yaml:"cassette,omitempty" json:"cassette,omitempty"`
}
