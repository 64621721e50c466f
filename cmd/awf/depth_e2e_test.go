package main

import (
	"strings"
	"testing"
)

// TestDeepTextIsRefusedBeforeParsing: expressions and shell scripts nested past 256 levels
// (100,000 here, a few hundred KB) are refused at their place, before their parsers recurse
// through them: in `awf validate`, and in a shell-tool call whose command a model could
// have sent (the helper refuses it; before, it kept the run busy for minutes).
func TestDeepTextIsRefusedBeforeParsing(t *testing.T) {
	const n = 100_000
	deepExpr := strings.Repeat("(", n) + "true" + strings.Repeat(")", n)
	deepScript := "echo " + strings.Repeat("$(", n) + "true" + strings.Repeat(")", n)
	// Compound commands and prefixes nest without brackets; the parser is stopped as it reads.
	const m = 30_000
	deepIfs := strings.Repeat("      if true; then\n", m) + "      true\n" + strings.Repeat("      fi\n", m)
	deepTimes := strings.Repeat("time ", m) + "true"
	tests := []struct {
		name, workflow string
		args           []string
		code           int
		want           string
	}{
		{"an expression", "name: deep\nsteps:\n  - {name: s, type: shell, command: 'true', when: '" + deepExpr + "'}\n",
			[]string{"validate", "wf.yaml"}, 2, "wf.yaml:3:308: expression nested deeper than 256 levels"},
		{"a command", "name: deep\nsteps:\n  - {name: s, type: shell, command: '" + deepScript + "'}\n",
			[]string{"validate", "wf.yaml"}, 2, "wf.yaml:3:556: command does not parse as shell: nested deeper than 256 levels of ( and {"},
		// Positions inside a quoted value count from after the quote (they were one early).
		{"an error in a quoted command", "name: deep\nsteps:\n  - {name: s, type: shell, command: 'echo )'}\n",
			[]string{"validate", "wf.yaml"}, 2, "wf.yaml:3:43: command does not parse as shell"},
		// A quoted value holding an escaped line break has lines that are not the file's:
		// the problem is placed at the value, never on a line the file does not have.
		{"an error after an escaped line break", "name: deep\nsteps:\n  - {name: s, type: shell, command: \"echo a\\necho )\"}\n",
			[]string{"validate", "wf.yaml"}, 2, "wf.yaml:3:37: command does not parse as shell"},
		{"an error in a one-line block", "name: deep\nsteps:\n  - name: s\n    type: shell\n    command: |-\n      echo )\n",
			[]string{"validate", "wf.yaml"}, 2, "wf.yaml:6:12: command does not parse as shell"},
		{"nested ifs", "name: deep\nsteps:\n  - name: s\n    type: shell\n    command: |\n" + deepIfs,
			[]string{"validate", "wf.yaml"}, 2, "command does not parse as shell: compound commands or operators nested too deep to parse"},
		{"a shell-tool call of nested prefixes", "name: deep\ntools:\n  - {name: shell, builtin: true, approval: auto}\nsteps:\n" +
			"  - {name: s, type: tool, tool: shell, args: {command: '" + deepTimes + "'}}\n",
			[]string{"run", "wf.yaml", "--quiet"}, 3, "compound commands or operators nested too deep to parse"},
		{"a shell-tool call", "name: deep\ntools:\n  - {name: shell, builtin: true, approval: auto}\nsteps:\n" +
			"  - {name: s, type: tool, tool: shell, args: {command: '" + deepScript + "'}}\n",
			[]string{"run", "wf.yaml", "--quiet"}, 3, "script:1:519: nested deeper than 256 levels of ( and {"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.write("wf.yaml", tc.workflow)
			r := e.run(tc.args...)
			if r.code != tc.code || !strings.Contains(r.stdout+r.stderr, tc.want) {
				t.Fatalf("awf %s: exit %d, want %d with %q\nstdout: %.300s\nstderr: %.300s", strings.Join(tc.args, " "), r.code, tc.code, tc.want, r.stdout, r.stderr)
			}
		})
	}
}

// TestManyDoubleStarsInAProtectedPath: a protected pattern of twelve "**" with a directory 40
// deep under the working directory. Matched by backtracking, every path of the walk tried each
// way of placing the "**" (nine of them took 50 s, twelve would take days); the call now runs
// as any other, and the file the pattern names stays hidden.
func TestManyDoubleStarsInAProtectedPath(t *testing.T) {
	e := newEnv(t)
	deep := strings.Repeat("a/", 40)
	e.write(deep+"x", "secret\n")
	e.write(deep+"b/x", "hidden\n")
	e.write("wf.yaml", "name: globs\nsandbox:\n  paths:\n    protect: [\""+strings.Repeat("**/a/", 12)+"**/b/x\"]\n"+
		"tools:\n  - {name: shell, builtin: true, approval: auto}\nsteps:\n"+
		"  - {name: s, type: tool, tool: shell, args: {command: 'cat "+deep+"x; cat "+deep+"b/x || echo refused'}}\n")
	res := e.runJSON(0, "run", "wf.yaml")
	if out := e.state(res.RunID).States["s"].Output; !strings.Contains(out, "secret") || strings.Contains(out, "hidden") {
		t.Fatalf("the unprotected file should be read and the protected one not; the call gave %q", out)
	}
}

// TestDeepScriptsReadByEvalAndSourceAreRefused: a step's eval and source hand their text to
// the interpreter's own parser, which has no depth limit: a few MB of nested function
// prefixes overflowed awf's stack (a fatal error, the run left "running"). They are checked
// as every script is, also through builtin and command and when found in PATH, and the step
// fails with the place.
func TestDeepScriptsReadByEvalAndSourceAreRefused(t *testing.T) {
	e := newEnv(t)
	e.write("deep.sh", strings.Repeat("f() ", 30_000)+"{ true; }\n")
	e.write("lib/lib.sh", strings.Repeat("f() ", 30_000)+"{ true; }\n") // found in PATH
	e.write("wf.yaml", "name: ev\nsteps:\n"+
		"  - {name: e, type: shell, command: 'eval \"$(cat deep.sh)\"', continue_on_error: true}\n"+
		"  - {name: s, type: shell, command: '. ./deep.sh', continue_on_error: true}\n"+
		"  - {name: be, type: shell, command: 'builtin eval \"$(cat deep.sh)\"', continue_on_error: true}\n"+
		"  - {name: ce, type: shell, command: 'command eval \"$(cat deep.sh)\"', continue_on_error: true}\n"+
		"  - {name: cs, type: shell, command: 'command . ./deep.sh', continue_on_error: true}\n"+
		"  - {name: ps, type: shell, command: 'PATH=\"$PWD/lib:$PATH\"; . lib.sh', continue_on_error: true}\n"+
		"  - {name: ok, type: shell, command: 'eval \"f() { echo fine; }; f\"'}\n")
	res := e.runJSON(0, "run", "wf.yaml")
	st := e.state(res.RunID)
	for step, want := range map[string]string{"e": "eval:1:", "s": "./deep.sh:1:", "be": "eval:1:", "ce": "eval:1:", "cs": "./deep.sh:1:", "ps": "lib.sh:1:"} {
		if got := st.States[step].Error; !strings.Contains(got, want) || !strings.Contains(got, "nested too deep to parse") {
			t.Errorf("step %s: error %q, want the refusal at %s", step, got, want)
		}
	}
	if got := st.States["ok"].Output; strings.TrimSpace(got) != "fine" {
		t.Errorf("an ordinary eval gave %q, want fine", got)
	}
}
