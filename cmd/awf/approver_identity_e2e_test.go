//go:build unix

package main

import (
	"encoding/json"
	"os/user"
	"strings"
	"syscall"
	"testing"

	"github.com/awf-dev/awf/cmd/awf/internal/ptytest"
)

// An approval given at the terminal is recorded with who gave it: the OS user and the
// terminal device, and why the call was asked about; a refusal records its reason too.
func TestApprovalRecordsWhoAnswered(t *testing.T) {
	e := newEnv(t)
	e.write("ask.yaml", `name: ask
steps:
  - name: first
    type: tool
    tool: write_file
    args: {path: a.txt, content: a}
  - name: second
    type: tool
    tool: write_file
    args: {path: b.txt, content: b}
    continue_on_error: true
`)
	p := ptytest.Open(t)
	cmd := e.cmd(t.Context(), "run", "ask.yaml")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.Term, p.Term, p.Term
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for i, answer := range []string{"y", "n"} {
		if _, ok := p.WaitFor("Allow?", i+1); !ok {
			t.Fatalf("no prompt %d:\n%s", i+1, p.Text())
		}
		if err := p.Type(answer); err != nil {
			t.Fatal(err)
		}
	}
	_ = cmd.Wait() // the refused tool step ends the run denied

	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	var decided []map[string]any
	for line := range strings.Lines(e.read(".awf/audit.jsonl")) {
		var rec struct {
			Outcome  string         `json:"outcome"`
			Approval map[string]any `json:"approval"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Outcome != "started" && rec.Approval != nil {
			decided = append(decided, rec.Approval)
		}
	}
	if len(decided) != 2 {
		t.Fatalf("approval records %v, want the two answers", decided)
	}
	for i, want := range []string{"allow", "deny"} {
		a := decided[i]
		tty, _ := a["tty"].(string)
		if a["decision"] != want || a["by"] != "user" || a["user"] != me.Username || !strings.HasPrefix(tty, "/dev/") || a["reason"] == "" || a["reason"] == nil {
			t.Errorf("answer %d recorded as %v, want %s by user %s on a /dev/ terminal, with a reason", i+1, a, want, me.Username)
		}
	}
}
