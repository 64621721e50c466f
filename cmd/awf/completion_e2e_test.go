package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// shellCompletion is what `awf __complete ARGS...` answered: the words offered (without their
// descriptions), the descriptions by word, and cobra's directive.
type shellCompletion struct {
	words     []string
	desc      map[string]string
	directive int
}

// complete runs cobra's hidden __complete command, as the shell scripts of `awf completion`
// do, and parses its answer: one word per line (a tab before its description), then
// ":DIRECTIVE".
func (e *env) complete(args ...string) shellCompletion {
	e.t.Helper()
	r := e.mustRun(0, append([]string{"__complete"}, args...)...)
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	last := lines[len(lines)-1]
	d, err := strconv.Atoi(strings.TrimPrefix(last, ":"))
	if !strings.HasPrefix(last, ":") || err != nil {
		e.t.Fatalf("awf __complete %q: no directive line:\n%s", args, r.stdout)
	}
	c := shellCompletion{directive: d, desc: map[string]string{}}
	for _, l := range lines[:len(lines)-1] {
		word, desc, _ := strings.Cut(l, "\t")
		c.words = append(c.words, word)
		c.desc[word] = desc
	}
	return c
}

// cobra's directives (cobra.ShellCompDirective).
const (
	dirNoSpace       = 2
	dirNoFileComp    = 4
	dirFilterFileExt = 8
	dirFilterDirs    = 16
)

func (c shellCompletion) want(t *testing.T, what string, words ...string) {
	t.Helper()
	got := slices.Sorted(slices.Values(c.words))
	if !slices.Equal(got, slices.Sorted(slices.Values(words))) {
		t.Errorf("%s: completed %q, want %q", what, c.words, words)
	}
}

func (c shellCompletion) has(t *testing.T, what string, words ...string) {
	t.Helper()
	for _, w := range words {
		if !slices.Contains(c.words, w) {
			t.Errorf("%s: %q not among %q", what, w, c.words)
		}
	}
}

// Shell completion offers what each argument and flag can be: run ids (newest first) where a
// run id goes, the workflow names awf list shows where a workflow goes (YAML files when no
// name fits), tool names, input names and the words a flag accepts. Completing has no side
// effect: no .awf directory appears.
func TestShellCompletion(t *testing.T) {
	e := newEnv(t)
	e.write("workflows/hello.yaml", "name: hello\ndescription: \"Greets\\tyou\\u001b[31m. Twice over.\"\ninputs:\n  - {name: who, description: Who to greet}\n  - {name: times, type: integer, default: 1}\nsteps:\n  - {name: a, type: shell, command: echo hi}\n")
	e.write(".awf/workflows/deploy-prod.yaml", "name: ship\nsteps:\n  - {name: a, type: shell, command: echo shipped}\n")

	t.Run("no side effect", func(t *testing.T) {
		fresh := newEnv(t)
		fresh.complete("status", "")
		fresh.complete("tools", "show", "")
		if _, err := os.Stat(filepath.Join(fresh.dir, ".awf")); !os.IsNotExist(err) {
			t.Errorf("completion created .awf: %v", err)
		}
	})

	first := e.runJSON(0, "run", "hello", "--input", "who=a").RunID
	second := e.runJSON(0, "run", "ship").RunID
	for _, args := range [][]string{{"status", ""}, {"resume", ""}, {"audit", "--run", ""}, {"--quiet", "status", ""}} {
		c := e.complete(args...)
		if !slices.Equal(c.words, []string{second, first}) {
			t.Errorf("%q: completed %q, want the run ids newest first %q", args, c.words, []string{second, first})
		}
		if !strings.HasPrefix(c.desc[first], "hello completed ") || c.directive&dirNoFileComp == 0 {
			t.Errorf("%q: description %q, directive %d", args, c.desc[first], c.directive)
		}
	}
	e.complete("status", first[:6]).want(t, "status PREFIX", first)
	e.complete("status", first, "").want(t, "status ID ''")
	e.complete("--state-dir", "elsewhere", "status", "").want(t, "status in another state dir")

	c := e.complete("run", "")
	c.want(t, "run ''", "hello", "ship")
	if c.desc["hello"] != "Greets you [31m." {
		t.Errorf("run '': description of hello %q, want its first sentence", c.desc["hello"])
	}
	e.complete("run", "sh").want(t, "run sh", "ship")
	if c := e.complete("run", "workflows/"); c.directive != dirFilterFileExt || !slices.Equal(c.words, []string{"yaml", "yml"}) {
		t.Errorf("run workflows/: %q directive %d, want YAML files", c.words, c.directive)
	}
	e.complete("run", "hello", "").want(t, "run hello ''")
	e.complete("validate", "hello", "").want(t, "validate hello ''", "ship")
	c = e.complete("run", "hello", "--input", "")
	c.want(t, "run hello --input", "who=", "times=")
	if c.directive&dirNoSpace == 0 || c.desc["who="] != "Who to greet" {
		t.Errorf("--input: directive %d, descriptions %q", c.directive, c.desc)
	}
	e.mustRun(0, "validate", "hello") // validate takes the names it completes

	e.complete("tools", "show", "").has(t, "tools show", "read_file", "grep", "list_dir", "shell")
	e.complete("tools", "run", "gre").want(t, "tools run gre", "grep")
	e.complete("tools", "run", "grep", "").want(t, "tools run grep ''")
	e.complete("audit", "--tool", "read_").want(t, "audit --tool", "read_file")
	e.complete("mcp", "serve", "--tools", "grep,rea").want(t, "mcp serve --tools", "grep,read_file")
	e.complete("tools", "check", "gre").want(t, "tools check gre", "grep")
	if c := e.complete("tools", "check", "workflows/"); c.directive != dirFilterFileExt {
		t.Errorf("tools check workflows/: directive %d, want YAML files", c.directive)
	}
	e.write(".awf/wrapped-tools/shout.tool", "Shout the input. Loudly.\n\n@title Shout\n@name shout\n@wrapped run_command\n@command tr a-z A-Z\n")
	if c := e.complete("tools", "show", "sh"); c.desc["shout"] != "Shout the input." {
		t.Errorf("tools show sh: %q %q: want the project's tool shout", c.words, c.desc)
	}

	for _, tc := range []struct {
		args  []string
		words []string
	}{
		{[]string{"status", "--output", ""}, []string{"text", "json", "yaml"}},
		{[]string{"run", "hello", "-o", ""}, []string{"text", "json"}},
		{[]string{"status", "--approve", ""}, []string{"auto", "prompt", "deny"}},
		{[]string{"run", "--non-interactive=f"}, []string{"fail"}},
		{[]string{"--log-format", ""}, []string{"text", "json"}},
		{[]string{"history", "--log-level", ""}, []string{"debug", "info", "warn", "error"}},
		{[]string{"audit", "--decision", ""}, []string{"allow", "deny"}},
		{[]string{"history", "--status", ""}, []string{"completed", "failed", "interrupted", "running"}},
		{[]string{"history", "--workflow", ""}, []string{"hello", "ship"}}, // the workflows that have runs
		{[]string{"run", "hello", "--provider", "o"}, []string{"ollama", "openai"}},
		{[]string{"run", "hello", "--engine", ""}, []string{"local", "temporal"}},
		{[]string{"status", "--engine", "t"}, []string{"temporal"}},
		{[]string{"list", ""}, nil},
		{[]string{"ui", ""}, nil}, // any command of one word takes no argument: no file names
		{[]string{"tools", "list", ""}, nil},
		{[]string{"mcp", "serve", ""}, nil},
	} {
		c := e.complete(tc.args...)
		c.want(t, strings.Join(tc.args, " "), tc.words...)
		if c.directive&dirNoFileComp == 0 {
			t.Errorf("%q: directive %d offers file names", tc.args, c.directive)
		}
	}
	for _, flag := range []string{"--state-dir", "--awf-dir"} {
		if c := e.complete(flag, ""); c.directive != dirFilterDirs {
			t.Errorf("%s: directive %d, want directories", flag, c.directive)
		}
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		if r := e.mustRun(0, "completion", shell); !strings.Contains(r.stdout, "__complete") {
			t.Errorf("awf completion %s: no script:\n%s", shell, r.stdout)
		}
	}
}
