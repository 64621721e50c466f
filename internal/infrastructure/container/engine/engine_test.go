package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/infrastructure/container/engine"
	"github.com/awf-dev/awf/internal/infrastructure/container/engine/enginetest"
)

// seen is a request as the fake engine received it.
type seen struct {
	Method, Path, Query, ContentType string
	Body                             any // the JSON body decoded, nil without one
}

// recorder is a fake engine that records each request and answers all with one status and
// body.
type recorder struct {
	t      *testing.T
	status int
	answer string
	header map[string]string

	mu   sync.Mutex
	reqs []seen
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		rec.t.Errorf("read request body: %v", err)
	}
	s := seen{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, ContentType: r.Header.Get("Content-Type")}
	if len(data) > 0 {
		if err := json.Unmarshal(data, &s.Body); err != nil {
			rec.t.Errorf("request body %q is not JSON: %v", data, err)
		}
	}
	rec.mu.Lock()
	rec.reqs = append(rec.reqs, s)
	rec.mu.Unlock()
	for k, v := range rec.header {
		w.Header().Set(k, v)
	}
	if rec.answer != "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(rec.status)
	io.WriteString(w, rec.answer)
}

func (rec *recorder) requests() []seen {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.reqs
}

// client returns a client of a fake engine running h, at API version 1.41 (no negotiation).
func client(t *testing.T, h http.Handler) *engine.Client {
	t.Helper()
	c, err := engine.New(engine.Options{Host: enginetest.Serve(t, h), APIVersion: "1.41"})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad JSON in the test: %v", err)
	}
	return v
}

func TestEndpoints(t *testing.T) {
	pids := int64(64)
	withInit := true
	create := engine.CreateRequest{
		Image: "awf-tools:local", Entrypoint: []string{"/x/awf", "run"}, Cmd: []string{}, Env: []string{"A=1"},
		WorkingDir: "/ws", User: "1000:1000", Hostname: "awf-sandbox", Labels: map[string]string{"dev.awf.backend": "container"},
		HostConfig: engine.HostConfig{
			NetworkMode: "none",
			Mounts: []engine.Mount{
				{Type: engine.MountBind, Source: "/ws", Target: "/ws", ReadOnly: true, BindOptions: &engine.BindOptions{Propagation: engine.PropagationRPrivate}},
				{Type: engine.MountTmpfs, Target: "/tmp", TmpfsOptions: &engine.TmpfsOptions{SizeBytes: 1 << 20, Mode: 0o1777}},
			},
			Resources: engine.Resources{Memory: 1 << 30, MemorySwap: 1 << 30, NanoCPUs: 1_500_000_000, PidsLimit: &pids,
				Ulimits: []engine.Ulimit{{Name: "fsize", Soft: 100, Hard: 100}}},
			CapDrop: []string{"ALL"}, SecurityOpt: []string{"no-new-privileges"}, ReadonlyRootfs: true,
			Init: &withInit, IpcMode: "private", LogConfig: &engine.LogConfig{Type: "none"},
		},
	}
	createBody := `{"Image": "awf-tools:local", "Entrypoint": ["/x/awf", "run"], "Cmd": [], "Env": ["A=1"],
		"WorkingDir": "/ws", "User": "1000:1000", "Hostname": "awf-sandbox", "Labels": {"dev.awf.backend": "container"},
		"HostConfig": {"NetworkMode": "none",
			"Mounts": [
				{"Type": "bind", "Source": "/ws", "Target": "/ws", "ReadOnly": true, "BindOptions": {"Propagation": "rprivate"}},
				{"Type": "tmpfs", "Target": "/tmp", "TmpfsOptions": {"SizeBytes": 1048576, "Mode": 1023}}],
			"Memory": 1073741824, "MemorySwap": 1073741824, "NanoCpus": 1500000000, "PidsLimit": 64,
			"Ulimits": [{"Name": "fsize", "Soft": 100, "Hard": 100}],
			"CapDrop": ["ALL"], "SecurityOpt": ["no-new-privileges"], "ReadonlyRootfs": true,
			"Init": true, "IpcMode": "private", "LogConfig": {"Type": "none"}}}`

	tests := []struct {
		name   string
		status int
		answer string
		call   func(context.Context, *engine.Client) (any, error)
		want   seen
		result any
	}{
		{"inspect image", 200, `{"Id": "sha256:abc", "RepoTags": ["awf-tools:local"]}`,
			func(ctx context.Context, c *engine.Client) (any, error) {
				return c.InspectImage(ctx, "awf-tools:local")
			},
			seen{Method: "GET", Path: "/v1.41/images/awf-tools:local/json"}, engine.ImageInfo{ID: "sha256:abc"}},
		{"inspect an image of a registry path", 200, `{"Id": "sha256:def"}`,
			func(ctx context.Context, c *engine.Client) (any, error) {
				return c.InspectImage(ctx, "localhost:5000/team/tools:1.0")
			},
			seen{Method: "GET", Path: "/v1.41/images/localhost:5000/team/tools:1.0/json"}, engine.ImageInfo{ID: "sha256:def"}},
		{"create container", 201, `{"Id": "c0ffee", "Warnings": []}`,
			func(ctx context.Context, c *engine.Client) (any, error) { return c.CreateContainer(ctx, create) },
			seen{Method: "POST", Path: "/v1.41/containers/create", ContentType: "application/json", Body: decodeJSON(t, createBody)}, "c0ffee"},
		{"start container", 204, "",
			func(ctx context.Context, c *engine.Client) (any, error) { return nil, c.StartContainer(ctx, "c0ffee") },
			seen{Method: "POST", Path: "/v1.41/containers/c0ffee/start"}, nil},
		{"start a started container", 304, "",
			func(ctx context.Context, c *engine.Client) (any, error) { return nil, c.StartContainer(ctx, "c0ffee") },
			seen{Method: "POST", Path: "/v1.41/containers/c0ffee/start"}, nil},
		{"wait for container", 200, `{"StatusCode": 3, "Error": null}`,
			func(ctx context.Context, c *engine.Client) (any, error) {
				return c.WaitContainer(ctx, "c0ffee", engine.WaitNotRunning)
			},
			seen{Method: "POST", Path: "/v1.41/containers/c0ffee/wait", Query: "condition=not-running"}, engine.WaitResult{StatusCode: 3}},
		{"wait reports the engine's error", 200, `{"StatusCode": -1, "Error": {"Message": "lost the container"}}`,
			func(ctx context.Context, c *engine.Client) (any, error) {
				res, err := c.WaitContainer(ctx, "c0ffee", engine.WaitNotRunning)
				if res.Error == nil {
					return nil, errors.New("no Error in the result")
				}
				return []any{res.StatusCode, res.Error.Message}, err
			},
			seen{Method: "POST", Path: "/v1.41/containers/c0ffee/wait", Query: "condition=not-running"}, []any{-1, "lost the container"}},
		{"kill container", 204, "",
			func(ctx context.Context, c *engine.Client) (any, error) {
				return nil, c.KillContainer(ctx, "c0ffee", "KILL")
			},
			seen{Method: "POST", Path: "/v1.41/containers/c0ffee/kill", Query: "signal=KILL"}, nil},
		{"inspect container", 200, `{"Id": "c0ffee", "Name": "/x", "State": {"Status": "exited", "Running": false, "OOMKilled": true, "ExitCode": 137}}`,
			func(ctx context.Context, c *engine.Client) (any, error) { return c.InspectContainer(ctx, "c0ffee") },
			seen{Method: "GET", Path: "/v1.41/containers/c0ffee/json"},
			engine.ContainerInfo{ID: "c0ffee", State: &engine.ContainerState{Status: "exited", OOMKilled: true, ExitCode: 137}}},
		{"remove container", 204, "",
			func(ctx context.Context, c *engine.Client) (any, error) { return nil, c.RemoveContainer(ctx, "c0ffee") },
			seen{Method: "DELETE", Path: "/v1.41/containers/c0ffee", Query: "force=1&v=1"}, nil},
		{"ping", 200, "",
			func(ctx context.Context, c *engine.Client) (any, error) { return c.Ping(ctx) },
			seen{Method: "GET", Path: "/_ping"}, "1.41"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{t: t, status: tc.status, answer: tc.answer, header: map[string]string{"API-Version": "1.41"}}
			got, err := tc.call(t.Context(), client(t, rec))
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if diff := cmp.Diff([]seen{tc.want}, rec.requests()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.result, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNoID(t *testing.T) {
	rec := &recorder{t: t, status: 204}
	c := client(t, rec)
	calls := map[string]func() error{
		"start":   func() error { return c.StartContainer(t.Context(), "") },
		"wait":    func() error { _, err := c.WaitContainer(t.Context(), "", engine.WaitNotRunning); return err },
		"kill":    func() error { return c.KillContainer(t.Context(), "", "KILL") },
		"inspect": func() error { _, err := c.InspectContainer(t.Context(), ""); return err },
		"remove":  func() error { return c.RemoveContainer(t.Context(), "") },
		"image":   func() error { _, err := c.InspectImage(t.Context(), ""); return err },
		"attach":  func() error { _, err := c.AttachContainer(t.Context(), ""); return err },
	}
	for name, call := range calls {
		if err := call(); err == nil {
			t.Errorf("%s with no id: no error", name)
		}
	}
	if n := len(rec.requests()); n != 0 {
		t.Errorf("%d requests reached the engine, want none", n)
	}
}

func TestErrorAnswers(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	tests := []struct {
		name     string
		status   int
		body     string
		notFound bool
		conflict bool
		msg      string // what Error() must contain
	}{
		{"not found", 404, `{"message": "No such image: awf-tools:local"}`, true, false,
			"create container: No such image: awf-tools:local (HTTP 404)"},
		{"conflict", 409, `{"message": "container c0ffee is not running"}`, false, true, "is not running (HTTP 409)"},
		{"server error", 500, `{"message": "driver failed"}`, false, false, "create container: driver failed (HTTP 500)"},
		{"text body", 400, "bad parameter\n", false, false, "create container: bad parameter (HTTP 400)"},
		{"empty body", 503, "", false, false, "Service Unavailable (HTTP 503)"},
		{"huge body", 500, long, false, false, "xxxx"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			_, err := c.CreateContainer(t.Context(), engine.CreateRequest{Image: "awf-tools:local"})
			var apiErr *engine.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != tc.status {
				t.Fatalf("CreateContainer = %v, want an *engine.Error with status %d", err, tc.status)
			}
			if errors.Is(err, engine.ErrNotFound) != tc.notFound || errors.Is(err, engine.ErrConflict) != tc.conflict ||
				errors.Is(err, engine.ErrConnectionFailed) {
				t.Errorf("CreateContainer = %v: not found %v, conflict %v; want %v, %v, and no connection failure",
					err, errors.Is(err, engine.ErrNotFound), errors.Is(err, engine.ErrConflict), tc.notFound, tc.conflict)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("CreateContainer = %q, want it to contain %q", err, tc.msg)
			}
			if len(apiErr.Message) > 64<<10 {
				t.Errorf("error message of %d bytes: the body was read without a bound", len(apiErr.Message))
			}
		})
	}
}

func TestConnectionFailed(t *testing.T) {
	hangUp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		conn.Close() // before any answer
	})
	tests := []struct {
		name string
		host string
	}{
		{"no engine at the socket", "unix://" + t.TempDir() + "/docker.sock"},
		{"an engine that hangs up", enginetest.Serve(t, hangUp)},
		{"nothing listening on the port", "tcp://127.0.0.1:1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, version := range []string{"1.41", ""} { // a request, then the ping of a negotiation
				c, err := engine.New(engine.Options{Host: tc.host, APIVersion: version})
				if err != nil {
					t.Fatal(err)
				}
				_, err = c.CreateContainer(t.Context(), engine.CreateRequest{Image: "x"})
				if !errors.Is(err, engine.ErrConnectionFailed) || !strings.Contains(err.Error(), tc.host) {
					t.Errorf("version %q: CreateContainer = %v, want a connection failure naming %s", version, err, tc.host)
				}
			}
		})
	}
}

func TestContextEnds(t *testing.T) {
	c := client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // a wait for a container that never stops
	}))
	ctx, cancel := context.WithCancel(t.Context())
	go cancel()
	_, err := c.WaitContainer(ctx, "c0ffee", engine.WaitNotRunning)
	if !errors.Is(err, context.Canceled) || errors.Is(err, engine.ErrConnectionFailed) {
		t.Errorf("WaitContainer with a cancelled context = %v, want context.Canceled and no connection failure", err)
	}
}
