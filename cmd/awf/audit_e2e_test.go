package main

import (
	"bufio"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/domain/ports"
)

// auditJSON runs awf audit -o json with args and decodes its records.
func (e *env) auditJSON(args ...string) []ports.AuditRecord {
	e.t.Helper()
	r := e.mustRun(0, append([]string{"audit", "-o", "json"}, args...)...)
	var recs []ports.AuditRecord
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var rec ports.AuditRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			e.t.Fatalf("audit line does not parse: %v\n%.300s", err, sc.Text())
		}
		recs = append(recs, rec)
	}
	return recs
}

// TestRefusalsInsideToolsAreDenials: a refusal by a layer inside a tool (the file tools' path
// policy and protected paths, http_request's address guard and URL checks, the write size
// gate) exits 5 from awf tools run and is an audit denial naming the layer and the rule, which
// awf audit --decision deny and --outcome denied list.
func TestRefusalsInsideToolsAreDenials(t *testing.T) {
	e := newEnv(t)
	e.write(".git/hooks/.keep", "")
	e.write("ok.txt", "fine\n")
	tests := []struct {
		name        string
		args        []string
		layer, rule string
	}{
		{"path policy", []string{"read_file", "--arg", "path=/etc/passwd"}, "L1 os.Root", "sandbox.paths.read"},
		{"protected path", []string{"write_file", "--arg", "path=.git/hooks/pre-commit", "--arg", "content=x", "--yes"}, "L1 os.Root", "protect"},
		{"protected env", []string{"read_file", "--arg", "path=.env"}, "L1 os.Root", "protect"},
		{"host guard", []string{"http_request", "--arg", "url=http://127.0.0.1:1/", "--yes"}, "L1 connect-time IP guard", "no private addresses"},
		{"url rules", []string{"http_request", "--arg", "url=http://user:pw@example.com/", "--yes"}, "L1 URL check", "URL rules"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.mustRun(5, append([]string{"tools", "run"}, tc.args...)...)
			if !strings.Contains(r.stderr, "was denied") {
				t.Errorf("stderr = %q, want a denial", r.stderr)
			}
		})
	}
	e.mustRun(0, "tools", "run", "read_file", "--arg", "path=ok.txt")
	denied := e.auditJSON("--decision", "deny")
	if len(denied) != len(tests) {
		t.Fatalf("awf audit --decision deny lists %d records, want %d: %+v", len(denied), len(tests), denied)
	}
	for i, tc := range tests {
		rec := denied[i]
		v := rec.Verdict
		if v == nil || rec.Outcome != ports.OutcomeDenied || v.Decision != "deny" || v.By != ports.ByTool ||
			v.Layer != tc.layer || v.Rule != tc.rule || v.Reason == "" {
			t.Errorf("%s: record outcome %q, verdict %+v; want denied by %s under %s", tc.name, rec.Outcome, v, tc.layer, tc.rule)
		}
		if rec.Sandbox == nil || rec.Sandbox.Decision != "deny" {
			t.Errorf("%s: sandbox part %+v, want deny", tc.name, rec.Sandbox)
		}
	}
	if got := e.auditJSON("--outcome", "denied"); len(got) != len(tests) {
		t.Errorf("awf audit --outcome denied lists %d records, want %d", len(got), len(tests))
	}
	allowed := e.auditJSON("--decision", "allow")
	if len(allowed) != 1 || allowed[0].Verdict == nil || allowed[0].Verdict.Decision != "allow" ||
		slices.Contains([]string{"", "deny"}, allowed[0].Verdict.Decision) {
		t.Errorf("allowed records = %+v, want the one read of ok.txt with an allow verdict", allowed)
	}
}

// TestRecordOfWhatRan: the state file and the audit log say what ran: a custom command tool's
// argv after binding, with its arguments as the tool got them (an integer stays an integer),
// and a shell step's bound command with its exit code and duration.
func TestRecordOfWhatRan(t *testing.T) {
	e := newEnv(t)
	e.write("wf.yaml", `name: record
tools:
  - name: count
    description: Print a count and a word
    command: "printf '%s %s' {{args.n}} {{args.word}}"
    parameters:
      - {name: n, type: integer, required: true}
      - {name: word, type: string, required: true}
    approval: auto
steps:
  - {name: greet, type: shell, command: "echo {{inputs.who}} done"}
  - {name: tally, type: tool, tool: count, args: {n: "2", word: "a b; c"}}
inputs:
  - {name: who, default: "x y"}
`)
	res := e.runJSON(0, "run", "wf.yaml")
	st := e.state(res.RunID)
	greet := st.States["greet"]
	if want := [][]string{{"echo", "x y", "done"}}; !slices.EqualFunc(greet.Command, want, slices.Equal) ||
		greet.ExitCode == nil || *greet.ExitCode != 0 || greet.DurationMs < 0 {
		t.Errorf("shell step record: command %q, exit %v; want %q and exit 0", greet.Command, greet.ExitCode, want)
	}
	calls := st.States["tally"].ToolCalls
	if len(calls) != 1 || calls[0].Result == nil {
		t.Fatalf("tool step calls = %+v, want one with a result", calls)
	}
	want := [][]string{{"printf", "%s %s", "2", "a b; c"}}
	c := calls[0]
	if !slices.EqualFunc(c.Result.Command, want, slices.Equal) {
		t.Errorf("state command = %q, want %q", c.Result.Command, want)
	}
	if n, ok := c.Arguments["n"].(uint64); !ok || n != 2 {
		if f, ok := c.Arguments["n"].(int); !ok || f != 2 {
			t.Errorf("state arguments = %#v, want n as the integer 2 (after coercion)", c.Arguments)
		}
	}
	recs := e.auditJSON("--tool", "count")
	if len(recs) != 1 || !slices.EqualFunc(recs[0].Command, want, slices.Equal) {
		t.Errorf("audit records of count = %+v, want one with command %q", recs, want)
	}
}

// TestAuditAfterACutRecord: the audit log ends inside a record (a process killed in the
// middle of a long write); the calls of the next commands are still read back by awf audit,
// which says one damaged line was skipped.
func TestAuditAfterACutRecord(t *testing.T) {
	e := newEnv(t)
	e.write("ok.txt", "fine\n")
	e.mustRun(0, "tools", "run", "read_file", "--arg", "path=ok.txt")
	log := e.read(".awf/audit.jsonl")
	e.write(".awf/audit.jsonl", log+log[:strings.Index(log, "\n")/2]) // half a record
	// A call refused by its approval is one record: glued to the cut one, it would be lost.
	e.mustRun(5, "--approve", "deny", "tools", "run", "read_file", "--arg", "path=ok.txt")
	e.mustRun(0, "tools", "run", "read_file", "--arg", "path=ok.txt")
	recs := e.auditJSON()
	var outcomes []string
	for _, r := range recs {
		outcomes = append(outcomes, r.Outcome)
	}
	if want := []string{"ok", "denied", "ok"}; !slices.Equal(outcomes, want) {
		t.Errorf("awf audit lists outcomes %v, want %v", outcomes, want)
	}
	r := e.mustRun(0, "audit")
	if !strings.Contains(r.stderr, "1 damaged lines skipped") {
		t.Errorf("awf audit stderr = %q, want the cut record counted", r.stderr)
	}
}
