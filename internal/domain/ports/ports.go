// Package ports declares the interfaces through which the application layer reaches the world:
// state storage, audit, approval, process execution, templates, tools, model providers, events
// and time. Adapters in internal/infrastructure implement them; ports/portstest holds fakes and
// conformance suites.
package ports

import (
	"context"
	"fmt"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// Clock gives the time, so that the domain and application never call time.Now.
type Clock interface {
	Now() time.Time
}

// ClockFunc adapts a function to Clock.
type ClockFunc func() time.Time

// Now calls f.
func (f ClockFunc) Now() time.Time { return f() }

// StateStore keeps run states. Save must be atomic: a crash at any moment leaves either the
// previous or the new state readable. Implementations must be safe for concurrent use.
type StateStore interface {
	// Save writes the run's state. Large step outputs may be stored beside the state file;
	// Load restores them.
	Save(ctx context.Context, run *state.RunState) error
	// Load reads one run by id. An unknown id is a fault.Usage error.
	Load(ctx context.Context, id string) (*state.RunState, error)
	// List returns summaries of every run, newest first. It reads every run's state: its cost
	// grows with the runs kept.
	List(ctx context.Context) ([]RunSummary, error)
	// IDs returns the id of every run, in the order of the ids, without reading any state:
	// what a command that is given a run's id, or the first characters of it, looks it up
	// in, at a cost that stays small however many runs are kept.
	IDs(ctx context.Context) ([]string, error)
	// Path returns where the run's state file is (or would be).
	Path(id string) string
	// Lock makes the caller the only owner of run id until unlock is called or the process
	// ends, whichever comes first, so that no two processes run or resume one run at once. A
	// run another owner holds is a *RunBusyError. The run need not have a state yet.
	Lock(ctx context.Context, id string) (unlock func(), err error)
	// Owner reports who owns run id now; ok is false when nobody does. A run whose state says
	// running and that nobody owns was cut off: its process died without recording the end.
	Owner(id string) (o RunOwner, ok bool)
}

// RunOwner is the process that owns a run: the one running or resuming it.
type RunOwner struct {
	PID   int
	Host  string
	Since time.Time // zero when unknown
}

// String names the owner for people: "process 1234 on host build-7".
func (o RunOwner) String() string {
	if o.PID == 0 {
		return "another process (it has not said which yet)"
	}
	s := fmt.Sprintf("process %d on host %s", o.PID, o.Host)
	if !o.Since.IsZero() {
		s += " since " + o.Since.UTC().Format(time.RFC3339)
	}
	return s
}

// RunBusyError is the error of taking a run that another process owns. Its kind is
// fault.Usage: the user started a second run or resume of one run.
type RunBusyError struct {
	ID    string
	Owner RunOwner
}

func (e *RunBusyError) Error() string {
	return fmt.Sprintf("run %s is in use by %s: only one process may run or resume it at a time", e.ID, e.Owner)
}

// FaultKind classifies the error as fault.Usage.
func (e *RunBusyError) FaultKind() fault.Kind { return fault.Usage }

// StepJournal is implemented by state stores that can save the changes of one step for less
// than a whole Save: the runner saves a step when it starts and ends, an agent step before and
// after every tool call, and a store that rewrites the whole run each time pays for every
// earlier step and call again.
type StepJournal interface {
	// AppendStep saves run as Save does, with Save's guarantees (atomic, crash-safe once it
	// returns), except that changes to steps other than step may wait for the next Save. It
	// is for saves that change only step's record and the run's UpdatedAt, step being
	// possibly new, added at the end of run.Order (other changes may cost a whole Save). A
	// store may find what changed by identity: steps are added at the end of run.Order and
	// never removed nor reordered in place; a tool call record's Arguments and Result, and a
	// message's ToolCalls, are replaced rather than changed in place. A change made otherwise
	// may wait for the next Save. A step the run does not have is a fault.System error.
	AppendStep(ctx context.Context, run *state.RunState, step string) error
}

// StepChanges says what a save of a step changed in the step's lists, so that a StepJournal
// need not compare every tool call record, message and turn with what it saved last: at the
// two-thousandth call of an agent step, that comparison would cost more than the save. A
// caller that gives it (WithStepChanges) promises that, since the step's last save, of the
// tool call records that save held only those at the indexes in Calls changed (records added
// after them need no mention), and that the conversation's messages and the step's turns were
// only added to at their ends, or replaced by new lists. A save without it, or a list cut
// short, is compared whole.
type StepChanges struct {
	Calls []int
}

type stepChangesKey struct{}

// WithStepChanges returns ctx saying what the save made with it changed (see StepChanges).
func WithStepChanges(ctx context.Context, ch StepChanges) context.Context {
	return context.WithValue(ctx, stepChangesKey{}, ch)
}

// StepChangesOf returns what ctx says a save changed, and false when it says nothing.
func StepChangesOf(ctx context.Context) (StepChanges, bool) {
	ch, ok := ctx.Value(stepChangesKey{}).(StepChanges)
	return ch, ok
}

// StateRecovery is implemented by state stores that keep a run in more than one piece (a
// state file and a journal of later changes) and can read one whose later changes are
// damaged.
type StateRecovery interface {
	// LoadValid reads run id as Load does, except that changes after the first one that
	// cannot be read are left out; dropped says what was ("" when nothing was). A run whose
	// base record is damaged is an error as with Load.
	LoadValid(ctx context.Context, id string) (run *state.RunState, dropped string, err error)
}

// LoadRun reads run id from s: with fromLastValid, and a store that can (StateRecovery), up
// to its last valid change, dropped saying what was left out; otherwise as s.Load does.
func LoadRun(ctx context.Context, s StateStore, id string, fromLastValid bool) (run *state.RunState, dropped string, err error) {
	if rec, ok := s.(StateRecovery); ok && fromLastValid {
		return rec.LoadValid(ctx, id)
	}
	run, err = s.Load(ctx, id)
	return run, "", err
}

// RunSummary is one line of `awf history`.
type RunSummary struct {
	ID         string       `json:"run_id"`
	Workflow   string       `json:"workflow"`
	Status     state.Status `json:"status"`
	StartedAt  time.Time    `json:"started_at"`
	FinishedAt *time.Time   `json:"finished_at,omitempty"`
	Error      string       `json:"error,omitempty"`
	StateFile  string       `json:"state_file"`
	// Parent is the run that started this one as a sub-workflow.
	Parent string `json:"parent,omitempty"`
	// DurationMs is the run's active time (state.RunState.Duration).
	DurationMs int64 `json:"duration_ms"`
	// Unreadable says why the run's state file could not be read (damaged, truncated, not a
	// state file); the run is listed with only its ID and StateFile then.
	Unreadable string `json:"unreadable,omitempty"`
	// Counts counts the run's tool calls when the summary comes from the store's index of
	// finished runs; nil when it was read from the head of the state file, which does not
	// hold them (load the run).
	Counts *state.CallCounts `json:"-"`
}

// WorkflowLoader loads and validates a workflow file (for sub-workflows and resume). On a
// workflow.Problems error it may also return the partial workflow, for further static checks
// only; callers that run workflows must treat any error as fatal.
type WorkflowLoader interface {
	Load(path string) (*workflow.Workflow, error)
}

// Scope is what templates and expressions see: "inputs", "states", "env", "workflow", "run",
// "args" and, in conditions, whatever the caller adds.
type Scope map[string]any

// BoundCommand is a command template after binding: Script is shell source in which every
// template value is a reference to a variable in Vars, so no value can change the script's
// syntax.
type BoundCommand struct {
	Script string
	Vars   map[string]string
	// Argv is what a reviewer reads of the command: the words of each simple command with
	// the bound values in place (a word that is not static is its source text, $HOME say).
	Argv [][]string
}

// Templater evaluates `{{ expr }}` templates and bare expressions. Compiled forms are cached,
// so repeated evaluation of one template parses it once. Safe for concurrent use.
type Templater interface {
	// Render evaluates a text template. A reference to something missing is an error.
	Render(tmpl string, scope Scope) (string, error)
	// Command binds a command template: literal text is shell source, each value is bound
	// as a variable. raw(expr) splices text into the source on purpose.
	Command(tmpl string, scope Scope) (BoundCommand, error)
	// Eval evaluates a bare expression.
	Eval(expr string, scope Scope) (any, error)
	// Check compiles every template and expression of the workflow and checks references
	// that can be known statically (steps, inputs, namespaces).
	Check(wf *workflow.Workflow) workflow.Problems
}

// ProcessRequest asks for a shell script to be run.
type ProcessRequest struct {
	Script string
	Vars   map[string]string // bound literally; any size
	// Argv is the bound command as a reviewer reads it (BoundCommand.Argv), for records;
	// runners ignore it.
	Argv [][]string
	Dir  string
	// BaseEnv is the environment the script starts from ("K=V" entries); nil means a
	// minimal one (PATH, HOME, LANG, TMPDIR). Env is added on top.
	BaseEnv     []string
	Env         map[string]string
	Stdin       string
	Timeout     time.Duration // 0: no timeout beyond ctx
	OutputLimit int64         // 0: the runner's default cap
	Policy      *workflow.Policy
	// Restrictions narrow Policy for the tool making the request (nil: none); they apply
	// only with a Policy.
	Restrictions *workflow.Restrictions
}

// ProcessResult is a finished process. A non-zero exit is a result, not an error.
type ProcessResult struct {
	Stdout    string
	Stderr    string
	ExitCode  int
	Truncated bool
	Duration  time.Duration
}

// ProcessRunner runs shell scripts as child processes. A timeout or a cancelled context kills
// everything the script started and returns an error of kind fault.Execution.
type ProcessRunner interface {
	Run(ctx context.Context, req ProcessRequest) (ProcessResult, error)
}

// ToolInvoker resolves a tool by name and runs one call through the governed path. An unknown
// tool is an error of kind fault.Invalid whose message suggests the nearest name.
type ToolInvoker interface {
	Invoke(ctx context.Context, req ToolRequest) (tool.Result, error)
}

// ToolRequest is one call of a tool by a step or a model.
type ToolRequest struct {
	RunID    string
	Step     string
	CallID   string
	Name     string
	Args     map[string]any
	Input    string
	Provider string
	Timeout  time.Duration
	// Scope is the calling step's template scope (inputs, env, workflow, run); custom command
	// tools bind {{inputs.x}} from it. nil when the caller has none.
	Scope Scope
}

// Events receives progress from the application; the CLI renders it. Emit must not block for
// long and must be safe for concurrent use.
type Events interface {
	Emit(Event)
}

// EventsFunc adapts a function to Events.
type EventsFunc func(Event)

// Emit calls f.
func (f EventsFunc) Emit(e Event) { f(e) }

// EventKind names an event.
type EventKind string

// Event kinds.
const (
	RunStarted    EventKind = "run_started"
	RunFinished   EventKind = "run_finished"
	StepStarted   EventKind = "step_started"
	StepRetrying  EventKind = "step_retrying"
	StepFinished  EventKind = "step_finished"
	ToolStarted   EventKind = "tool_started"
	ToolFinished  EventKind = "tool_finished"
	Warning       EventKind = "warning"
	ModelResponse EventKind = "model_response"
)

// Event is one progress report. Fields not relevant to a kind are zero.
type Event struct {
	Kind     EventKind     `json:"event"`
	Time     time.Time     `json:"time"`
	RunID    string        `json:"run_id,omitempty"`
	Step     string        `json:"step,omitempty"`
	Tool     string        `json:"tool,omitempty"`
	CallID   string        `json:"call_id,omitempty"`
	Meta     string        `json:"meta,omitempty"`
	Status   string        `json:"status,omitempty"`
	Attempt  int           `json:"attempt,omitempty"`
	Duration time.Duration `json:"duration_ns,omitempty"`
	Message  string        `json:"message,omitempty"`
}
