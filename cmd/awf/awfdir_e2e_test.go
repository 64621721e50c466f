package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The project's .awf/ is found upwards from the working directory, as git finds .git
// (config.FindProject); AWF_DIR and --awf-dir override it.

const awfDirWorkflow = `name: where
inputs:
  - name: data
    type: string
    default: data
    dir_exists: true
steps:
  - name: show
    type: shell
    command: ls {{inputs.data}}
output: "{{states.show.output}}"
`

// runIn runs awf in dir (relative to e.dir) with extra environment entries.
func (e *env) runIn(dir string, extraEnv []string, args ...string) result {
	e.t.Helper()
	cmd := e.cmd(e.t.Context(), args...)
	cmd.Dir = filepath.Join(e.dir, dir)
	cmd.Env = append(cmd.Env, extraEnv...)
	return e.capture(cmd, args)
}

// historyIDs is what `awf history` run in dir lists.
func (e *env) historyIDs(dir string, extraEnv []string, args ...string) []string {
	e.t.Helper()
	r := e.wantExit(e.runIn(dir, extraEnv, append([]string{"history", "--output", "json"}, args...)...), 0, nil)
	var h struct {
		Runs []struct {
			RunID string `json:"run_id"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &h); err != nil {
		e.t.Fatalf("history: %v\n%s", err, r.stdout)
	}
	var ids []string
	for _, run := range h.Runs {
		ids = append(ids, run.RunID)
	}
	return ids
}

// runID runs a workflow in dir and returns its run id.
func (e *env) runID(dir string, extraEnv []string, args ...string) string {
	e.t.Helper()
	r := e.wantExit(e.runIn(dir, extraEnv, append(append([]string{"run"}, args...), "--output", "json")...), 0, args)
	var res runResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		e.t.Fatalf("run: %v\n%s", err, r.stdout)
	}
	return res.RunID
}

func (e *env) mkdir(dir string) {
	e.t.Helper()
	if err := os.MkdirAll(filepath.Join(e.dir, dir), 0o755); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) exists(path string) bool {
	_, err := os.Stat(filepath.Join(e.dir, path))
	return err == nil
}

func TestAwfDirFoundUpwardsFromSubdirectory(t *testing.T) {
	e := newEnv(t)
	e.write("wf.yaml", awfDirWorkflow)
	e.write("data/a.txt", "a")
	e.mkdir("sub/deep")
	atRoot := e.runID(".", nil, "wf.yaml")
	// From a subdirectory: the run is kept in the root's .awf, and the data input's default
	// is found next to the workflow file, not in the working directory.
	inSub := e.runID("sub/deep", nil, "../../wf.yaml")
	if e.exists("sub/deep/.awf") || e.exists("sub/.awf") {
		t.Error("a run in a subdirectory created a second .awf")
	}
	for _, dir := range []string{".", "sub/deep"} {
		if ids := e.historyIDs(dir, nil); !slices.Contains(ids, atRoot) || !slices.Contains(ids, inSub) {
			t.Errorf("history in %s = %v, want both %s and %s", dir, ids, atRoot, inSub)
		}
	}
	if out := e.state(inSub).Output; strings.TrimSpace(out) != "a.txt" {
		t.Errorf("output = %q, want the listing of data/ next to wf.yaml", out)
	}
	// The project's .awf/workflows are listed and run by name from the subdirectory too.
	e.write(".awf/workflows/greet.yaml", "name: greet\nsteps:\n  - {name: s, type: shell, command: echo hi}\noutput: \"{{states.s.output}}\"\n")
	if r := e.wantExit(e.runIn("sub/deep", nil, "list"), 0, nil); !strings.Contains(r.stdout, "greet") {
		t.Errorf("awf list in a subdirectory lacks the project's greet:\n%s", r.stdout)
	}
	byName := e.runID("sub/deep", nil, "greet")
	if out := e.state(byName).Output; out != "hi" {
		t.Errorf("awf run greet from a subdirectory: output %q", out)
	}
}

func TestAwfDirCreatedAtGitWorkTreeRoot(t *testing.T) {
	e := newEnv(t)
	e.write("wf.yaml", awfDirWorkflow)
	e.write("data/a.txt", "a")
	e.mkdir(".git")
	e.mkdir("pkg/inner")
	id := e.runID("pkg/inner", nil, "../../wf.yaml")
	if e.exists("pkg/inner/.awf") {
		t.Error("the first run in a subdirectory of a git work tree created .awf there, not at the top")
	}
	if !e.exists(filepath.Join(".awf", "runs", id+".yaml")) {
		t.Error("the run is not in the work tree's .awf/runs")
	}
}

func TestAwfDirOverride(t *testing.T) {
	e := newEnv(t)
	e.write("wf.yaml", awfDirWorkflow)
	e.write("data/a.txt", "a")
	e.mkdir("elsewhere")
	byEnv := e.runID(".", []string{"AWF_DIR=elsewhere/state"}, "wf.yaml")
	byFlag := e.runID(".", nil, "wf.yaml", "--awf-dir", filepath.Join(e.dir, "elsewhere", "state"))
	for _, id := range []string{byEnv, byFlag} {
		if !e.exists(filepath.Join("elsewhere", "state", "runs", id+".yaml")) {
			t.Errorf("run %s is not in the awf directory AWF_DIR / --awf-dir named", id)
		}
	}
	if e.exists(".awf") {
		t.Error("an override still created ./.awf")
	}
	if ids := e.historyIDs(".", nil, "--awf-dir", "elsewhere/state"); len(ids) != 2 {
		t.Errorf("history --awf-dir = %v, want both runs", ids)
	}
	// The project config file is read from the overriding directory.
	e.write("elsewhere/state/config.yaml", "state_dir: kept\n")
	id := e.runID(".", []string{"AWF_DIR=elsewhere/state"}, "wf.yaml")
	if !e.exists(filepath.Join("elsewhere", "kept", id+".yaml")) {
		t.Error("state_dir of AWF_DIR's config.yaml was not used (relative to the directory holding it)")
	}
}

// A .awf planted in a directory anyone may write to (as /tmp) is not the project of the
// directories below it: its config could name commands awf runs.
func TestAwfDirIgnoresPlantedInSharedParent(t *testing.T) {
	e := newEnv(t)
	e.write("shared/.awf/config.yaml", "state_dir: /nonexistent/planted\n")
	if err := os.Chmod(filepath.Join(e.dir, "shared"), 0o1777); err != nil {
		t.Fatal(err)
	}
	e.write("shared/proj/wf.yaml", awfDirWorkflow)
	e.write("shared/proj/data/a.txt", "a")
	id := e.runID("shared/proj", nil, "wf.yaml")
	if !e.exists(filepath.Join("shared", "proj", ".awf", "runs", id+".yaml")) {
		t.Error("the run was not kept in the working directory's own .awf")
	}
}

// The examples' path defaults (project_path) resolve against the workflow file, so an example
// runs from any directory.
func TestExampleRunsFromAnotherDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: the sample project's tests compile and run")
	}
	e := newEnv(t)
	copyWorkflows(t, filepath.Join("..", "..", "workflows"), filepath.Join(e.dir, "workflows"))
	shareGoCache(t, e)
	e.mkdir("elsewhere")
	id := e.runID("elsewhere", []string{"GOCACHE=" + filepath.Join(e.home, ".cache", "go-build")},
		"../workflows/build-and-test.yaml")
	data, err := os.ReadFile(filepath.Join(e.dir, "elsewhere", ".awf", "runs", id+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(e.dir, "workflows", "sample-project")
	if !strings.Contains(string(data), "project_path: "+want) {
		t.Errorf("state does not record project_path %s:\n%s", want, data)
	}
}

// A .awf that another user could have made or could change is never used, wherever it is met:
// a symbolic link of another user (to a directory anyone may write, where anyone can plant a
// config.yaml), a .awf in a directory of another user, one anyone may write to, or a file.
// Above the working directory it is passed over; in the working directory (where the project
// would otherwise be) awf refuses to run and says why. Run as root, awf must not take
// another user's .awf for its own because root can read it.
func TestAwfDirRefusesPlantedOrForeign(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making files of another user needs root")
	}
	const nobody = 65534
	e := newEnv(t)
	e.write("open/config.yaml", "state_dir: "+filepath.Join(e.dir, "planted")+"\n")
	chmod := func(p string, mode os.FileMode) {
		if err := os.Chmod(filepath.Join(e.dir, p), mode); err != nil {
			t.Fatal(err)
		}
	}
	chown := func(p string) {
		if err := os.Lchown(filepath.Join(e.dir, p), nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	chmod("open", 0o1777)
	for _, c := range []struct {
		name, why string
		plant     func(dir string)
	}{
		{"link of another user", "belongs to another user", func(dir string) {
			if err := os.Symlink(filepath.Join(e.dir, "open"), filepath.Join(e.dir, dir, ".awf")); err != nil {
				t.Fatal(err)
			}
			chown(filepath.Join(dir, ".awf"))
		}},
		{"in a directory of another user", "a directory of another user", func(dir string) {
			e.write(filepath.Join(dir, ".awf", "config.yaml"), "state_dir: "+filepath.Join(e.dir, "planted")+"\n")
			chown(dir)
		}},
		{"writable by anyone", "writable by anyone", func(dir string) {
			e.write(filepath.Join(dir, ".awf", "config.yaml"), "state_dir: "+filepath.Join(e.dir, "planted")+"\n")
			chmod(filepath.Join(dir, ".awf"), 0o777)
		}},
		{"a file", "not a directory", func(dir string) { e.write(filepath.Join(dir, ".awf"), "x") }},
	} {
		dir := strings.ReplaceAll(c.name, " ", "-")
		e.write(filepath.Join(dir, "proj", "wf.yaml"), awfDirWorkflow)
		e.write(filepath.Join(dir, "proj", "data", "a.txt"), "a")
		e.write(filepath.Join(dir, "wf.yaml"), awfDirWorkflow)
		e.write(filepath.Join(dir, "data", "a.txt"), "a")
		c.plant(dir)
		// Above the working directory: passed over, the run is kept in the proj's own .awf.
		id := e.runID(filepath.Join(dir, "proj"), nil, "wf.yaml")
		if !e.exists(filepath.Join(dir, "proj", ".awf", "runs", id+".yaml")) {
			t.Errorf("%s: the run was not kept in the working directory's own .awf", c.name)
		}
		// In the working directory: refused, nothing runs.
		r := e.runIn(dir, nil, "run", "wf.yaml")
		if r.code != 1 || !strings.Contains(r.stderr, c.why) || !strings.Contains(r.stderr, "--awf-dir") {
			t.Errorf("%s: awf run in its directory: exit %d, want 1 and %q\n%s", c.name, r.code, c.why, r.stderr)
		}
	}
	if e.exists("planted") {
		t.Error("a planted config.yaml was read: runs went to its state_dir")
	}
}
