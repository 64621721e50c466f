package integration

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/google/go-cmp/cmp"
	"github.com/moby/moby/client"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/container"
)

// testLabel marks the containers of one test, so that a test can check none is left.
const testLabel = "dev.awf.integration-test"

// newBackend returns a container backend on a fresh workspace, using the busybox image and
// the static helper, with its containers labelled for this test.
func newBackend(t *testing.T) (*container.Runner, string, string) {
	t.Helper()
	requireDocker(t)
	ws := t.TempDir()
	id := rand.Text()
	r, err := container.New(container.Config{
		HelperPath: helperPath,
		Image:      busyboxImage,
		WorkDir:    ws,
		Labels:     map[string]string{testLabel: id},
	})
	if err != nil {
		t.Fatalf("container.New: %v", err)
	}
	return r, ws, id
}

// leftovers lists the containers labelled id, running or not.
func leftovers(t *testing.T, id string) []string {
	t.Helper()
	list, err := docker.ContainerList(context.WithoutCancel(t.Context()), client.ContainerListOptions{
		All:     true,
		Filters: make(client.Filters).Add("label", testLabel+"="+id),
	})
	if err != nil {
		t.Fatalf("list containers: %v", err)
	}
	var ids []string
	for _, c := range list.Items {
		ids = append(ids, c.ID[:12]+" "+string(c.State))
	}
	return ids
}

func TestBackendRunsScript(t *testing.T) {
	t.Parallel()
	r, ws, id := newBackend(t)
	if err := os.Mkdir(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(t.Context(), ports.ProcessRequest{
		// $PPID is the init: the entry became the helper in place, rather than starting it.
		Script: `printf '%s|%s|%s|%s|' $PPID "$V" "$E" "$(basename "$PWD")"; cat; echo oops >&2; exit 3`,
		Vars:   map[string]string{"V": "it's $(not) run"},
		Env:    map[string]string{"E": "env"},
		Dir:    filepath.Join(ws, "sub"),
		Stdin:  "in",
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := ports.ProcessResult{Stdout: "1|it's $(not) run|env|sub|in", Stderr: "oops\n", ExitCode: 3}
	res.Duration = 0
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("Run result (-want +got):\n%s", diff)
	}
	if left := leftovers(t, id); len(left) > 0 {
		t.Errorf("containers left after Run: %v", left)
	}
}

func TestBackendLargeVarsVerbatim(t *testing.T) {
	t.Parallel()
	r, _, _ := newBackend(t)
	big := make([]byte, 1<<20)
	rand.Read(big)
	for i, b := range big {
		if b == 0 { // a shell variable cannot hold NUL
			big[i] = 1
		}
	}
	res, err := r.Run(t.Context(), ports.ProcessRequest{
		Script: `printf '%s' "$BIG"`,
		Vars:   map[string]string{"BIG": string(big)},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Stdout != string(big) || res.ExitCode != 0 {
		t.Errorf("1 MiB variable came back as %d bytes (exit %d), equal: %v; want it verbatim", len(res.Stdout), res.ExitCode, res.Stdout == string(big))
	}
}

func TestBackendMemoryLimitKillsHog(t *testing.T) {
	t.Parallel()
	r, _, _ := newBackend(t)
	res, err := r.Run(t.Context(), ports.ProcessRequest{
		// The interpreter itself doubles a string until the cgroup's limit stops it.
		Script: `echo started; x=0123456789abcdef; while :; do x=$x$x; done`,
		Policy: &workflow.Policy{Limits: workflow.Limits{Memory: 48 << 20}},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Stdout != "started\n" || res.ExitCode != 137 || !strings.Contains(res.Stderr, "ran out of memory") {
		t.Errorf("memory hog: stdout %q, exit %d, stderr %q; want started, 137 and an out-of-memory note", res.Stdout, res.ExitCode, res.Stderr)
	}
}

func TestBackendWritesStayInside(t *testing.T) {
	t.Parallel()
	r, ws, _ := newBackend(t)
	for name, content := range map[string]string{"readonly.txt": "original", "out/.env": "SECRET=1", ".awf/runs/x.yaml": "state"} {
		path := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The workspace's parent exists in the container only as the path to the mount, on the
	// container's own /tmp.
	suffix := rand.Text()
	outside := map[string]string{
		"etc":    "/etc/awf-escape-" + suffix,
		"root":   "/awf-escape-" + suffix,
		"parent": filepath.Join(filepath.Dir(ws), "awf-escape-"+suffix),
	}
	res, err := r.Run(t.Context(), ports.ProcessRequest{
		Script: `w() { (echo pwned > "$2") 2>/dev/null; echo "$1=$?"; }
w etc "$ETC"; w root "$ROOT"; w parent "$PARENT"
w readonly readonly.txt; w state .awf/runs/x.yaml; w env out/.env; w out out/new.txt`,
		Vars:   map[string]string{"ETC": outside["etc"], "ROOT": outside["root"], "PARENT": outside["parent"]},
		Dir:    ws,
		Policy: &workflow.Policy{Paths: workflow.PathPolicy{Write: []string{"out/**"}}},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	got := map[string]bool{} // name -> the write succeeded in the container
	for line := range strings.Lines(res.Stdout) {
		name, status, _ := strings.Cut(strings.TrimSpace(line), "=")
		got[name] = status == "0"
	}
	// The parent is the container's tmpfs: writable there, gone with the container.
	want := map[string]bool{"etc": false, "root": false, "parent": true, "readonly": false, "state": false, "env": false, "out": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("writes that succeeded in the container (-want +got):\n%s\nstderr: %s", diff, res.Stderr)
	}
	for name, path := range outside {
		if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("write to %s (%s) reached the host: %v", name, path, err)
			os.Remove(path)
		}
	}
	for name, content := range map[string]string{"readonly.txt": "original", "out/.env": "SECRET=1", ".awf/runs/x.yaml": "state", "out/new.txt": "pwned\n"} {
		if data, err := os.ReadFile(filepath.Join(ws, name)); err != nil || string(data) != content {
			t.Errorf("host %s = %q (%v), want %q", name, data, err, content)
		}
	}
}

func TestBackendNetwork(t *testing.T) {
	t.Parallel()
	requireDocker(t)
	ln, err := net.Listen("tcp", ":0") // on every interface, the Docker bridge's included
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hello from the host\n"))
			c.Close()
		}
	}()
	gateway := bridgeGateway(t)
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	tests := []struct {
		name   string
		policy *workflow.Policy
		want   string
	}{
		{"no policy: no network", nil, "failed: Network is unreachable"},
		{"network none", &workflow.Policy{Network: "none"}, "failed: Network is unreachable"},
		{"network host: the control that proves the probe works", &workflow.Policy{Network: "host"}, "hello from the host"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, _, _ := newBackend(t)
			res, err := r.Run(t.Context(), ports.ProcessRequest{
				Script: `nc -w 5 "$GW" "$PORT" </dev/null 2>err || echo "failed: $(sed 's/.*: //' err)"`,
				Vars:   map[string]string{"GW": gateway, "PORT": port},
				Policy: tc.policy,
			})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got := strings.TrimSpace(res.Stdout); got != tc.want {
				t.Errorf("connect to %s:%s = %q, want %q (stderr %q)", gateway, port, got, tc.want, res.Stderr)
			}
		})
	}
}

// bridgeGateway is the host's address on Docker's default bridge.
func bridgeGateway(t *testing.T) string {
	t.Helper()
	nw, err := docker.NetworkInspect(t.Context(), "bridge", client.NetworkInspectOptions{})
	if err != nil {
		t.Fatalf("inspect the bridge network: %v", err)
	}
	for _, c := range nw.Network.IPAM.Config {
		switch {
		case c.Gateway.IsValid() && c.Gateway.Is4():
			return c.Gateway.String()
		case c.Subnet.IsValid() && c.Subnet.Addr().Is4():
			return c.Subnet.Masked().Addr().Next().String() // the default bridge does not say: docker0 is the first address
		}
	}
	t.Fatalf("the bridge network has no IPv4 gateway: %+v", nw.Network.IPAM)
	return ""
}

func TestBackendStopKillsAndRemoves(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		timeout time.Duration // the request's
		ctx     time.Duration // the caller's context's
		want    string
	}{
		{"request timeout", 3 * time.Second, 0, "timed out after 3s"},
		{"context deadline", 0, 3 * time.Second, "timed out"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, _, id := newBackend(t)
			ctx := t.Context()
			if tc.ctx > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctx)
				defer cancel()
			}
			res, err := r.Run(ctx, ports.ProcessRequest{Script: `echo started; sleep 600 & sleep 600`, Timeout: tc.timeout})
			if err == nil || err.Error() != tc.want || fault.KindOf(err) != fault.Execution || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Run = %v (%v), want %q of kind execution wrapping the deadline", err, fault.KindOf(err), tc.want)
			}
			if res.Stdout != "started\n" || res.ExitCode != 137 {
				t.Errorf("partial result: stdout %q, exit %d; want started and 137", res.Stdout, res.ExitCode)
			}
			if left := leftovers(t, id); len(left) > 0 {
				t.Errorf("containers left after a timeout: %v", left)
			}
		})
	}
}

func TestBackendOutputCap(t *testing.T) {
	t.Parallel()
	r, _, _ := newBackend(t)
	const limit = 1 << 20
	res, err := r.Run(t.Context(), ports.ProcessRequest{Script: `yes 0123456789`, OutputLimit: limit})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !res.Truncated || len(res.Stdout) != limit || res.ExitCode != 137 || !strings.HasPrefix(res.Stdout, "0123456789\n0123456789\n") {
		t.Errorf("flood: truncated %v, %d bytes, exit %d; want the first %d bytes, truncated, 137", res.Truncated, len(res.Stdout), res.ExitCode, limit)
	}
}

func TestBackendLimitsApplied(t *testing.T) {
	t.Parallel()
	r, _, _ := newBackend(t)
	// cgroup v1 paths first (these machines), then v2.
	res, err := r.Run(t.Context(), ports.ProcessRequest{
		Script: `show() { cat "/sys/fs/cgroup/$1" 2>/dev/null || cat "/sys/fs/cgroup/$2"; }
show memory/memory.limit_in_bytes memory.max; show pids/pids.max pids.max; show cpu/cpu.cfs_quota_us cpu.max`,
		Policy: &workflow.Policy{Limits: workflow.Limits{Memory: 96 << 20, PIDs: 40, CPU: 0.5}},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	got := strings.Fields(res.Stdout)
	want := []string{fmt.Sprint(96 << 20), "40", "50000"} // quota of a 100000 µs period
	if len(got) > 3 && got[3] == "100000" {               // v2: "50000 100000"
		got = got[:3]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cgroup limits seen in the container (-want +got):\n%s\nstderr: %s", diff, res.Stderr)
	}
}

func TestBackendPIDsLimitContainsForkBomb(t *testing.T) {
	t.Parallel()
	r, _, id := newBackend(t)
	res, err := r.Run(t.Context(), ports.ProcessRequest{
		// busybox sh forks until the limit stops it; the script then waits on a FIFO nobody
		// writes, until the timeout. The helper itself may be the one refused a thread first:
		// either way the run ends, with the refusals on stderr.
		Script:  `mkfifo /tmp/f; sh -c 'b() { b | b & }; b'; read x < /tmp/f`,
		Timeout: 3 * time.Second,
		Policy:  &workflow.Policy{Limits: workflow.Limits{PIDs: 32}},
	})
	if err != nil && err.Error() != "timed out after 3s" {
		t.Fatalf("fork bomb: Run = %v, want a result or the timeout", err)
	}
	if !strings.Contains(strings.ToLower(res.Stderr), "resource temporarily unavailable") {
		t.Errorf("fork bomb under pids 32: stderr %q, want forks refused", res.Stderr)
	}
	if left := leftovers(t, id); len(left) > 0 {
		t.Errorf("containers left: %v", left)
	}
}

func TestBackendNeverPulls(t *testing.T) {
	t.Parallel()
	r, _, id := newBackend(t)
	const image = "awf-it/not-built:never"
	_, err := r.Run(t.Context(), ports.ProcessRequest{Script: "true", Policy: &workflow.Policy{Image: image}})
	if err == nil || fault.KindOf(err) != fault.Execution || !strings.Contains(err.Error(), "never pulled") {
		t.Fatalf("Run with a missing image = %v (%v), want an execution error saying images are never pulled", err, fault.KindOf(err))
	}
	if _, err := docker.ImageInspect(t.Context(), image); !cerrdefs.IsNotFound(err) {
		t.Errorf("image %s after Run: %v, want still not found", image, err)
	}
	if left := leftovers(t, id); len(left) > 0 {
		t.Errorf("containers left: %v", left)
	}
}

// TestBackendHidesProtectedPaths: a script in a container reads nothing of the protected
// paths and writes none of them, wherever they are in the workspace (issue 11, item 7).
func TestBackendHidesProtectedPaths(t *testing.T) {
	t.Parallel()
	r, ws, _ := newBackend(t)
	files := map[string]string{
		".env": "API_KEY=host-secret-1", "svc/.env.local": "API_KEY=host-secret-2",
		".git/config": "[core]\n\thooksPath = x\n", ".git/hooks/pre-commit": "#!/bin/sh\n", ".awf/audit.jsonl": "{}\n",
	}
	for name, content := range files {
		path := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := r.Run(t.Context(), ports.ProcessRequest{
		Script: `cat .env svc/.env.local .git/config; ls -A .awf .git/hooks
(echo evil > .env) 2>/dev/null && echo wrote-env
(echo evil > .git/hooks/pre-commit) 2>/dev/null && echo wrote-hook
(echo evil > .git/hooks/post-checkout) 2>/dev/null && echo made-hook
(echo evil >> .git/config) 2>/dev/null && echo wrote-config
echo done`,
		Dir: ws,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if want := ".awf:\n\n.git/hooks:\ndone\n"; res.Stdout != want {
		t.Errorf("stdout = %q, want %q: protected paths hidden and read-only\nstderr: %s", res.Stdout, want, res.Stderr)
	}
	for name, content := range files {
		if data, err := os.ReadFile(filepath.Join(ws, name)); err != nil || string(data) != content {
			t.Errorf("host %s = %q (%v), want %q", name, data, err, content)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, ".git", "hooks", "post-checkout")); err == nil {
		t.Error("a hook was created on the host")
	}
}
