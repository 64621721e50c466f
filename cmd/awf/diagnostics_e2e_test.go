package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// With --log-format json every log line is one JSON object whose keys are each given once
// (the run's workflow used to be written twice), and a warning of an agent step reaches stderr
// once, as the progress output's warning line, not a second time as a log line.
func TestLogLinesAreJSONWithUniqueKeysAndWarningsOnce(t *testing.T) {
	e := agentEnv(t, "maxcalls-stop.yaml", "maxcalls.cassette.yaml")
	r := e.mustRun(0, "run", "agent/maxcalls-stop.yaml", "--replay", "agent/maxcalls.cassette.yaml",
		"--log-format", "json", "--log-level", "debug")
	logs := 0
	for _, line := range strings.Split(r.stderr, "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		logs++
		if err := uniqueKeys(line); err != nil {
			t.Errorf("log line %s: %v", line, err)
		}
	}
	if logs < 4 {
		t.Errorf("%d JSON log lines, want the run's and its steps':\n%s", logs, r.stderr)
	}
	if n := strings.Count(r.stderr, "max_calls (2) reached"); n != 1 {
		t.Errorf("the max_calls warning is printed %d times, want once:\n%s", n, r.stderr)
	}
}

// uniqueKeys decodes one JSON value and fails when an object in it has a key twice (which
// encoding/json accepts, keeping the last).
func uniqueKeys(doc string) error {
	dec := json.NewDecoder(strings.NewReader(doc))
	if err := uniqueValue(dec); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("more than one JSON value")
	}
	return nil
}

func uniqueValue(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return err
			}
			k := key.(string)
			if seen[k] {
				return fmt.Errorf("key %q twice", k)
			}
			seen[k] = true
			if err := uniqueValue(dec); err != nil {
				return err
			}
		}
		_, err = dec.Token()
	case json.Delim('['):
		for dec.More() {
			if err := uniqueValue(dec); err != nil {
				return err
			}
		}
		_, err = dec.Token()
	}
	return err
}

// FORCE_COLOR and CLICOLOR_FORCE colour the progress lines even in a pipe (a CI log that shows
// colours); NO_COLOR wins over both; FORCE_COLOR=0 turns colour off.
func TestForceColor(t *testing.T) {
	e := newEnv(t)
	e.write("hello.yaml", "name: hello\nsteps:\n  - {name: a, type: shell, command: echo hi}\n")
	green := "\033[32m✓\033[0m a"
	for _, tc := range []struct {
		env   []string
		color bool
	}{
		{nil, false},
		{[]string{"FORCE_COLOR=1"}, true},
		{[]string{"CLICOLOR_FORCE=1"}, true},
		{[]string{"FORCE_COLOR=1", "NO_COLOR=1"}, false},
		{[]string{"CLICOLOR_FORCE=1", "FORCE_COLOR=0"}, false},
	} {
		args := []string{"run", "hello.yaml"}
		cmd := e.cmd(t.Context(), args...)
		cmd.Env = append(cmd.Env, tc.env...)
		r := e.wantExit(e.capture(cmd, args), 0, args)
		if got := strings.Contains(r.stderr, green); got != tc.color {
			t.Errorf("%v: coloured %v, want %v:\n%q", tc.env, got, tc.color, r.stderr)
		}
		if !tc.color && strings.Contains(r.stderr, "\033[") {
			t.Errorf("%v: escape codes without colour:\n%q", tc.env, r.stderr)
		}
	}
}

// A user config file that exists but cannot be read (here a directory; as root no permission
// stops a read) is a warning naming it, and the command goes on; one that does not parse is a
// usage error at its line, as a project config file that cannot be read is.
func TestUnreadableUserConfigIsAWarning(t *testing.T) {
	e := newEnv(t)
	e.write("hello.yaml", "name: hello\nsteps:\n  - {name: a, type: shell, command: echo hi}\noutput: \"{{states.a.output}}\"\n")
	userConfig := filepath.Join(e.dir, ".home", ".config", "awf", "config.yaml")
	if err := os.MkdirAll(userConfig, 0o755); err != nil {
		t.Fatal(err)
	}
	r := e.mustRun(0, "run", "hello.yaml")
	if strings.TrimSpace(r.stdout) != "hi" || strings.Count(r.stderr, "warning: read config "+userConfig+": is a directory;") != 1 ||
		!strings.Contains(r.stderr, "its settings are ignored") {
		t.Errorf("unreadable user config: stdout %q, stderr:\n%s", r.stdout, r.stderr)
	}

	if err := os.Remove(userConfig); err != nil {
		t.Fatal(err)
	}
	e.write(".home/.config/awf/config.yaml", "state_dir: runs\nlog_levle: debug\n")
	r = e.mustRun(1, "run", "hello.yaml")
	if !strings.Contains(r.stderr, userConfig) || !strings.Contains(r.stderr, "log_levle") {
		t.Errorf("user config that does not parse: %s", r.stderr)
	}

	e.write(".home/.config/awf/config.yaml", "")
	if err := os.MkdirAll(filepath.Join(e.dir, ".awf", "config.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	r = e.mustRun(1, "run", "hello.yaml")
	if !strings.Contains(r.stderr, "error: read config "+filepath.Join(e.dir, ".awf", "config.yaml")+": is a directory") {
		t.Errorf("unreadable project config: %s", r.stderr)
	}
}

// An input used but not declared is a warning, not an error (dsl.md says so), with the
// declared input it is close to; awf run prints it once.
func TestUndeclaredInputWarningSuggestsTheDeclaredOne(t *testing.T) {
	e := newEnv(t)
	e.write("wf.yaml", "name: wf\ninputs:\n  - {name: feature, default: x}\nsteps:\n  - {name: a, type: shell, command: \"echo {{inputs.featur}}\"}\n")
	want := `wf.yaml:5:45: warning: input "featur" is used but not declared; treated as a required string (did you mean "feature"?)`
	if r := e.mustRun(0, "validate", "wf.yaml"); !strings.Contains(r.stdout+r.stderr, want) {
		t.Errorf("awf validate:\n%s%s\nwant %s", r.stdout, r.stderr, want)
	}
	if r := e.mustRun(0, "run", "wf.yaml", "--input", "featur=y"); strings.Count(r.stderr, want) != 1 {
		t.Errorf("awf run: the warning is not printed once:\n%s", r.stderr)
	}
}
