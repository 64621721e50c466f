package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/awf-dev/awf/internal/domain/state"
)

// restrictKind is one kind of tool a workflow's restrictions must narrow: how the workflow
// declares it with restrictions R, and how a step calls it to do one thing.
type restrictKind struct {
	name string
	// tools is the workflow's tools: list, R standing for the restrictions.
	tools string
	// call is the step calling the tool to run script (a shell line), or "" to run it
	// through `awf mcp serve`.
	call func(script string) string
}

// restrictAction is one restriction kind and the action it must stop.
type restrictAction struct {
	name         string
	restrictions string
	script       string // a shell line the restrictions refuse or make fail
	// refusedBefore is true when the command check refuses the line before it runs (the
	// audit shows a denial and the run exits 5); otherwise a kernel layer makes it fail.
	refusedBefore bool
	errText       string // in the step's error
}

// TestRestrictionsNarrowEveryToolKind: every kind of tool (the shell built-in, a command
// template, a wrapped .tool reached through a use: entry, a manifest whose step calls the
// shell, and the shell served by awf mcp serve) × every kind of restriction (commands, paths,
// hosts), through the binary: what the restriction forbids does not happen.
func TestRestrictionsNarrowEveryToolKind(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("paths and hosts are enforced by the Linux sandbox")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, "reached")
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	fetch := fmt.Sprintf(`python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' %s`, srv.URL)

	kinds := []restrictKind{
		{name: "shell built-in",
			tools: "  - {name: shell, builtin: true, restrictions: @R@}\n",
			call:  func(s string) string { return stepCall("shell", map[string]any{"command": s}) }},
		{name: "command template",
			tools: "  - {name: tpl, command: COMMAND, parameters: [{name: x, type: string, required: true}], restrictions: @R@}\n",
			call:  func(string) string { return stepCall("tpl", map[string]any{"x": "go"}) }},
		{name: "wrapped .tool through use:",
			tools: "  - {name: w, use: wrapsh, restrictions: @R@}\n",
			call:  func(s string) string { return stepCall("w", map[string]any{"line": s}) }},
		{name: "manifest step",
			tools: "  - {name: shell, builtin: true, restrictions: @R@}\n",
			call:  func(s string) string { return stepCall("viashell", map[string]any{"line": s}) }},
		{name: "mcp serve", tools: "  - {name: shell, builtin: true, restrictions: @R@}\n"},
	}
	actions := []restrictAction{
		{name: "commands", restrictions: "{commands: [bash, ls, cat]}", script: "ls; touch marker",
			refusedBefore: true, errText: `command "touch" refused (restrictions.commands)`},
		{name: "paths", restrictions: "{paths: [\"src/**\"]}", script: "cat src/in.txt && cat README.md > /dev/null && touch src/marker",
			errText: "README.md"},
		{name: "hosts", restrictions: "{hosts: [api.example.com]}", script: fetch + " && touch marker", errText: "403"},
	}
	for _, k := range kinds {
		for _, a := range actions {
			t.Run(k.name+"/"+a.name, func(t *testing.T) {
				hits.Store(0)
				e := restrictEnv(t)
				// The template's own text is the action; its parameter changes nothing.
				template, _ := json.Marshal(": {{args.x}}; " + a.script)
				tools := strings.ReplaceAll(k.tools, "COMMAND", string(template))
				wf := "name: restrict\napproval: {default: auto}\nsandbox: {hosts: [\"" + host + "\", api.example.com]}\ntools:\n" +
					strings.ReplaceAll(tools, "@R@", a.restrictions)
				if k.call == nil {
					e.write("wf.yaml", wf+"steps:\n  - {name: noop, type: shell, command: \"true\"}\n")
					res := mcpServeCall(t, e, "shell", map[string]any{"command": a.script})
					if !res.IsError || !strings.Contains(res.Text, a.errText) {
						t.Errorf("mcp serve call: %+v, want an error with %q", res, a.errText)
					}
					if a.refusedBefore && !e.auditHasDenial("L1 command check", "restrictions.commands") {
						t.Errorf("no audit record of a denial by the L1 command check under restrictions.commands")
					}
				} else {
					e.write("wf.yaml", wf+"steps:\n"+k.call(a.script))
					want := 3
					if a.refusedBefore {
						want = 5
					}
					r := e.runJSON(want, "run", "wf.yaml")
					st := e.state(r.RunID).States["s"]
					if st.Status != state.Failed || !strings.Contains(st.Error, a.errText) {
						t.Errorf("step: status %s, error %q; want failed with %q", st.Status, st.Error, a.errText)
					}
					if a.refusedBefore && !e.auditHasDenial("L1 command check", "restrictions.commands") {
						t.Errorf("no audit record of a denial by the L1 command check under restrictions.commands")
					}
				}
				for _, m := range []string{"marker", "src/marker"} {
					if _, err := os.Stat(filepath.Join(e.dir, m)); err == nil {
						t.Errorf("%s exists: the restricted action (or what follows it) ran", m)
					}
				}
				if n := hits.Load(); n != 0 {
					t.Errorf("the server saw %d requests, want none", n)
				}
			})
		}
	}
}

// TestRestrictionsThatCannotBeEnforced: a restriction nothing would enforce is reported by
// awf validate (a warning where it cannot matter, an error where it would be a promise
// broken), and a run refuses to restrict a tool that cannot be narrowed.
func TestRestrictionsThatCannotBeEnforced(t *testing.T) {
	e := restrictEnv(t)
	const steps = "steps:\n  - {name: noop, type: shell, command: \"true\"}\n"
	tests := []struct {
		name, tools, sandbox string
		code                 int
		want                 string
	}{
		{"no effect on a file tool", "  - {name: read_file, builtin: true, restrictions: {commands: [ls]}}\n", "", 0,
			"restrictions.commands has no effect: read_file runs no program"},
		{"no effect on http_request", "  - {name: http_request, builtin: true, restrictions: {paths: [src/**]}}\n", "", 0,
			"restrictions.paths has no effect"},
		{"unknown built-in", "  - {name: fetcher, builtin: true, restrictions: {hosts: [a.example]}}\n", "", 2,
			`no built-in "fetcher"`},
		{"container cannot enforce commands", "  - {name: shell, builtin: true, restrictions: {commands: [ls]}}\n",
			"sandbox: {backend: container, image: alpine}\n", 2, "cannot enforce restrictions.commands"},
		{"container cannot enforce hosts", "  - {name: shell, builtin: true, restrictions: {hosts: [a.example]}}\n",
			"sandbox: {backend: container, image: alpine}\n", 2, "cannot restrict a tool to hosts"},
		{"interpreter in the allowlist", "  - {name: shell, builtin: true, restrictions: {commands: [python3]}}\n", "", 0,
			"python3 runs any program its code asks for"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e.write("v.yaml", "name: v\n"+tc.sandbox+"tools:\n"+tc.tools+steps)
			r := e.mustRun(tc.code, "validate", "v.yaml")
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr = %q, want %q", r.stderr, tc.want)
			}
		})
	}
	t.Run("a manifest cannot be narrowed", func(t *testing.T) {
		e.write("m.yaml", "name: m\ntools:\n  - {name: m, use: viashell, restrictions: {commands: [ls]}}\n"+
			"steps:\n  - {name: s, type: tool, tool: m, args: {line: \"touch marker\"}}\n")
		r := e.mustRun(2, "run", "m.yaml")
		if !strings.Contains(r.stderr, `restrictions cannot narrow tool "viashell"`) {
			t.Errorf("stderr = %q", r.stderr)
		}
		if _, err := os.Stat(filepath.Join(e.dir, "marker")); err == nil {
			t.Error("the manifest ran")
		}
	})
}

// restrictEnv is a workspace with a file inside src and one outside it, a wrapped tool
// running bash with the call's arguments, and a manifest whose step calls the shell.
func restrictEnv(t *testing.T) *env {
	e := newEnv(t)
	e.write("src/in.txt", "inside\n")
	e.write("README.md", "outside src\n")
	e.write(".awf/wrapped-tools/wrapsh.tool", "Run a line with bash.\n\n@title Bash line\n@name wrapsh\n@wrapped run_command\n"+
		"@command bash -c {line}\n@param line {string} [required] the line\n")
	e.write(".awf/tools/viashell/config.yaml", "name: viashell\ndescription: Run a line through the shell tool\nversion: 1.0.0\n"+
		"arguments:\n  - {flag: --line, variable: line, required: true, description: the line}\n"+
		"steps:\n  - type: tool\n    tool: shell\n    args: {command: \"{line}\"}\n    output_var: out\noutput: \"{out}\"\n")
	return e
}

func stepCall(tool string, args map[string]any) string {
	b, _ := json.Marshal(args)
	return fmt.Sprintf("  - {name: s, type: tool, tool: %s, args: %s}\n", tool, b)
}

// mcpResult is the part of a tools/call answer the tests read.
type mcpResult struct {
	IsError bool
	Text    string
}

// mcpServeCall runs `awf mcp serve --workflow wf.yaml` on stdio, calls tool once and returns
// the answer.
func mcpServeCall(t *testing.T, e *env, tool string, args map[string]any) mcpResult {
	t.Helper()
	call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" + string(call) + "\n"
	// stdin stays open until the answer: a client that hangs up is not waited for.
	cmd := e.cmd(t.Context(), "mcp", "serve", "--workflow", "wf.yaml", "--non-interactive")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	io.WriteString(stdin, in)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var seen strings.Builder
	for sc.Scan() {
		line := sc.Text()
		seen.WriteString(line + "\n")
		var msg struct {
			ID     int `json:"id"`
			Result struct {
				IsError bool `json:"isError"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(line), &msg) != nil || msg.ID != 2 {
			continue
		}
		res := mcpResult{IsError: msg.Result.IsError}
		for _, c := range msg.Result.Content {
			res.Text += c.Text
		}
		return res
	}
	stdin.Close()
	cmd.Wait()
	t.Fatalf("no answer to tools/call\nstdout:\n%s\nstderr:\n%s", seen.String(), stderr.String())
	return mcpResult{}
}

// auditHasDenial reports whether the audit log holds a call denied by layer under rule.
func (e *env) auditHasDenial(layer, rule string) bool {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(e.dir, ".awf", "audit.jsonl"))
	if err != nil {
		e.t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		var l auditLine
		if json.Unmarshal([]byte(line), &l) == nil && l.Outcome == "denied" && l.Sandbox != nil &&
			l.Sandbox.Decision == "deny" && l.Sandbox.Layer == layer && l.Sandbox.Rule == rule {
			return true
		}
	}
	return false
}

// TestCommandCheckMustAllow: what a coding agent needs keeps working through the binary: a
// build tool writing in the workspace (default mode, and make under an allowlist that lists
// it), and read-only git in the repository under an allowlist of git and cat.
func TestCommandCheckMustAllow(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox of tool processes is Linux-only")
	}
	for _, p := range []string{"git", "make"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skip(p + " is not installed")
		}
	}
	e := newEnv(t)
	e.write("Makefile", "out/built:\n\tmkdir -p out && echo built > out/built\n")
	e.write("src/a.txt", "a\n")
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", e.dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "src/a.txt")
	git("commit", "-qm", "first")
	e.write("wf.yaml", `name: mustallow
approval: {default: auto}
tools:
  - {name: shell, builtin: true, restrictions: {commands: [git, cat, make, sh, mkdir]}}
  - {name: build, command: "make && cat out/built"}
steps:
  - {name: status, type: tool, tool: shell, args: {command: "git status --short && git log --oneline | cat"}}
  - {name: make, type: tool, tool: shell, args: {command: "rm -rf out; make && cat out/built"}, continue_on_error: true}
  - {name: make2, type: tool, tool: shell, args: {command: "make -B && cat out/built"}}
  - {name: build, type: tool, tool: build}
`)
	r := e.runJSON(0, "run", "wf.yaml")
	st := e.state(r.RunID)
	if s := st.States["status"]; !strings.Contains(s.Output, "first") {
		t.Errorf("git log | cat under [git, cat]: %q, error %q", s.Output, s.Error)
	}
	if s := st.States["make2"]; !strings.Contains(s.Output, "built") {
		t.Errorf("make under an allowlist listing it: %q, error %q", s.Output, s.Error)
	}
	if s := st.States["build"]; !strings.Contains(s.Output, "built") {
		t.Errorf("a build in the default mode: %q, error %q", s.Output, s.Error)
	}
	// rm is not listed: the whole line is refused, make did not run again.
	if s := st.States["make"]; s.Status != state.Failed || !strings.Contains(s.Error, `"rm" refused`) {
		t.Errorf("a line with a program off the list: status %s, error %q", s.Status, s.Error)
	}
}
