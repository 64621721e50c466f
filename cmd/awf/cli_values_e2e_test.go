package main

import (
	"strings"
	"testing"
)

// Bad values are refused like every other bad flag value, and a dry run shows what it would
// do even without its required inputs.
func TestCLIValuesAreChecked(t *testing.T) {
	e := newEnv(t)
	e.write("req.yaml", "name: req\ninputs:\n  - {name: x, type: string, required: true}\nsteps:\n  - {name: a, type: shell, command: \"echo {{inputs.x}}\"}\n")
	e.write("hello.yaml", helloWorkflow)
	e.write("dir/keep", "")

	for _, tc := range []struct {
		name string
		env  string
		args []string
		want string
	}{
		{name: "log format", args: []string{"--log-format", "xml", "list"}, want: "--log-format=xml: want text or json"},
		{name: "log level from the environment", env: "AWF_LOG_LEVEL=chatty", args: []string{"list"}, want: "AWF_LOG_LEVEL=chatty: want debug"},
		{name: "an input given twice", args: []string{"run", "hello.yaml", "--input", "name=a", "--input", "name=b"}, want: `--input name is given twice ("a" and "b")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := e.cmd(t.Context(), tc.args...)
			if tc.env != "" {
				cmd.Env = append(cmd.Env, tc.env)
			}
			r := e.wantExit(e.capture(cmd, tc.args), 1, tc.args)
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr %q does not say %q", r.stderr, tc.want)
			}
		})
	}

	t.Run("validate of a directory says only what is wrong", func(t *testing.T) {
		r := e.mustRun(1, "validate", "dir")
		if strings.Contains(r.stderr, "invalid") || !strings.Contains(r.stderr, "is a directory") {
			t.Errorf("stderr:\n%s", r.stderr)
		}
	})
	t.Run("dry run without a required input", func(t *testing.T) {
		r := e.mustRun(0, "run", "req.yaml", "--dry-run")
		if !strings.Contains(r.stdout, "missing required inputs: x") || !strings.Contains(r.stdout, "echo <missing input x>") {
			t.Errorf("dry run output:\n%s", r.stdout)
		}
	})
}
