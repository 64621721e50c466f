package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// toolsData is where the fixtures of these tests live.
var toolsData = filepath.Join("..", "..", "testdata", "e2e", "tools")

// runIO runs awf with standard input and extra environment variables.
func (e *env) runIO(stdin string, extraEnv []string, args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.t.Context(), 2*time.Minute)
	defer cancel()
	cmd := e.cmd(ctx, args...)
	cmd.Env = append(cmd.Env, extraEnv...)
	cmd.Stdin = strings.NewReader(stdin)
	return e.capture(cmd, args)
}

func (e *env) mustRunIO(wantCode int, stdin string, extraEnv []string, args ...string) result {
	e.t.Helper()
	return e.wantExit(e.runIO(stdin, extraEnv, args...), wantCode, args)
}

// copyTree copies a fixture directory into the test's working directory.
func (e *env) copyTree(src, dst string) {
	e.t.Helper()
	if err := os.CopyFS(filepath.Join(e.dir, dst), os.DirFS(src)); err != nil {
		e.t.Fatal(err)
	}
}

// decode parses stdout as one JSON object.
func decode[T any](t *testing.T, r result) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s\nstderr:\n%s", err, r.stdout, r.stderr)
	}
	return v
}

type toolRun struct {
	RunID    string `json:"run_id"`
	Tool     string `json:"tool"`
	Status   string `json:"status"`
	Output   string `json:"output"`
	Error    string `json:"error"`
	Approval string `json:"approval"`
}

type toolInfo struct {
	Name       string          `json:"name"`
	Kind       string          `json:"kind"`
	Level      string          `json:"level"`
	Source     string          `json:"source"`
	Line       int             `json:"line"`
	Target     string          `json:"target"`
	Shadows    []string        `json:"shadows"`
	Parameters json.RawMessage `json:"parameters"`
}

// examplesProject is a project with the example tools of examples/tools in .awf/ and a few
// files for them to find.
func examplesProject(t *testing.T) *env {
	e := newEnv(t)
	e.copyTree(filepath.Join("..", "..", "examples", "tools", "tools"), ".awf/tools")
	e.copyTree(filepath.Join("..", "..", "examples", "tools", "wrapped-tools"), ".awf/wrapped-tools")
	e.write("main.go", "package main\n// needle in main\n")
	e.write("src/util.go", "package src\n")
	return e
}

// TestToolsExamples runs the examples of docs/tools.md through the binary: a meta-tool calling
// two other tools, a .tool alias, a wrapped tool and a chain, all through approval and audit.
func TestToolsExamples(t *testing.T) {
	e := examplesProject(t)

	meta := decode[toolRun](t, e.mustRun(0, "tools", "run", "file-report", "--arg", "pattern=needle", "--yes", "-o", "json"))
	for _, want := range []string{"Files in .:\nmain.go\nsrc\n", `Lines with "needle":`, "./main.go:2:// needle in main"} {
		if !strings.Contains(meta.Output, want) {
			t.Errorf("file-report output lacks %q:\n%s", want, meta.Output)
		}
	}
	alias := decode[toolRun](t, e.mustRun(0, "tools", "run", "Read", "--arg", "path=main.go", "-o", "json"))
	if alias.Output != "package main\n// needle in main\n" || alias.Approval != "auto" {
		t.Errorf("Read (alias of read_file) = %+v", alias)
	}
	wrapped := decode[toolRun](t, e.mustRun(0, "tools", "run", "ls", "--arg", `arguments=["-1","src"]`, "--yes", "-o", "json"))
	if wrapped.Output != "util.go\n" {
		t.Errorf("ls (wrapped) output = %q, want %q", wrapped.Output, "util.go\n")
	}
	chain := decode[toolRun](t, e.mustRun(0, "tools", "run", "survey", "--arg", `grep_args=["-n","needle","main.go"]`, "--yes", "-o", "json"))
	if want := "main.go\nsrc\n--\n2:// needle in main\n"; chain.Output != want {
		t.Errorf("survey (chain) output = %q, want %q", chain.Output, want)
	}

	// Every call, the nested ones included, is in the audit log under the call's run id.
	audit := e.mustRun(0, "audit", "--run", meta.RunID, "--output", "json").stdout
	for _, tool := range []string{`"tool":"file-report"`, `"tool":"ls"`, `"tool":"grep"`} {
		if !strings.Contains(audit, tool) {
			t.Errorf("audit of run %s lacks %s:\n%s", meta.RunID, tool, audit)
		}
	}

	list := decode[struct{ Tools []toolInfo }](t, e.mustRun(0, "tools", "list", "-o", "json"))
	got := map[string]string{}
	for _, ti := range list.Tools {
		got[ti.Name] = ti.Kind + "/" + ti.Level
	}
	for name, want := range map[string]string{"file-report": "meta/project", "survey": "chain/project", "Read": "alias/project",
		"ls": "wrapped/project", "grep": "wrapped/project", "read_file": "tool/builtin", "run_command": "alias/builtin"} {
		if got[name] != want {
			t.Errorf("tools list: %s is %q, want %q", name, got[name], want)
		}
	}
	search := decode[struct{ Tools []toolInfo }](t, e.mustRun(0, "tools", "search", "--tag", "files", "--tag", "example", "--all-tags", "-o", "json"))
	if len(search.Tools) != 2 || search.Tools[0].Name != "file-report" || search.Tools[1].Name != "survey" {
		t.Errorf("tools search --all-tags = %+v", search.Tools)
	}

	show := decode[toolInfo](t, e.mustRun(0, "tools", "show", "grep", "-o", "json"))
	if show.Source != ".awf/wrapped-tools/grep.tool" || show.Line != 3 || show.Target != "run_command" ||
		len(show.Shadows) != 1 || !strings.Contains(string(show.Parameters), `"arguments"`) {
		t.Errorf("tools show grep = %+v", show)
	}
	text := e.mustRun(0, "tools", "show", "file-report").stdout
	for _, want := range []string{"file-report (meta, project)", "source:      .awf/tools/file-report/config.yaml:3", `"pattern"`} {
		if !strings.Contains(text, want) {
			t.Errorf("tools show file-report lacks %q:\n%s", want, text)
		}
	}
}

func TestToolsRunExitCodes(t *testing.T) {
	e := examplesProject(t)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"denied without a terminal", []string{"tools", "run", "file-report", "--arg", "pattern=x"}, 5, "was denied (non_interactive)"},
		{"denied by flag", []string{"tools", "run", "Read", "--arg", "path=main.go", "--approve", "deny"}, 5, "was denied"},
		{"unknown tool", []string{"tools", "run", "file-reprt"}, 2, `did you mean "file-report"`},
		{"unknown tool in show", []string{"tools", "show", "nope"}, 2, `unknown tool "nope"`},
		{"tool fails", []string{"tools", "run", "ls", "--arg", `arguments=["/no/such/dir"]`, "--yes"}, 3, "tool ls failed"},
		{"missing required argument", []string{"tools", "run", "file-report", "--yes"}, 1, "pattern"},
		{"not KEY=VALUE", []string{"tools", "run", "ls", "--arg", "arguments"}, 1, "want KEY=VALUE"},
		{"not an array", []string{"tools", "run", "ls", "--arg", "arguments=-la"}, 1, `"-la" is not a JSON array`},
		{"misspelt parameter", []string{"tools", "run", "file-report", "--arg", "patern=x"}, 1, `did you mean "pattern"`},
		{"args-json not an object", []string{"tools", "run", "ls", "--args-json", "[1]"}, 1, "must be a JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.mustRun(tc.code, tc.args...)
			if !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, r.stderr)
			}
		})
	}
}

// TestToolsRunHostileArguments passes values built to break a shell to a workflow's command
// tool: each arrives as the tool's argument byte for byte, and nothing else runs.
func TestToolsRunHostileArguments(t *testing.T) {
	e := newEnv(t)
	e.copy(filepath.Join(toolsData, "hostile.yaml"), "hostile.yaml")
	values := map[string]string{
		"quotes":      `it's "quoted" \'`,
		"semicolon":   "x; touch pwned-semicolon",
		"subst":       "$(touch pwned-subst)",
		"backticks":   "`touch pwned-backtick`",
		"newline":     "line one\ntouch pwned-newline\n",
		"option":      "--version",
		"dash":        "-n",
		"glob":        "* ?",
		"variable":    "$HOME ${PATH}",
		"redirection": "> pwned-redirect < /etc/passwd | cat &",
		"unicode":     "héllo ✓ \u202e",
		"large":       strings.Repeat("0123456789abcdef", 100<<10/16), // 100 KB, under the argv limit of one argument
	}
	for name, v := range values {
		t.Run(name, func(t *testing.T) {
			res := decode[toolRun](t, e.mustRun(0, "tools", "run", "echo_value", "--workflow", "hostile.yaml", "--arg", "value="+v, "-o", "json"))
			if res.Output != v {
				t.Errorf("output differs from the value: got %d bytes %.80q, want %d bytes %.80q", len(res.Output), res.Output, len(v), v)
			}
		})
	}
	t.Run("args-json", func(t *testing.T) {
		args, _ := json.Marshal(map[string]any{"value": "$(touch pwned-json)'\"", "count": 3})
		res := decode[toolRun](t, e.mustRun(0, "tools", "run", "echo_value", "--workflow", "hostile.yaml", "--args-json", string(args), "-o", "json"))
		if res.Output != "$(touch pwned-json)'\"" {
			t.Errorf("output = %q", res.Output)
		}
	})
	t.Run("NUL is refused, not cut", func(t *testing.T) {
		r := e.mustRun(3, "tools", "run", "echo_value", "--workflow", "hostile.yaml", "--args-json", `{"value":"a\u0000; touch pwned-nul"}`)
		if !strings.Contains(r.stderr, "NUL") {
			t.Errorf("stderr = %s", r.stderr)
		}
	})
	matches, _ := filepath.Glob(filepath.Join(e.dir, "pwned*"))
	if len(matches) > 0 {
		t.Errorf("a value ran as a command: %v", matches)
	}
}

func TestToolsCycleError(t *testing.T) {
	e := newEnv(t)
	e.copyTree(filepath.Join(toolsData, "cycle"), ".")
	for _, args := range [][]string{{"tools", "list"}, {"tools", "run", "a"}, {"tools", "check", "a"}} {
		r := e.mustRun(2, args...)
		if !strings.Contains(r.stderr, "tool cycle: a -> b -> a") || !strings.Contains(r.stderr, ".awf/tools/b/config.yaml:4:5") {
			t.Errorf("awf %s: stderr lacks the cycle with its position:\n%s", strings.Join(args, " "), r.stderr)
		}
	}
}

// TestToolsDepthLimit builds a ladder of meta-tools d0 -> d1 -> ... -> d11 -> shell: the
// default limit of 10 nested calls lets d2 run and stops d1.
func TestToolsDepthLimit(t *testing.T) {
	e := newEnv(t)
	const n = 12
	for i := range n {
		next := fmt.Sprintf("d%d", i+1)
		args := ""
		if i == n-1 {
			next, args = "shell", "\n    args: {command: \"echo bottom\"}"
		}
		e.write(fmt.Sprintf(".awf/tools/d%d/config.yaml", i), fmt.Sprintf(
			"name: d%d\ndescription: rung %d\nsteps:\n  - type: tool\n    tool: %s%s\n    output_var: out\n", i, i, next, args))
	}
	if res := decode[toolRun](t, e.mustRun(0, "tools", "run", "d2", "--yes", "-o", "json")); res.Output != "bottom\n" {
		t.Errorf("d2 output = %q", res.Output)
	}
	r := e.mustRun(3, "tools", "run", "d1", "--yes")
	want := "meta-tools nest deeper than the limit of 10: d1 -> d2 -> d3 -> d4 -> d5 -> d6 -> d7 -> d8 -> d9 -> d10 -> d11 -> shell"
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
	}
}

type installResult struct {
	Installed []struct{ Ref, Version, Dir string }
	Skipped   []struct{ Ref, Version, Reason string }
	Unmet     []struct{ Tool, Dependency string }
}

func installed(r installResult) []string {
	var out []string
	for _, p := range r.Installed {
		out = append(out, p.Ref+"@"+p.Version)
	}
	return out
}

func registryDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "toolrepo"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// installDir is where awf installs tools and runs find them in a test's environment.
func (e *env) installDir() string {
	return filepath.Join(e.dir, ".home", ".local", "share", "awf", "tools")
}

func TestToolsInstallFromDirectory(t *testing.T) {
	e := newEnv(t)
	e.copy(filepath.Join(toolsData, "greet.yaml"), "greet.yaml")
	reg := registryDir(t)
	res := decode[installResult](t, e.mustRun(0, "tools", "install", "--deps", "acme/greet@^1.0.0", "--registry", reg, "-o", "json"))
	if diff := cmp.Diff([]string{"acme/shout@1.0.0", "acme/greet@1.1.0"}, installed(res)); diff != "" {
		t.Errorf("installed (dependencies first): -want +got\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(e.installDir(), "acme", "shout", "1.0.0", "README.md")); err != nil {
		t.Errorf("package file not installed: %v", err)
	}
	// The installed meta-tool calls the other installed tool, from awf tools run and awf run.
	if r := decode[toolRun](t, e.mustRun(0, "tools", "run", "acme/greet", "--input", "world", "--yes", "-o", "json")); r.Output != "HELLO WORLD" {
		t.Errorf("acme/greet output = %q", r.Output)
	}
	if r := e.runJSON(0, "run", "greet.yaml", "--yes"); r.Output != "HELLO WORLD" {
		t.Errorf("run greet.yaml output = %q", r.Output)
	}
	// Again: nothing to do.
	again := decode[installResult](t, e.mustRun(0, "tools", "install", "--deps", "acme/greet@^1.0.0", "--registry", reg, "-o", "json"))
	if len(again.Installed) != 0 || len(again.Skipped) != 2 {
		t.Errorf("second install: %+v", again)
	}
	// Dependencies that form a cycle install once each.
	cyc := decode[installResult](t, e.mustRun(0, "tools", "install", "--deps", "acme/ping", "--registry", reg, "-o", "json"))
	if got := installed(cyc); len(got) != 2 {
		t.Errorf("ping/pong cycle installed %v", got)
	}
	if r := e.mustRun(2, "tools", "install", "acme/greet@^7", "--registry", reg); !strings.Contains(r.stderr, "no version of acme/greet satisfies ^7") {
		t.Errorf("stderr = %s", r.stderr)
	}
	if r := e.mustRun(1, "tools", "install", "acme/greet"); !strings.Contains(r.stderr, "AWF_TOOLS_REGISTRY") {
		t.Errorf("no registry: stderr = %s", r.stderr)
	}
}

func TestToolsInstallFromHTTP(t *testing.T) {
	serve := func(t *testing.T, dir string) string {
		srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	copyReg := func(t *testing.T) string {
		dst := t.TempDir()
		if err := os.CopyFS(dst, os.DirFS(registryDir(t))); err != nil {
			t.Fatal(err)
		}
		return dst
	}
	t.Run("verified", func(t *testing.T) {
		e := newEnv(t)
		res := decode[installResult](t, e.mustRun(0, "tools", "install", "--deps", "acme/greet", "--registry", serve(t, copyReg(t)), "-o", "json"))
		if diff := cmp.Diff([]string{"acme/shout@1.0.0", "acme/greet@2.0.0"}, installed(res)); diff != "" {
			t.Errorf("installed: -want +got\n%s", diff)
		}
		if r := decode[toolRun](t, e.mustRun(0, "tools", "run", "acme/greet", "--input", "web", "--arg", "greeting=hi", "--yes", "-o", "json")); r.Output != "HI WEB (v2)" {
			t.Errorf("acme/greet output = %q", r.Output)
		}
	})
	t.Run("tampered", func(t *testing.T) {
		e := newEnv(t)
		reg := copyReg(t)
		p := filepath.Join(reg, "acme", "shout", "1.0.0", "config.yaml")
		data, _ := os.ReadFile(p)
		if err := os.WriteFile(p, bytes.Replace(data, []byte("tr a-z A-Z"), []byte("rm -rf /xy"), 1), 0o644); err != nil {
			t.Fatal(err)
		}
		r := e.mustRun(5, "tools", "install", "--deps", "acme/greet", "--registry", serve(t, reg))
		for _, want := range []string{"acme/shout@1.0.0", "refused: checksum mismatch for config.yaml", "nothing was installed"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
			}
		}
		if _, err := os.Stat(e.installDir()); !os.IsNotExist(err) {
			t.Errorf("install dir exists after a refused install: %v", err)
		}
	})
}

// TestRunFailsEarlyOnMissingDependency: awf run installs nothing; it stops before the first
// step, naming what is missing and the command that installs it, and that command works.
func TestRunFailsEarlyOnMissingDependency(t *testing.T) {
	e := newEnv(t)
	e.copy(filepath.Join(toolsData, "missing_dep.yaml"), "missing_dep.yaml")
	reg := registryDir(t)
	res := decode[installResult](t, e.mustRun(0, "tools", "install", "acme/greet@~1.1", "--registry", reg, "-o", "json"))
	if len(res.Unmet) != 1 || res.Unmet[0].Dependency != "acme/shout@^1.0.0" {
		t.Errorf("unmet = %+v", res.Unmet)
	}

	r := e.mustRun(2, "run", "missing_dep.yaml")
	want := "tool acme/greet@1.1.0 needs acme/shout@^1.0.0: not installed; install with: awf tools install --deps acme/greet@1.1.0"
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "ran.txt")); err == nil {
		t.Error("a step ran although a dependency is missing")
	}
	if runs, _ := os.ReadDir(filepath.Join(e.dir, ".awf", "runs")); len(runs) != 0 {
		t.Errorf("a run started: %d state files", len(runs))
	}
	if _, err := os.Stat(filepath.Join(e.installDir(), "acme", "shout")); !os.IsNotExist(err) {
		t.Errorf("awf run installed something: %v", err)
	}

	check := e.mustRun(2, "tools", "check", "missing_dep.yaml")
	if !strings.Contains(check.stdout, "install with: awf tools install --deps acme/greet@1.1.0") {
		t.Errorf("tools check output:\n%s", check.stdout)
	}
	// The printed command, as printed, with the registry from the environment.
	e.mustRunIO(0, "", []string{"AWF_TOOLS_REGISTRY=" + reg}, strings.Fields("tools install --deps acme/greet@1.1.0")...)
	if r := e.mustRun(0, "tools", "check", "missing_dep.yaml"); !strings.HasPrefix(r.stdout, "ok: acme/greet") {
		t.Errorf("tools check after install: %s", r.stdout)
	}
}

// TestToolsParse feeds one reply of each format family to awf tools parse.
func TestToolsParse(t *testing.T) {
	e := newEnv(t)
	dir := filepath.Join(toolsData, "parse")
	e.copy(filepath.Join(dir, "schemas.json"), "schemas.json")
	type parsed struct {
		Calls []struct {
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"calls"`
		Content   string `json:"content"`
		Reasoning string `json:"reasoning"`
		Error     string `json:"error"`
	}
	call := `{"path":"main.go","limit":10}`
	tests := []struct {
		file, content, reasoning, err string
		calls                         int
	}{
		{file: "openai.txt", calls: 1, content: "I will read it."},
		{file: "claude.txt", calls: 1, content: "Let me look."},
		{file: "hermes.txt", calls: 1, reasoning: "the file first"},
		{file: "mistral.txt", calls: 1},
		{file: "llama.txt", calls: 1},
		{file: "pythonic.txt", calls: 1},
		{file: "fence.txt", calls: 1, content: "Here:"},
		{file: "malformed.txt", err: "invalid JSON"},
		{file: "prose.txt", content: `No tools needed: the answer is {"name": "x"} in prose.`},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			text, err := os.ReadFile(filepath.Join(dir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			p := decode[parsed](t, e.mustRunIO(0, string(text), nil, "tools", "parse", "--tools", "read_file,grep", "--schemas", "schemas.json"))
			if len(p.Calls) != tc.calls || p.Content != tc.content || p.Reasoning != tc.reasoning || !strings.Contains(p.Error, tc.err) || (tc.err == "") != (p.Error == "") {
				t.Fatalf("parse %s = %+v", tc.file, p)
			}
			for _, c := range p.Calls {
				var got, want any
				json.Unmarshal(c.Arguments, &got)
				json.Unmarshal([]byte(call), &want)
				if c.Name != "read_file" || c.ID == "" || !cmp.Equal(got, want) {
					t.Errorf("call = %s %s %s, want read_file %s", c.ID, c.Name, c.Arguments, call)
				}
			}
		})
	}
	t.Run("XML values stay text without a schema", func(t *testing.T) {
		text, _ := os.ReadFile(filepath.Join(dir, "claude.txt"))
		p := decode[parsed](t, e.mustRunIO(0, string(text), nil, "tools", "parse"))
		var got any
		if len(p.Calls) == 1 {
			json.Unmarshal(p.Calls[0].Arguments, &got)
		}
		if want := map[string]any{"path": "main.go", "limit": "10"}; !cmp.Equal(got, want) {
			t.Errorf("calls = %+v", p.Calls)
		}
	})
	t.Run("usage", func(t *testing.T) {
		r := e.mustRunIO(1, "", nil, "tools", "parse", "--schemas", "missing.json")
		if !strings.Contains(r.stderr, "--schemas") || r.stdout != "" {
			t.Errorf("stdout %q stderr %q", r.stdout, r.stderr)
		}
	})
}

// TestToolsInstallDepsOfLocalTool: a bare name with --deps installs what that project tool
// needs, from the registry in the environment.
func TestToolsInstallDepsOfLocalTool(t *testing.T) {
	e := newEnv(t)
	e.copyTree(filepath.Join(toolsData, "local"), ".")
	r := e.mustRun(2, "tools", "check", "welcome")
	if !strings.Contains(r.stdout, "welcome needs acme/greet@^1.0.0: not installed") ||
		!strings.Contains(r.stdout, "install with: awf tools install --deps welcome") {
		t.Errorf("tools check welcome:\n%s", r.stdout)
	}
	if r := e.mustRun(1, "tools", "install", "welcome", "--registry", registryDir(t)); !strings.Contains(r.stderr, "add --deps") {
		t.Errorf("bare name without --deps: %s", r.stderr)
	}
	res := decode[installResult](t, e.mustRunIO(0, "", []string{"AWF_TOOLS_REGISTRY=" + registryDir(t)},
		"tools", "install", "--deps", "welcome", "-o", "json"))
	if diff := cmp.Diff([]string{"acme/shout@1.0.0", "acme/greet@1.1.0"}, installed(res)); diff != "" {
		t.Errorf("installed: -want +got\n%s", diff)
	}
	e.mustRun(0, "tools", "check", "welcome")
	if r := decode[toolRun](t, e.mustRun(0, "tools", "run", "welcome", "--input", "home", "--yes", "-o", "json")); r.Output != "WELCOME HOME!" {
		t.Errorf("welcome output = %q", r.Output)
	}
}

// Commands that only describe the tools (list, show, search, check) write nothing: no .awf
// and no audit log appear in a directory that had none. The log is opened at its first record.
func TestToolsDescribingCommandsCreateNoAwfDir(t *testing.T) {
	e := newEnv(t)
	for _, args := range [][]string{{"tools", "list"}, {"tools", "show", "shell"}, {"tools", "search", "file"}, {"tools", "check"}} {
		e.run(args...)
		if e.exists(".awf") {
			t.Fatalf("awf %s created .awf", strings.Join(args, " "))
		}
	}
}
