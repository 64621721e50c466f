// Package durable is awf's temporal engine: an awf run as a Temporal workflow execution whose
// id is the run id. The workflow runs awf's own runner, deterministically: every port that
// touches the world (shell steps, tool calls, agent steps, sub-workflow files) is a Temporal
// activity executed by a worker through the same wiring as a local run (the Factory: governed
// tools, sandbox, audit log, providers), and everything else (templates, conditions, retries,
// state) is replayed from the workflow's history. It links the Temporal SDK, so it lives in
// the awf-temporal program, not in awf (see docs/distributed.md).
package durable

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/awf-dev/awf/internal/application/runner"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/tool"
)

// Names on the Temporal server: the workflow type, the activities, the signal of approval
// decisions and the queries of a run in progress. They are part of the recorded histories:
// renaming one breaks runs in flight.
const (
	WorkflowName   = "awf.run"
	ActivityClaim  = "awf.claim"
	ActivityShell  = "awf.shell"
	ActivityTool   = "awf.tool"
	ActivityAgent  = "awf.agent"
	ActivityRead   = "awf.read"
	SignalDecision = "awf.decision"
	QueryState     = "awf.state"
	QueryEvents    = "awf.events"
	QueryWaiting   = "awf.waiting"
)

// RunInput starts a run: the workflow as its files were when it was submitted (the run keeps
// that definition whatever later deploys change), its inputs and where it runs.
type RunInput struct {
	RunID string
	// File is the workflow file's absolute path; Files the content of it and of every file
	// it loads (sub-workflows), by absolute path.
	File  string
	Files map[string][]byte
	// Sources are the files' digests, recorded in the state as a local run records them.
	Sources map[string]string
	Inputs  map[string]any
	// WorkDir is where the run's steps and tools work, on the worker.
	WorkDir string
	// Stats answer the file_exists and dir_exists checks of inputs, by path.
	Stats map[string]Stat
	// Parent and Lineage are set for the run of a sub-workflow step (a child workflow): its
	// parent run and the workflows from the root down to the parent. Queue is the task queue
	// of the activities its parent's worker claimed ("" for a shared workspace).
	Parent  string
	Lineage []string
	Queue   string
	// Environ is the env namespace of templates: the submitter's environment without
	// variables that look like secrets (they would be kept in the history).
	Environ []string
	// SharedWorkspace says every worker sees WorkDir (a shared file system): activities go to
	// the common task queue and a lost worker's activity is retried by another. Otherwise the
	// first worker to take the run keeps all its activities (its host task queue) and a lost
	// worker fails the run.
	SharedWorkspace bool
	// Model settings of agent steps (--provider, --model, --replay, --record) and approval
	// flags (--approve, --yes, --non-interactive) as given to awf run.
	Provider, Model, Replay, Record string
	Approve, NonInteractive         string
	Yes                             bool
	// HeartbeatTimeout and PinnedWait time the run's activities, ContinueAfter bounds the
	// history of one of its executions (Settings; zero: the defaults).
	HeartbeatTimeout, PinnedWait time.Duration
	ContinueAfter                int
	// Continued is what the run's previous execution carried over (continue-as-new), nil in
	// its first.
	Continued *Continuation
}

// RunResult is a finished run: its final state and, when it failed, its error and kind (the
// exit code's class).
type RunResult struct {
	State *state.RunState
	// Children are the runs of its sub-workflow steps, as a local run saves them.
	Children []*state.RunState
	Error    string
	Kind     fault.Kind
	// Events are the progress events of a sub-workflow's run, for its parent to show.
	Events []Event
}

// Err is the run's error as the runner returned it, classified.
func (r RunResult) Err() error {
	if r.Error == "" {
		return nil
	}
	return fault.New(r.Kind, "%s", r.Error)
}

// RunRef is what every activity of a run carries: the run's id and definition and, for host
// pinned runs, nothing else; the worker rebuilds the run's tools from it once. The definition's
// files travel by their digest (FilesDigest): only a worker that has not built the run asks
// for them (Failure.NeedFiles), and gets them with the same call again (runActivity). Carried
// with every tool call and model turn, they made the history, or the payload store, grow with
// the calls times the size of the workflow.
type RunRef struct {
	ID          string
	File        string
	FilesDigest string
	// Files are set only in a call that a worker asked them for; without FilesDigest (a run
	// started by an older awf) always.
	Files                           map[string][]byte
	Inputs                          map[string]any
	WorkDir                         string
	Provider, Model, Replay, Record string
	Approve, NonInteractive         string
	Yes                             bool
}

// Failure is an error carried across the history with its kind.
type Failure struct {
	Message string
	Kind    fault.Kind
	// NeedFiles says the worker has not built the run and needs its files: the workflow runs
	// the activity again with them (runActivity).
	NeedFiles bool `json:",omitempty"`
}

func failure(err error) *Failure {
	if err == nil {
		return nil
	}
	return &Failure{Message: err.Error(), Kind: fault.KindOf(err), NeedFiles: errors.Is(err, errNeedFiles)}
}

// errNeedFiles is a worker's answer to a call of a run it has not built, whose files the call
// does not carry.
var errNeedFiles = errors.New("this worker has not built the run: its files are needed")

// digestFiles is the digest of a run's files, by which its activities name them.
func digestFiles(files map[string][]byte) string {
	b, _ := json.Marshal(files) // sorted by path
	return digest(b)
}

func (f *Failure) err() error {
	if f == nil {
		return nil
	}
	return fault.New(f.Kind, "%s", f.Message)
}

// ShellInput is one shell step attempt: the request alone (no run definition: every shell
// activity's input is kept in the history).
type ShellInput struct {
	Req ports.ProcessRequest
}

// ShellOutput is its result.
type ShellOutput struct {
	Result ports.ProcessResult
	Err    *Failure
}

// ToolInput is one tool call of a tool step, with the decision on it when a person gave one.
type ToolInput struct {
	Run   RunRef
	Req   ports.ToolRequest
	Grant *Decision
}

// ToolOutput is its result, or the approval it waits for.
type ToolOutput struct {
	Result  tool.Result
	Err     *Failure
	Pending *Pending
	// Recovery is what the worker decided about a call a lost worker left in flight.
	Recovery *state.Recovery
	// Intent is what the tool's check needs of the call, for its record (tool.Checker).
	Intent map[string]any
}

// AgentInput is one attempt of an agent step.
type AgentInput struct {
	Run      RunRef
	Step     string
	Scope    ports.Scope
	Attempt  int
	Previous *state.StepState
	// Live is the step's record as the attempt starts (tool calls, stats, tokens and
	// conversation of earlier attempts); Others the records continue_from may read.
	Live   state.StepState
	Others map[string]state.StepState
}

// AgentOutput is its result: the outcome, the step's record as the loop left it, and the
// progress events it emitted.
type AgentOutput struct {
	Outcome runner.StepOutcome
	Record  state.StepState
	Events  []ports.Event
	Err     *Failure
}

// Pending is a call waiting for a person: what `awf status` shows and `awf approve` answers.
type Pending struct {
	CallID string
	Step   string
	Tool   string
	Args   map[string]any
	Reason string
	// Digest binds a decision to what was shown: the tool, its canonical arguments and the
	// run's policy (see digestCall).
	Digest  string
	Timeout time.Duration
	Since   time.Time
}

// Decision is a person's answer to a waiting call, sent by awf approve or awf deny.
type Decision struct {
	CallID string
	// Digest, when set, must equal the waiting call's: an answer to what was shown.
	Digest string
	Allow  bool
	Reason string
	// By and Host say who decided and from which machine; the audit records them.
	By   string
	Host string
	// TimedOut marks the denial of a call nobody answered in time.
	TimedOut bool
}

// Validate checks a decision before it is sent.
func (d Decision) Validate() error {
	if strings.TrimSpace(d.CallID) == "" {
		return fault.New(fault.Usage, "a decision needs the call id (awf status RUN lists the calls waiting)")
	}
	return nil
}

// errWorkerLost is the failure of an activity whose worker went away with the run's
// workspace (a host-pinned run).
var errWorkerLost = errors.New("the worker holding this run's workspace is gone")

func describeDecision(d Decision) string {
	verb := "denied"
	if d.Allow {
		verb = "approved"
	}
	return fmt.Sprintf("%s by %s on %s", verb, d.By, d.Host)
}
