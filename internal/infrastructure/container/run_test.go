package container

import (
	"bytes"
	stdcmp "cmp"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/infrastructure/container/engine"
	"github.com/awf-dev/awf/internal/infrastructure/container/engine/enginetest"
)

// These tests run the backend against a fake engine: what it sends, in which order, and how
// it reads the engine's answers. test/integration runs it against a real one.

// fakeEngine plays one container's life: created, attached, started (when it writes the
// helper's status file, as the helper would), stopped with exit, inspected, removed.
type fakeEngine struct {
	t             *testing.T
	createStatus  int // 0 means 201
	createMessage string
	imageStatus   int    // of an image inspection; 0 means 200
	killStatus    int    // 0 means 204
	frames        []byte // the attach stream
	exit          int
	oom           bool

	mu      sync.Mutex
	calls   []string
	created engine.CreateRequest
	started chan struct{} // closed by start
	drained chan struct{} // closed when the attach stream has been sent
}

func (f *fakeEngine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route := r.Method + " " + strings.TrimPrefix(r.URL.Path, "/v1.41")
	f.mu.Lock()
	f.calls = append(f.calls, route)
	f.mu.Unlock()
	switch route {
	case "POST /containers/create":
		if err := json.NewDecoder(r.Body).Decode(&f.created); err != nil {
			f.t.Errorf("create body: %v", err)
		}
		if f.createStatus != 0 {
			answer(w, f.createStatus, map[string]string{"message": f.createMessage})
			return
		}
		answer(w, http.StatusCreated, map[string]string{"Id": "c0ffee"})
	case "GET /images/" + f.created.Image + "/json":
		answer(w, stdcmp.Or(f.imageStatus, http.StatusOK), map[string]string{"message": "No such image", "Id": "sha256:1"})
	case "POST /containers/c0ffee/attach":
		conn := enginetest.Upgrade(f.t, w)
		<-f.started
		conn.Write(f.frames)
		conn.Close()
		close(f.drained)
	case "POST /containers/c0ffee/start":
		f.writeStatus()
		close(f.started)
		w.WriteHeader(http.StatusNoContent)
	case "POST /containers/c0ffee/wait":
		<-f.drained
		answer(w, http.StatusOK, map[string]any{"StatusCode": f.exit})
	case "GET /containers/c0ffee/json":
		answer(w, http.StatusOK, map[string]any{"Id": "c0ffee", "State": map[string]any{"OOMKilled": f.oom}})
	case "POST /containers/c0ffee/kill":
		answer(w, stdcmp.Or(f.killStatus, http.StatusNoContent), map[string]string{"message": "not running"})
	case "DELETE /containers/c0ffee":
		w.WriteHeader(http.StatusNoContent)
	default:
		f.t.Errorf("unexpected request %s", route)
		w.WriteHeader(http.StatusNotImplemented)
	}
}

// writeStatus writes the helper's "ready" record into the status file bound into the
// container.
func (f *fakeEngine) writeStatus() {
	for _, m := range f.created.HostConfig.Mounts {
		if m.Target == exchangeDir+"/status" {
			if err := os.WriteFile(m.Source, []byte{'R', 0}, 0o600); err != nil {
				f.t.Errorf("write the status file: %v", err)
			}
			return
		}
	}
	f.t.Errorf("no status file among the mounts")
}

func answer(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

func (f *fakeEngine) routes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// fakeRunner returns a Runner talking to f, with a helper that is never checked: the fake
// engine does not run it.
func fakeRunner(t *testing.T, f *fakeEngine, log *slog.Logger) (*Runner, string) {
	t.Helper()
	f.t, f.started, f.drained = t, make(chan struct{}), make(chan struct{})
	cli, err := engine.New(engine.Options{Host: enginetest.Serve(t, f), APIVersion: "1.41"})
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	r := newRunner(t, ws, Config{Engine: cli, User: "1000:1000", Log: log})
	r.helper = func() (string, error) { return "/usr/local/bin/awf", nil }
	return r, ws
}

func TestRunWithFakeEngine(t *testing.T) {
	f := &fakeEngine{exit: 3, frames: bytes.Join([][]byte{
		enginetest.Frame(enginetest.Stdout, "out "), enginetest.Frame(enginetest.Stderr, "err"), enginetest.Frame(enginetest.Stdout, "put"),
	}, nil)}
	r, ws := fakeRunner(t, f, nil)
	res, err := r.Run(t.Context(), ports.ProcessRequest{Script: "echo out put; echo err >&2; exit 3"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Stdout != "out put" || res.Stderr != "err" || res.ExitCode != 3 || res.Truncated {
		t.Errorf("Run = %+v, want stdout %q, stderr %q, exit 3", res, "out put", "err")
	}
	want := []string{"POST /containers/create", "POST /containers/c0ffee/attach", "POST /containers/c0ffee/start",
		"POST /containers/c0ffee/wait", "GET /containers/c0ffee/json", "DELETE /containers/c0ffee"}
	if diff := cmp.Diff(want, f.routes()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}

	c := f.created
	got := map[string]any{"image": c.Image, "entry": c.Entrypoint[:2], "cmd": c.Cmd, "user": c.User, "dir": c.WorkingDir,
		"labels": c.Labels, "network": c.HostConfig.NetworkMode, "caps": c.HostConfig.CapDrop, "init": *c.HostConfig.Init,
		"ro": c.HostConfig.ReadonlyRootfs, "log": c.HostConfig.LogConfig.Type, "pids": *c.HostConfig.PidsLimit,
		"security": c.HostConfig.SecurityOpt, "ipc": c.HostConfig.IpcMode}
	wantCreated := map[string]any{"image": "busybox-test", "entry": []string{"/.awf-exec/awf", "__awf-exec-files"}, "cmd": []string{},
		"user": "1000:1000", "dir": ws, "labels": map[string]string{LabelBackend: "container"}, "network": "none",
		"caps": []string{"ALL"}, "init": true, "ro": true, "log": "none", "pids": int64(DefaultPIDs),
		"security": []string{"no-new-privileges"}, "ipc": "private"}
	if diff := cmp.Diff(wantCreated, got); diff != "" {
		t.Errorf("created container (-want +got):\n%s", diff)
	}
	tmp := engine.Mount{Type: engine.MountTmpfs, Target: "/tmp", TmpfsOptions: &engine.TmpfsOptions{SizeBytes: DefaultTmpSize, Mode: 0o1777}}
	if !slices.ContainsFunc(c.HostConfig.Mounts, func(m engine.Mount) bool { return cmp.Equal(m, tmp) }) {
		t.Errorf("mounts %+v: no %+v", c.HostConfig.Mounts, tmp)
	}
}

func TestRunOutOfMemory(t *testing.T) {
	f := &fakeEngine{exit: 137, oom: true}
	r, _ := fakeRunner(t, f, nil)
	res, err := r.Run(t.Context(), ports.ProcessRequest{Script: "hog"})
	if err != nil || res.ExitCode != 137 || !strings.Contains(res.Stderr, "ran out of memory") {
		t.Errorf("Run = %+v, %v; want exit 137, a note on stderr, no error", res, err)
	}
}

func TestRunCreateFails(t *testing.T) {
	tests := []struct {
		name        string
		engine      *fakeEngine // nil: no engine at all
		kind        fault.Kind
		msg         string
		wantInspect bool
	}{
		{"image missing", &fakeEngine{createStatus: 404, createMessage: "No such image: busybox-test", imageStatus: 404},
			fault.Execution, `image "busybox-test" is not on the docker engine, and images are never pulled`, true},
		{"network missing", &fakeEngine{createStatus: 404, createMessage: "network awf-net not found"},
			fault.Execution, "network awf-net not found", true},
		{"engine error", &fakeEngine{createStatus: 500, createMessage: "mount denied"}, fault.System, "mount denied", false},
		{"no engine", nil, fault.System, "docker engine not reachable", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r *Runner
			if tc.engine != nil {
				r, _ = fakeRunner(t, tc.engine, nil)
			} else {
				cli, err := engine.New(engine.Options{Host: "unix://" + t.TempDir() + "/none.sock", APIVersion: "1.41"})
				if err != nil {
					t.Fatal(err)
				}
				r = newRunner(t, t.TempDir(), Config{Engine: cli})
				r.helper = func() (string, error) { return "/usr/local/bin/awf", nil }
			}
			_, err := r.Run(t.Context(), ports.ProcessRequest{Script: "true"})
			if err == nil || fault.KindOf(err) != tc.kind || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("Run = %v (%v), want a %v error containing %q", err, fault.KindOf(err), tc.kind, tc.msg)
			}
			if tc.engine == nil {
				return
			}
			want := []string{"POST /containers/create"}
			if tc.wantInspect {
				want = append(want, "GET /images/busybox-test/json")
			}
			if diff := cmp.Diff(want, tc.engine.routes()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKillIgnoresAStoppedContainer(t *testing.T) {
	for _, tc := range []struct {
		status int
		logged bool
	}{{http.StatusNoContent, false}, {http.StatusConflict, false}, {http.StatusInternalServerError, true}} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			var log bytes.Buffer
			r, _ := fakeRunner(t, &fakeEngine{killStatus: tc.status},
				slog.New(slog.NewTextHandler(io.MultiWriter(&log, t.Output()), &slog.HandlerOptions{Level: slog.LevelDebug})))
			r.kill(t.Context(), "c0ffee")
			if logged := strings.Contains(log.String(), "kill container"); logged != tc.logged {
				t.Errorf("kill answered %d: logged %v, want %v (log %q)", tc.status, logged, tc.logged, log.String())
			}
		})
	}
}
