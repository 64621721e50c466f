package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/cmd/awf/internal/render"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/infrastructure/audit"
	"github.com/awf-dev/awf/internal/infrastructure/config"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// writeLog writes three records and a torn line to an audit log and returns its path.
func writeLog(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	log, err := audit.Open(path, audit.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	recs := []ports.AuditRecord{
		{Time: now.Add(-3 * time.Hour), RunID: "run-a", Step: "build", CallID: "1", Tool: "shell",
			Arguments: map[string]any{"command": "make"}, Meta: "run make",
			Approval: &ports.AuditApproval{Decision: "allow", By: "rule", Rule: "approval.rules[0]"},
			Sandbox:  &ports.AuditSandbox{Decision: "allow"}, Outcome: "ok", DurationMs: 1200, OutputSize: 10},
		{Time: now.Add(-30 * time.Minute), RunID: "run-b", Step: "fix", CallID: "2", Tool: "read_file",
			Arguments: map[string]any{"path": "../../etc/shadow"}, Meta: "read ../../etc/shadow",
			Sandbox: &ports.AuditSandbox{Decision: "deny", Rule: "sandbox.paths.read", Layer: "L1"},
			Outcome: "denied", Error: "denied by policy: path \"../../etc/shadow\" is outside the workspace"},
		{Time: now.Add(-10 * time.Minute), RunID: "run-b", Step: "fix", CallID: "3", Tool: "shell",
			Arguments: map[string]any{"command": "curl -H 'Authorization: Bearer abcdefghijk' x"},
			Approval:  &ports.AuditApproval{Decision: "deny", By: "non_interactive"}, Sandbox: &ports.AuditSandbox{Decision: "allow"},
			Outcome: "denied", Error: "denied: approval required and no terminal (run with --yes or --approve auto)"},
	}
	for _, r := range recs {
		if err := log.Record(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	log.Close()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"time":"2026-03-01T11:59:00Z","tool":"sh`)
	f.Close()
	return path
}

// streams are the command's output buffers.
type streams struct{ out, errOut *bytes.Buffer }

func options(path string) (*Options, streams) {
	ios, _, out, errOut := iostreams.Test()
	return &Options{IO: ios, Now: func() time.Time { return now }, Path: func() (string, error) { return path, nil }}, streams{out, errOut}
}

func TestJSONLines(t *testing.T) {
	path := writeLog(t)
	tests := []struct {
		name string
		set  func(*Options)
		want []string // call ids
	}{
		{"all", func(*Options) {}, []string{"1", "2", "3"}},
		{"run", func(o *Options) { o.RunID = "run-b" }, []string{"2", "3"}},
		{"tool", func(o *Options) { o.Tool = "shell" }, []string{"1", "3"}},
		{"deny", func(o *Options) { o.Decision = "deny" }, []string{"2", "3"}},
		{"allow", func(o *Options) { o.Decision = "allow" }, []string{"1"}},
		{"since", func(o *Options) { o.Since = "1h" }, []string{"2", "3"}},
		{"since days", func(o *Options) { o.Since = "1d" }, []string{"1", "2", "3"}},
		{"run and tool", func(o *Options) { o.RunID, o.Tool = "run-b", "shell" }, []string{"3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts, ios := options(path)
			opts.Output = cmdutil.FormatJSON
			tc.set(opts)
			if err := runAudit(t.Context(), opts); err != nil {
				t.Fatal(err)
			}
			out := ios.out.String()
			ids := []string{}
			for line := range strings.Lines(out) {
				var rec map[string]any
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("line %q is not JSON: %v", line, err)
				}
				ids = append(ids, rec["call_id"].(string))
			}
			if diff := cmp.Diff(tc.want, ids); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
			if strings.Contains(out, "abcdefghijk") {
				t.Errorf("output shows a secret:\n%s", out)
			}
			if errOut := ios.errOut.String(); !strings.Contains(errOut, "last line is incomplete") {
				t.Errorf("stderr = %q, want a torn-line warning", errOut)
			}
		})
	}
}

func TestTable(t *testing.T) {
	opts, ios := options(writeLog(t))
	if err := runAudit(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	out := ios.out.String()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("table has %d lines, want a header and 3 rows:\n%s", len(lines), out)
	}
	for i, want := range [][]string{
		{"TIME", "RUN", "STEP", "TOOL", "DECISION", "OUTCOME", "DURATION", "WHAT"},
		{"run-a", "build", "shell", "allow (rule)", "ok", "1.2s", "run make"},
		{"run-b", "fix", "read_file", "deny (policy)", "denied", "read ../../etc/shadow"},
		{"run-b", "fix", "shell", "deny (non_interactive)", "denied", `{"command":"curl -H`},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("line %d = %q, want %q in it", i, lines[i], w)
			}
		}
	}
}

// TestRunPrefix checks that --run takes the start of an id, as the table prints it, and that a
// start several runs share is an error naming them.
func TestRunPrefix(t *testing.T) {
	path := writeLog(t)
	opts, ios := options(path)
	opts.RunID = "run-"
	err := runAudit(t.Context(), opts)
	if fault.KindOf(err) != fault.Usage || !strings.Contains(err.Error(), "run-a") || !strings.Contains(err.Error(), "run-b") {
		t.Errorf("ambiguous --run: err = %v, want a usage error naming run-a and run-b", err)
	}
	opts, ios = options(path)
	opts.RunID = "run-b"[:5]
	opts.Tool = "read_file"
	if err := runAudit(t.Context(), opts); err != nil || !strings.Contains(ios.out.String(), "run-b") {
		t.Errorf("--run run-b: err = %v, out:\n%s", err, ios.out.String())
	}
}

func TestFlags(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	f := &cmdutil.Factory{IO: ios, Config: func() (config.Config, error) { return config.Config{AuditLog: "/x/audit.jsonl"}, nil }}
	var got *Options
	cmd := NewCmdAudit(f, func(_ context.Context, o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"--run", "r1", "--tool", "shell", "--decision", "deny", "--outcome", "denied", "--since", "2h", "-o", "json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	path, _ := got.Path()
	if got.RunID != "r1" || got.Tool != "shell" || got.Decision != "deny" || got.Outcome != "denied" || got.Since != "2h" || !got.Output.JSON() || path != "/x/audit.jsonl" {
		t.Errorf("options = %+v, path %q", got, path)
	}
	for _, bad := range [][]string{{"--decision", "maybe"}, {"--outcome", "fine"}, {"--since", "yesterday"}, {"--since", "-1h"}, {"extra"}} {
		cmd := NewCmdAudit(f, func(context.Context, *Options) error { return nil })
		cmd.SetArgs(bad)
		cmd.SetErr(&strings.Builder{})
		if err := cmd.Execute(); fault.KindOf(err) != fault.Usage {
			t.Errorf("awf audit %v: %v, want a usage error", bad, err)
		}
	}
}

func TestEmptyLog(t *testing.T) {
	opts, ios := options(filepath.Join(t.TempDir(), "none.jsonl"))
	if err := runAudit(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if out := ios.out.String(); out != "" {
		t.Errorf("stdout = %q, want nothing", out)
	}
	if errOut := ios.errOut.String(); !strings.Contains(errOut, "no matching records") {
		t.Errorf("stderr = %q", errOut)
	}
}

// tabwriterTable is how the table was written when it held every record: text/tabwriter,
// the oracle of the streamed table's alignment.
func tabwriterTable(recs []ports.AuditRecord) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tRUN\tSTEP\tTOOL\tDECISION\tOUTCOME\tDURATION\tWHAT")
	for _, r := range recs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Time.Local().Format("2006-01-02 15:04:05"),
			render.Line(short(r.RunID, 8)), cell(r.Step, 24), cell(r.Tool, 24), render.Line(Decision(r)),
			render.Line(r.Outcome), time.Duration(r.DurationMs)*time.Millisecond, cell(What(r), 72))
	}
	tw.Flush()
	return b.String()
}

// TestTableAlignsAsTabwriter: the table awf audit writes a row at a time, with widths measured
// beforehand, is what text/tabwriter wrote holding every row: wide and narrow cells,
// characters of several bytes, a cut cell, an escaped control character.
func TestTableAlignsAsTabwriter(t *testing.T) {
	recs := []ports.AuditRecord{
		{Time: now, RunID: "0123456789abcdef", Step: "build", CallID: "1", Tool: "shell", Meta: "make", Outcome: "ok", DurationMs: 1},
		{Time: now, RunID: "r", Step: "étape-très-longue-à-couper-ici-et-là", CallID: "2", Tool: "読む", Outcome: "denied",
			Approval: &ports.AuditApproval{Decision: "deny", By: "a_long_rule_name"}, Arguments: map[string]any{"p": "x\ty"}},
		{Time: now, Step: "s\x1b[2J", Tool: "mcp__server__tool_with_a_long_name", Outcome: "timeout", DurationMs: 3_600_000},
	}
	path := writeRecords(t, recs...)
	opts, ios := options(path)
	if err := runAudit(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	read, _, err := audit.ReadFile(path, audit.Filter{}) // the records as the log keeps them
	if err != nil {
		t.Fatal(err)
	}
	if want := tabwriterTable(read); ios.out.String() != want {
		t.Errorf("table:\n%s\nwant (tabwriter):\n%s", ios.out.String(), want)
	}
}

// writeRecords writes recs to a new audit log and returns its path.
func writeRecords(t *testing.T, recs ...ports.AuditRecord) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	log, err := audit.Open(path, audit.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	for _, r := range recs {
		if err := log.Record(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// TestTableIsSizedByTheRowsShown: `awf audit` streams its table with columns as wide as the
// rows it shows: a started record that its call's completion folds away does not widen them,
// one that stays does.
func TestTableIsSizedByTheRowsShown(t *testing.T) {
	call := func(id, by, outcome string) ports.AuditRecord {
		return ports.AuditRecord{Time: now, RunID: "run-a", Step: "s", CallID: id, Tool: "shell", Meta: "call " + id,
			Approval: &ports.AuditApproval{Decision: "allow", By: by}, Outcome: outcome}
	}
	path := writeRecords(t, call("1", "someone_with_a_very_long_name", ports.OutcomeStarted), call("1", "rule", ports.OutcomeOK),
		call("2", "user", ports.OutcomeStarted))
	recs, _, err := audit.ReadFile(path, audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	opts, ios := options(path)
	if err := runAudit(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if want := tabwriterTable(recs); ios.out.String() != want {
		t.Errorf("awf audit:\n%s\nwant:\n%s", ios.out.String(), want)
	}
}
