package container

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/container/engine"
	"github.com/awf-dev/awf/internal/infrastructure/process"
)

// The Docker-backed behaviour (limits, isolation, timeouts, output) is tested in
// test/integration; these tests cover what Run decides before it reaches the engine.

// newRunner returns a Runner on workspace ws. New configures a client from the environment
// but connects to nothing.
func newRunner(t *testing.T, ws string, cfg Config) *Runner {
	t.Helper()
	cfg.WorkDir = ws
	if cfg.Image == "" {
		cfg.Image = "busybox-test"
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// workspace makes files (name -> content; a name ending in "/" is a directory) under a new
// directory.
func workspace(t *testing.T, files ...string) string {
	t.Helper()
	ws := t.TempDir()
	for _, name := range files {
		path := filepath.Join(ws, name)
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(path, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// mountView is a bind mount as the tests compare it: the target relative to the workspace.
type mountView struct {
	Target string
	RO     bool
}

func views(ws string, ms []engine.Mount) []mountView {
	var out []mountView
	for _, m := range ms {
		target := m.Target
		if rel, err := filepath.Rel(ws, m.Target); err == nil && !strings.HasPrefix(rel, "..") {
			target = "WS/" + rel
		}
		out = append(out, mountView{strings.TrimSuffix(target, "/."), m.ReadOnly})
	}
	return out
}

func TestLayoutMounts(t *testing.T) {
	tests := []struct {
		name   string
		files  []string
		paths  workflow.PathPolicy
		narrow []string // a tool's restriction paths
		want   []mountView
	}{
		{
			name:  "no write list: the workspace is writable, protected names are not",
			files: []string{".git/hooks/", ".git/config", ".git/objects/", ".env", ".env.local", ".awf/runs/", "src/a.go"},
			want: []mountView{{"WS", false}, {"WS/.awf", true}, {"WS/.env", true}, {"WS/.env.local", true},
				{"WS/.git/config", true}, {"WS/.git/hooks", true}},
		},
		{
			name:  "empty write list: everything read-only, protected paths hidden",
			files: []string{".env", "src/a.go"},
			paths: workflow.PathPolicy{Write: []string{}},
			want:  []mountView{{"WS", true}, {"WS/.env", true}},
		},
		{
			name:  "write globs: their directories writable, nested and missing ones created",
			files: []string{"src/a.go", "out/.env", "out/sub/"},
			paths: workflow.PathPolicy{Write: []string{"out/**", "out/sub/*.txt", "build/**"}},
			want:  []mountView{{"WS", true}, {"WS/build", false}, {"WS/out", false}, {"WS/out/.env", true}},
		},
		{
			name:  "a literal write path that does not exist is not mounted",
			files: []string{"src/"},
			paths: workflow.PathPolicy{Write: []string{"report.txt"}},
			want:  []mountView{{"WS", true}},
		},
		{
			name:   "restriction paths narrow the writable directories",
			files:  []string{"src/gen/", "docs/", "out/"},
			paths:  workflow.PathPolicy{Write: []string{"src/**", "out/**"}},
			narrow: []string{"src/gen/*.go", "docs/**"},
			want:   []mountView{{"WS", true}, {"WS/src/gen", false}},
		},
		{
			name:   "restriction paths wider than the policy keep the policy's",
			files:  []string{"out/"},
			paths:  workflow.PathPolicy{Write: []string{"out/**"}},
			narrow: []string{"**"},
			want:   []mountView{{"WS", true}, {"WS/out", false}},
		},
		{
			name:   "empty restriction paths: nothing writable",
			files:  []string{"out/"},
			narrow: []string{},
			want:   []mountView{{"WS", true}},
		},
		{
			name:  "policy protect globs",
			files: []string{"secrets/key", "out/token.pem", "out/ok.txt"},
			paths: workflow.PathPolicy{Write: []string{"**"}, Protect: []string{"secrets", "**/*.pem"}},
			want:  []mountView{{"WS", false}, {"WS/secrets", true}, {"WS/out/token.pem", true}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws := workspace(t, tc.files...)
			l, err := planLayout(ws, &workflow.Policy{Paths: tc.paths}, tc.narrow, true)
			if err != nil {
				t.Fatalf("planLayout: %v", err)
			}
			if diff := cmp.Diff(tc.want, views(ws, l.mounts("/empty"))); diff != "" {
				t.Errorf("mounts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLayoutHidesProtectedPaths(t *testing.T) {
	ws := workspace(t, ".env", "svc/.env.prod", ".awf/runs/", "src/a.go")
	l, err := planLayout(ws, nil, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range l.mounts("/empty") {
		if m.Target == ws {
			continue
		}
		got = append(got, fmt.Sprintf("%s %s %s ro=%v", strings.TrimPrefix(m.Target, ws), m.Type, m.Source, m.ReadOnly))
	}
	want := []string{"/.awf tmpfs  ro=true", "/.env bind /empty ro=true", "/svc/.env.prod bind /empty ro=true"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("protected mounts (-want +got):\n%s", diff)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755))
	l, err = planLayout(ws, &workflow.Policy{GitHooks: true}, nil, true)
	must(err)
	hooks := filepath.Join(ws, ".git", "hooks")
	for _, m := range l.mounts("/empty") {
		if m.Target == hooks && (m.Type != engine.MountBind || m.Source != hooks || !m.ReadOnly) {
			t.Errorf("git_hooks: true: .git/hooks mounted as %+v, want bound read-only over itself", m)
		}
	}
}

func TestLayoutMountsParentsFirst(t *testing.T) {
	ws := workspace(t, "a/b/c/", ".env")
	l, err := planLayout(ws, &workflow.Policy{Paths: workflow.PathPolicy{Write: []string{"a/b/c/**", "a/**"}}}, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	ms := l.mounts("/empty")
	for i := 1; i < len(ms); i++ {
		if depth(ms[i].Target) < depth(ms[i-1].Target) {
			t.Errorf("mount %s comes after the deeper %s", ms[i].Target, ms[i-1].Target)
		}
	}
	if diff := cmp.Diff([]string{filepath.Join(ws, "a")}, l.writable); diff != "" {
		t.Errorf("writable roots (-want +got):\n%s", diff)
	}
}

func TestLayoutDescribeCreatesNothing(t *testing.T) {
	ws := workspace(t, "src/")
	l, err := planLayout(ws, &workflow.Policy{Paths: workflow.PathPolicy{Write: []string{"build/**"}}}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ws, "build")); !os.IsNotExist(err) {
		t.Errorf("planLayout without create made build/: %v", err)
	}
	if len(l.notes) == 0 {
		t.Errorf("a write root that does not exist yet is not noted")
	}
}

func TestLayoutRefuses(t *testing.T) {
	outside := t.TempDir()
	tests := []struct {
		name  string
		setup func(ws string)
		write []string
		kind  fault.Kind
		msg   string
	}{
		{"the host's root writable", nil, []string{"/**"}, fault.Invalid, "cannot mount the host's root"},
		{"proc", nil, []string{"/proc/**"}, fault.Invalid, "under /proc"},
		{"a symlink out of the workspace", func(ws string) {
			if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
				t.Fatal(err)
			}
		}, []string{"out/**"}, fault.Denied, "leads through a symlink"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			if tc.setup != nil {
				tc.setup(ws)
			}
			_, err := planLayout(ws, &workflow.Policy{Paths: workflow.PathPolicy{Write: tc.write}}, nil, true)
			if err == nil || fault.KindOf(err) != tc.kind || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("planLayout(write %q) = %v (%v), want a %v error containing %q", tc.write, err, fault.KindOf(err), tc.kind, tc.msg)
			}
		})
	}
	if _, err := planLayout("/", nil, nil, false); err == nil || fault.KindOf(err) != fault.Invalid {
		t.Errorf("planLayout(/) = %v, want an invalid error", err)
	}
}

func TestLayoutReadOutsideWorkspace(t *testing.T) {
	ws := workspace(t, "src/")
	shared := t.TempDir()
	l, err := planLayout(ws, &workflow.Policy{Paths: workflow.PathPolicy{Read: []string{"src/**", shared + "/**", "/nonexistent-awf/**"}}}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{shared}, l.readOnly); diff != "" {
		t.Errorf("extra read-only mounts (-want +got):\n%s", diff)
	}
	if !l.contains(filepath.Join(shared, "x")) || !l.contains(filepath.Join(ws, "src")) || l.contains("/etc") {
		t.Errorf("contains: workspace and shared must be visible, /etc not")
	}
}

func TestNetwork(t *testing.T) {
	tests := []struct {
		name   string
		policy workflow.Policy
		want   string
		kind   fault.Kind // of the error, when want is ""
		narrow []string   // the tool's restrictions.hosts
	}{
		{"default", workflow.Policy{}, "none", 0, nil},
		{"none", workflow.Policy{Network: "none"}, "none", 0, nil},
		{"host", workflow.Policy{Network: "host"}, "awf-net", 0, nil},
		{"hosts imply an allowlist, unfiltered", workflow.Policy{Hosts: []string{"example.com"}}, "awf-net", 0, nil},
		{"allowlist under strict", workflow.Policy{Network: "allowlist", Hosts: []string{"example.com"}, Enforce: "strict"}, "", fault.Denied, nil},
		{"unknown mode", workflow.Policy{Network: "bridge"}, "", fault.Invalid, nil},
		{"restricted to no host", workflow.Policy{Network: "host"}, "none", 0, []string{}},
		{"restricted to hosts: cannot be enforced", workflow.Policy{Network: "host"}, "", fault.Denied, []string{"example.com"}},
	}
	r := newRunner(t, t.TempDir(), Config{Network: "awf-net"})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.network(&tc.policy, tc.narrow)
			if tc.want == "" {
				if err == nil || fault.KindOf(err) != tc.kind {
					t.Errorf("network(%+v) = %q, %v; want a %v error", tc.policy, got, err, tc.kind)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("network(%+v) = %q, %v; want %q", tc.policy, got, err, tc.want)
			}
		})
	}
}

func TestResources(t *testing.T) {
	pids := int64(64)
	tests := []struct {
		name   string
		limits workflow.Limits
		want   engine.Resources
	}{
		{"none", workflow.Limits{}, engine.Resources{}},
		{"all", workflow.Limits{Memory: 64 << 20, PIDs: 64, CPU: 1.5, FileSize: 1 << 20},
			engine.Resources{Memory: 64 << 20, MemorySwap: 64 << 20, NanoCPUs: 1_500_000_000, PidsLimit: &pids,
				Ulimits: []engine.Ulimit{{Name: "fsize", Soft: 1 << 20, Hard: 1 << 20}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, resources(tc.limits)); diff != "" {
				t.Errorf("resources(%+v) (-want +got):\n%s", tc.limits, diff)
			}
		})
	}
}

func TestPlanLimitsAndDefaults(t *testing.T) {
	ws := t.TempDir()
	r := newRunner(t, ws, Config{Limits: workflow.Limits{Memory: 1 << 30, Timeout: time.Minute}})
	s, err := r.plan(ports.ProcessRequest{
		Script: "true",
		Policy: &workflow.Policy{Image: "custom", Limits: workflow.Limits{Memory: 32 << 20, Output: 100}},
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{"image": s.image, "memory": s.resources.Memory, "pids": *s.resources.PidsLimit,
		"timeout": s.timeout, "output": s.output, "dir": s.dir, "network": s.network}
	want := map[string]any{"image": "custom", "memory": int64(32 << 20), "pids": int64(DefaultPIDs),
		"timeout": time.Minute, "output": int64(100), "dir": ws, "network": "none"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
}

func TestPlanRefuses(t *testing.T) {
	ws := t.TempDir()
	tests := []struct {
		name string
		req  ports.ProcessRequest
		kind fault.Kind
		msg  string
	}{
		{"no image", ports.ProcessRequest{Policy: &workflow.Policy{}}, fault.Invalid, "no image"},
		{"bad variable name", ports.ProcessRequest{Vars: map[string]string{"a-b": "x"}}, fault.Invalid, "not a valid identifier"},
		{"bad env name", ports.ProcessRequest{Env: map[string]string{"A=B": "x"}}, fault.Invalid, "environment variable name"},
		{"missing dir", ports.ProcessRequest{Dir: filepath.Join(ws, "nope")}, fault.Execution, "working directory"},
		{"dir outside the workspace", ports.ProcessRequest{Dir: os.TempDir()}, fault.Execution, "outside the workspace"},
		{"command allowlist", ports.ProcessRequest{Policy: &workflow.Policy{Commands: []string{"git"}}}, fault.Denied, "command allowlist"},
		{"tool command restriction", ports.ProcessRequest{Policy: &workflow.Policy{},
			Restrictions: &workflow.Restrictions{Commands: []string{"grep"}}}, fault.Denied, "command allowlist"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRunner(t, ws, Config{})
			if tc.msg == "no image" {
				r.cfg.Image = "" // neither the policy nor the Config names one
			}
			_, err := r.plan(tc.req, false)
			if err == nil || fault.KindOf(err) != tc.kind || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("plan = %v (%v), want a %v error containing %q", err, fault.KindOf(err), tc.kind, tc.msg)
			}
		})
	}
}

func TestWireRequestEnv(t *testing.T) {
	r := newRunner(t, t.TempDir(), Config{})
	host := []string{"PATH=/home/u/bin:/usr/bin", "HOME=/home/u", "LANG=C.UTF-8", "OPENAI_API_KEY=sk-secret", "GOFLAGS=-mod=mod"}
	tests := []struct {
		name   string
		base   []string
		policy workflow.Policy
		env    map[string]string
		want   []string
	}{
		{"the minimal environment by default", nil, workflow.Policy{}, map[string]string{"B": "2", "A": "1"},
			[]string{"LANG=C.UTF-8", "PATH=" + process.DefaultPath, "HOME=/tmp", "TMPDIR=/tmp", "A=1", "B=2"}},
		{"awf's environment filtered, secrets out", host, workflow.Policy{}, nil,
			[]string{"LANG=C.UTF-8", "PATH=" + process.DefaultPath, "HOME=/tmp", "TMPDIR=/tmp"}},
		{"env.allow and env.set", host, workflow.Policy{Env: workflow.EnvPolicy{Allow: []string{"GOFLAGS"}, Set: map[string]string{"PATH": "/opt/bin", "X": "y"}}}, nil,
			[]string{"LANG=C.UTF-8", "GOFLAGS=-mod=mod", "PATH=/opt/bin", "X=y", "HOME=/tmp", "TMPDIR=/tmp"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := r.wireRequest(ports.ProcessRequest{BaseEnv: tc.base, Env: tc.env}, &tc.policy)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, w.Env); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	ws := workspace(t, ".env")
	r := newRunner(t, ws, Config{User: "1000:1000"})
	got, err := r.Describe(&workflow.Policy{Network: "host", Limits: workflow.Limits{Memory: 1 << 20, CPU: 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"backend": "container", "image": "busybox-test", "network": "bridge", "user": "1000:1000",
		"capabilities": "none", "no_new_privs": "true", "root_fs": "read-only", "tmp": "tmpfs 67108864 bytes",
		"workspace": ws, "writable": ws, "protected": filepath.Join(ws, ".env"),
		"memory": "1048576", "pids": "512", "cpus": "0.5", "file_size": "unlimited",
		"notes": "network not filtered by host",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Describe (-want +got):\n%s", diff)
	}
}

func TestRunRefusesDynamicHelper(t *testing.T) {
	dynamic, err := exec.LookPath("ls")
	if err != nil {
		t.Skip("no ls to stand in for a dynamically linked helper")
	}
	if checkStatic(dynamic) == nil {
		t.Skipf("%s is static here", dynamic)
	}
	r := newRunner(t, t.TempDir(), Config{HelperPath: dynamic})
	_, err = r.Run(t.Context(), ports.ProcessRequest{Script: "true"})
	if err == nil || fault.KindOf(err) != fault.System || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Errorf("Run with a dynamic helper = %v (%v), want a system error naming CGO_ENABLED=0", err, fault.KindOf(err))
	}
}

func TestCheckStatic(t *testing.T) {
	notELF := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(notELF, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := checkStatic(notELF); err == nil || fault.KindOf(err) != fault.System {
		t.Errorf("checkStatic(a shell script) = %v, want a system error", err)
	}
}

func TestCapped(t *testing.T) {
	overflows := 0
	c := &capped{limit: 5, onOverflow: func() { overflows++ }}
	for _, s := range []string{"abc", "def", "ghi"} {
		if n, err := c.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v; want all of it, no error", s, n, err)
		}
	}
	if c.String() != "abcde" || !c.Truncated() || overflows != 1 || c.Dropped("stdout") != "\n[awf: 4 bytes of stdout left out]\n" {
		t.Errorf("capped: %q truncated %v overflows %d dropped %q; want abcde, true, 1, 4 bytes", c.String(), c.Truncated(), overflows, c.Dropped("stdout"))
	}
}

// countingRunner stands in for the process backend.
type countingRunner struct{ calls int }

func (c *countingRunner) Run(context.Context, ports.ProcessRequest) (ports.ProcessResult, error) {
	c.calls++
	return ports.ProcessResult{Stdout: "process"}, nil
}

func TestSelector(t *testing.T) {
	dynamic, err := exec.LookPath("ls")
	if err != nil || checkStatic(dynamic) == nil {
		t.Skip("no dynamically linked program to make the container backend fail fast")
	}
	proc := &countingRunner{}
	s := &Selector{Process: proc, Container: Config{HelperPath: dynamic, Image: "x", WorkDir: t.TempDir()}}
	t.Cleanup(func() { s.Close() })
	for _, p := range []*workflow.Policy{nil, {}, {Backend: "process"}} {
		if res, err := s.Run(t.Context(), ports.ProcessRequest{Policy: p}); err != nil || res.Stdout != "process" {
			t.Errorf("Run(policy %+v) = %+v, %v; want the process backend", p, res, err)
		}
	}
	// The container Runner refuses the dynamic helper before reaching any engine: that
	// error shows the request went to it.
	if _, err := s.Run(t.Context(), ports.ProcessRequest{Policy: &workflow.Policy{Backend: "container"}}); err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Errorf("Run(backend container) = %v, want the container backend's error", err)
	}
	if proc.calls != 3 {
		t.Errorf("process backend ran %d requests, want 3", proc.calls)
	}
	if d, err := s.Describe(&workflow.Policy{Backend: "process"}); d != nil || err != nil {
		t.Errorf("Describe(backend process) = %v, %v; want nothing", d, err)
	}
	if d, err := s.Describe(&workflow.Policy{Backend: "container"}); err != nil || d["backend"] != "container" {
		t.Errorf("Describe(backend container) = %v, %v; want the container's description", d, err)
	}
}
