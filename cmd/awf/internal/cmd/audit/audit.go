// Package audit implements `awf audit`: the audit log's records, filtered by run, tool,
// decision, outcome and age, as a table for people or as JSON Lines for scripts.
package audit

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/cmd/awf/internal/render"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	auditlog "github.com/awf-dev/awf/internal/infrastructure/audit"
)

// Options are everything `awf audit` needs.
type Options struct {
	IO *iostreams.IOStreams
	// Path returns the audit log's path (configuration: --audit-log, AWF_AUDIT_LOG,
	// audit_log, default .awf/audit.jsonl).
	Path func() (string, error)
	Now  func() time.Time

	Query
	Output cmdutil.Format
}

// Query is what `awf audit` selects records by, as its flags give it (and the audit page of
// awf ui its form): empty fields select everything.
type Query struct {
	RunID    string
	Tool     string
	Decision string
	Outcome  string
	Since    string
}

var (
	decisions = []string{ports.DecisionAllow, ports.DecisionDeny}
	outcomes  = []string{ports.OutcomeOK, ports.OutcomeError, ports.OutcomeDenied, ports.OutcomeTimeout, ports.OutcomeUnknown, ports.OutcomeStarted}
)

// NewCmdAudit returns `awf audit`.
func NewCmdAudit(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Now: time.Now, Path: func() (string, error) {
		cfg, err := f.Config()
		if err != nil {
			return "", err
		}
		return cfg.AuditLog, nil
	}}
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Show the audit log of tool calls",
		Long: `Show the audit log: one record per tool call, allowed or not, with who decided
(auto, user, rule, policy, quota, non_interactive, timeout, flag, gate), the sandbox decision,
the outcome and the duration. Arguments are shown with secrets masked, as they were written.
A call is logged as started before it runs, and that record is shown only while no result
follows it: outcome "started" is a call still running, or one awf was killed in.
With --output json, each record is printed as one JSON object per line (JSON Lines).
The log is read twice and never held: a log of any size is shown in a few MB, as it is read.
Records appended while it is read are left to the next awf audit.`,
		Example: `  awf audit --run 3f2a... --decision deny
  awf audit --tool shell --since 2h --output json`,
		Args: cmdutil.MaxArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := opts.Filter(time.Time{}); err != nil {
				return err
			}
			if runF == nil {
				runF = runAudit
			}
			return runF(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.RunID, "run", "", "only calls of the run with this `ID` (or the start of it, as the table shows)")
	fl.StringVar(&opts.Tool, "tool", "", "only calls of the tool with this `NAME`")
	fl.StringVar(&opts.Decision, "decision", "", "only calls allowed (allow) or refused (deny)")
	fl.StringVar(&opts.Outcome, "outcome", "", "only calls with this outcome: ok, error, denied, timeout, unknown (cut off by a crash), started (not ended)")
	fl.StringVar(&opts.Since, "since", "", "only calls in the last `DURATION` (90s, 15m, 2h, 7d)")
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	_ = cmd.RegisterFlagCompletionFunc("run", cmdutil.CompleteRunIDs(f))
	_ = cmd.RegisterFlagCompletionFunc("tool", cmdutil.CompleteTools(f))
	_ = cmd.RegisterFlagCompletionFunc("decision", cmdutil.CompleteValues(decisions...))
	_ = cmd.RegisterFlagCompletionFunc("outcome", cmdutil.CompleteValues(outcomes...))
	_ = cmd.RegisterFlagCompletionFunc("since", cobra.NoFileCompletions)
	return cmd
}

// Filter checks q and returns the audit log filter it stands for at time now (Since counts back
// from now). A value awf audit does not know is a fault.Usage error naming its flag.
func (q Query) Filter(now time.Time) (auditlog.Filter, error) {
	if q.Decision != "" && !slices.Contains(decisions, q.Decision) {
		return auditlog.Filter{}, fault.New(fault.Usage, "--decision %q: want allow or deny", q.Decision)
	}
	if q.Outcome != "" && !slices.Contains(outcomes, q.Outcome) {
		return auditlog.Filter{}, fault.New(fault.Usage, "--outcome %q: want one of %s", q.Outcome, strings.Join(outcomes, ", "))
	}
	since, err := parseSince(q.Since)
	if err != nil {
		return auditlog.Filter{}, err
	}
	f := auditlog.Filter{RunID: q.RunID, Tool: q.Tool, Decision: q.Decision, Outcome: q.Outcome}
	if since > 0 {
		f.Since = now.Add(-since)
	}
	return f, nil
}

// parseSince reads a duration, also in days ("7d").
func parseSince(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(days, 64)
		if err == nil && n > 0 {
			return time.Duration(n * float64(24*time.Hour)), nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fault.New(fault.Usage, "--since %q: want a positive duration such as 90s, 15m, 2h or 7d", s)
	}
	return d, nil
}

func runAudit(_ context.Context, opts *Options) error {
	path, err := opts.Path()
	if err != nil {
		return err
	}
	filter, err := opts.Filter(opts.Now())
	if err != nil {
		return err
	}
	out := newRecordWriter(opts.IO.Out, opts.Output.JSON())
	var (
		runs  []string // the runs --run selected, to refuse a prefix several runs share
		seen  = map[string]bool{}
		found bool
	)
	heads := func(r ports.AuditRecord) {
		found = true
		out.size(r)
		if opts.RunID != "" && !seen[r.RunID] {
			seen[r.RunID] = true
			runs = append(runs, r.RunID)
		}
	}
	start := func() error {
		if len(runs) > 1 {
			return cmdutil.AmbiguousRun(opts.RunID, runs)
		}
		if found {
			return out.start()
		}
		return nil
	}
	stats, err := auditlog.ScanFile(path, filter, heads, start, out.record)
	if err == nil {
		err = out.flush()
	}
	if err != nil {
		return err
	}
	if stats.Skipped > 0 {
		fmt.Fprintf(opts.IO.ErrOut, "warning: %s: %d damaged lines skipped\n", path, stats.Skipped)
	}
	if stats.Torn {
		fmt.Fprintf(opts.IO.ErrOut, "warning: %s: the last line is incomplete (a write was cut short) and was ignored\n", path)
	}
	if !found && !opts.Output.JSON() {
		fmt.Fprintf(opts.IO.ErrOut, "no matching records in %s\n", path)
	}
	return nil
}

// recordWriter writes records as they are read: one compact JSON object per line, or an
// aligned table for people whose column widths were measured before the first row (size),
// so that neither holds the log.
type recordWriter struct {
	w     *bufio.Writer
	json  *json.Encoder
	width [len(tableHeader) - 1]int // the widths of the table's columns but the last
	err   error
}

// tableHeader names the table's columns; the last, WHAT, is not padded.
var tableHeader = [...]string{"TIME", "RUN", "STEP", "TOOL", "DECISION", "OUTCOME", "DURATION", "WHAT"}

// tablePadding is the spaces at least between two columns.
const tablePadding = 2

func newRecordWriter(w io.Writer, asJSON bool) *recordWriter {
	out := &recordWriter{w: bufio.NewWriterSize(w, 64<<10)}
	if asJSON {
		out.json = json.NewEncoder(out.w)
		out.json.SetEscapeHTML(false)
		return out
	}
	out.widen(tableHeader[:len(tableHeader)-1])
	return out
}

// size makes room in the table's columns for record r, whose head is enough.
func (o *recordWriter) size(r ports.AuditRecord) {
	if o.json == nil {
		o.widen(sizedCells(r))
	}
}

func (o *recordWriter) widen(cells []string) {
	for i, c := range cells {
		o.width[i] = max(o.width[i], utf8.RuneCountInString(c))
	}
}

// start writes the table's header.
func (o *recordWriter) start() error {
	if o.json == nil {
		o.row(tableHeader[:len(tableHeader)-1], tableHeader[len(tableHeader)-1])
	}
	return o.err
}

// record writes r.
func (o *recordWriter) record(r ports.AuditRecord) error {
	if o.json != nil {
		if err := o.json.Encode(r); err != nil {
			return fmt.Errorf("write record: %w", err)
		}
		return nil
	}
	o.row(sizedCells(r), cell(What(r), 72))
	return o.err
}

func (o *recordWriter) row(cells []string, last string) {
	for i, c := range cells {
		o.w.WriteString(c)
		o.w.WriteString(strings.Repeat(" ", o.width[i]-utf8.RuneCountInString(c)+tablePadding))
	}
	o.w.WriteString(last)
	if err := o.w.WriteByte('\n'); err != nil && o.err == nil {
		o.err = fmt.Errorf("write record: %w", err)
	}
}

func (o *recordWriter) flush() error {
	if err := o.w.Flush(); err != nil {
		return fmt.Errorf("write records: %w", err)
	}
	return o.err
}

// sizedCells are the cells of record r's row but the last (WHAT), in local time: what a
// record's head holds.
func sizedCells(r ports.AuditRecord) []string {
	return []string{r.Time.Local().Format("2006-01-02 15:04:05"), render.Line(short(r.RunID, 8)), cell(r.Step, 24), cell(r.Tool, 24),
		render.Line(Decision(r)), render.Line(r.Outcome), (time.Duration(r.DurationMs) * time.Millisecond).String()}
}

// Decision says who decided a call of record r: "allow (auto)", "deny (policy)".
func Decision(r ports.AuditRecord) string {
	switch {
	case r.Sandbox != nil && r.Sandbox.Decision == ports.DecisionDeny:
		return "deny (policy)"
	case r.Approval != nil:
		return r.Approval.Decision + " (" + r.Approval.By + ")"
	case r.Denied():
		return "deny"
	}
	return "allow"
}

// What is what the call of record r attempted: its summary, else its arguments (masked, as
// logged). A refused call is shown by what it asked for, not by the refusal's text.
func What(r ports.AuditRecord) string {
	if r.Meta != "" {
		return r.Meta
	}
	data, _ := json.Marshal(r.Arguments)
	return string(data)
}

func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// cell makes a table cell: one line, control characters escaped, cut to n runes.
func cell(s string, n int) string {
	if s == "" {
		return "-"
	}
	s = render.Line(s)
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}
