// Package container runs the scripts of shell steps, shell tools and custom command tools in a
// Docker container, for workflows whose sandbox says `backend: container`. The script is
// interpreted as in the process backend, by awf's own helper (a static awf bound read-only into
// the container, reading its request from a file: process.FileHelperMain), so the image needs
// only the programs the script calls. The workspace is bound at its host path, read-only except
// the policy's writable directories (whose protected names stay read-only); the root file
// system is read-only, /tmp a small tmpfs; there is no network unless the policy allows it; no
// capabilities, no_new_privs; memory, CPU, pids and file-size limits come from the policy. A
// command allowlist, which nothing in the container could enforce, is refused. The engine is
// reached through the Docker Engine API (package engine), never the docker CLI, and images are
// never pulled.
// It implements ports.ProcessRunner; Selector routes requests between it and another runner.
package container

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/container/engine"
	"github.com/awf-dev/awf/internal/infrastructure/process"
)

// Defaults of Config.
const (
	DefaultOutputLimit  = 64 << 20
	DefaultStderrLimit  = 1 << 20
	DefaultPIDs         = 512
	DefaultTmpSize      = 64 << 20
	DefaultNetwork      = "bridge"
	DefaultDrainTimeout = 5 * time.Second
)

// LabelBackend labels every container this backend creates (value "container"), so that
// containers left behind by a crashed awf can be found and removed:
//
//	docker rm -f $(docker ps -aq --filter label=dev.awf.backend=container)
const LabelBackend = "dev.awf.backend"

// exchangeDir is where the helper and its request, status and stdin files appear inside the
// container.
const exchangeDir = "/.awf-exec"

// apiTimeout bounds each call to the engine other than waiting for the script.
const apiTimeout = 30 * time.Second

// Config sets up a Runner. The zero value is usable: every field has a default.
type Config struct {
	// Engine talks to the Docker engine; nil means one configured from the environment
	// (engine.FromEnv: DOCKER_HOST, DOCKER_API_VERSION, DOCKER_CERT_PATH, DOCKER_TLS_VERIFY),
	// which the Runner then owns and Close closes. The engine must run on this machine: bind
	// mounts name host paths.
	Engine *engine.Client
	// HelperPath is the static awf executable bound into the container to interpret the
	// script; "" means os.Executable(). A dynamically linked one is refused by Run.
	HelperPath string
	// Image is used when the policy names none. The image is never pulled: it must already be
	// on the engine.
	Image string
	// WorkDir is the workspace bound into the container; "" means the request's Dir, then
	// awf's working directory.
	WorkDir string
	// Network is the Docker network a container joins when the policy allows network ("host",
	// or a host allowlist, which this backend does not filter); "" means DefaultNetwork.
	Network string
	// Limits are the defaults for the limits the policy leaves zero. PIDs defaults to
	// DefaultPIDs and Output to DefaultOutputLimit; the others to none.
	Limits workflow.Limits
	// StderrLimit caps the stderr kept per run (the head); 0 means DefaultStderrLimit.
	StderrLimit int64
	// BaseEnv is the environment of requests whose BaseEnv is nil; nil means MinimalEnv().
	// Either is filtered by the policy's env rules, as the process backend filters it.
	BaseEnv []string
	// TmpSize is the size of the tmpfs at /tmp; 0 means DefaultTmpSize.
	TmpSize int64
	// ExchangeDir is the host directory where each run's request, status and stdin files are
	// written (in a private subdirectory, removed after the run); "" means os.TempDir().
	ExchangeDir string
	// Labels are added to every container, next to LabelBackend.
	Labels map[string]string
	// User runs the script, "uid:gid"; "" means the uid and gid awf runs as.
	User string
	// DrainTimeout bounds how long Run keeps reading output after the container has
	// stopped; 0 means DefaultDrainTimeout.
	DrainTimeout time.Duration
	// Log receives diagnostics (a container that could not be removed); nil discards them.
	Log *slog.Logger
}

// MinimalEnv returns the environment a script starts from when neither the request nor the
// Config gives one: PATH, HOME and TMPDIR (/tmp, the container's tmpfs) and LANG=C.UTF-8.
// Nothing of awf's own environment enters the container.
func MinimalEnv() []string {
	return []string{"PATH=" + process.DefaultPath, "HOME=/tmp", "LANG=C.UTF-8", "TMPDIR=/tmp"}
}

// Runner runs scripts in containers, one container per Run, removed when Run returns. It is
// safe for concurrent use.
type Runner struct {
	cfg        Config
	cli        *engine.Client
	ownsClient bool
	cwd        string
	user       string
	helper     func() (string, error) // the helper's real path, once checked to be static
	log        *slog.Logger
}

var _ ports.ProcessRunner = (*Runner)(nil)

// New returns a Runner with cfg's defaults filled in. It fails (fault.System) only when no
// client can be configured from the environment; an engine that does not answer shows at Run.
func New(cfg Config) (*Runner, error) {
	r := &Runner{cfg: cfg, cli: cfg.Engine, log: cfg.Log, user: cfg.User}
	if r.cli == nil {
		cli, err := engine.FromEnv(os.Getenv)
		if err != nil {
			return nil, fault.Wrap(fault.System, fmt.Errorf("docker client: %w", err))
		}
		r.cli, r.ownsClient = cli, true
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if r.user == "" {
		r.user = userOf()
	}
	r.cfg.Network = cmp.Or(r.cfg.Network, DefaultNetwork)
	r.cfg.Limits.Output = cmp.Or(r.cfg.Limits.Output, DefaultOutputLimit)
	r.cfg.StderrLimit = cmp.Or(r.cfg.StderrLimit, DefaultStderrLimit)
	r.cfg.TmpSize = cmp.Or(r.cfg.TmpSize, DefaultTmpSize)
	r.cfg.DrainTimeout = cmp.Or(r.cfg.DrainTimeout, DefaultDrainTimeout)
	if r.cfg.BaseEnv == nil {
		r.cfg.BaseEnv = MinimalEnv()
	}
	r.cwd, _ = os.Getwd() // only a fallback for the workspace; planLayout reports a bad one
	r.helper = sync.OnceValues(func() (string, error) { return resolveHelper(cfg.HelperPath) })
	return r, nil
}

// resolveHelper finds the helper executable and checks that it is static.
func resolveHelper(path string) (string, error) {
	if path == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", fault.Wrap(fault.System, fmt.Errorf("container backend: find the awf executable: %w", err))
		}
		path = exe
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fault.Wrap(fault.System, fmt.Errorf("container backend: helper: %w", err))
	}
	return real, checkStatic(real)
}

// Close closes the client the Runner created; a client given in Config is the caller's.
func (r *Runner) Close() error {
	if r.ownsClient {
		return r.cli.Close()
	}
	return nil
}

// Describe returns what a container run under policy p enforces (image, network, user,
// capabilities, mounts, limits, and notes on what the policy asks that this backend leaves to
// other layers), for the sandbox.applied field of audit records. It touches nothing: a
// writable directory that Run would create is listed but not made.
func (r *Runner) Describe(p *workflow.Policy) (map[string]string, error) {
	s, err := r.plan(ports.ProcessRequest{Policy: p}, false)
	if err != nil {
		return nil, err
	}
	return s.applied, nil
}

// Run runs req.Script in a new container and removes the container before it returns.
//
// As in the process backend, a non-zero exit is a result, not an error, and stdout beyond the
// output limit stops the script: the result then has Truncated set, the kept head of stdout,
// ExitCode 137 and no error. A container killed for running out of memory is a result too:
// ExitCode 137 and a line on Stderr saying so. A timeout or a cancelled ctx kills the container
// and returns the partial result with an error of kind fault.Execution that wraps the context's
// error. Bad Vars or Env names are fault.Invalid, as are a missing image name and a policy this
// backend cannot express; an image missing from the engine is fault.Execution (it is never
// pulled); an engine that does not answer, or a helper that is not static, fault.System; a
// host allowlist under enforce: strict, fault.Denied.
func (r *Runner) Run(ctx context.Context, req ports.ProcessRequest) (ports.ProcessResult, error) {
	start := time.Now()
	helper, err := r.helper()
	if err != nil {
		return ports.ProcessResult{}, err
	}
	s, err := r.plan(req, true)
	if err != nil {
		return ports.ProcessResult{}, err
	}
	if ctx.Err() != nil {
		return ports.ProcessResult{ExitCode: -1}, process.StopError(ctx, 0)
	}
	ex, err := stage(r.cfg.ExchangeDir, s)
	if err != nil {
		return ports.ProcessResult{}, err
	}
	defer os.RemoveAll(ex.dir)
	id, err := r.create(ctx, s, ex, helper)
	if err != nil {
		return ports.ProcessResult{}, err
	}
	defer r.remove(context.WithoutCancel(ctx), id)
	if ctx.Err() != nil {
		return ports.ProcessResult{ExitCode: -1, Duration: time.Since(start)}, process.StopError(ctx, 0)
	}
	res, err := r.execute(ctx, id, s, ex)
	res.Duration = time.Since(start)
	return res, err
}

// create creates the container; it does not start it.
func (r *Runner) create(ctx context.Context, s *spec, ex *exchange, helper string) (string, error) {
	entry := []string{exchangeDir + "/awf", process.FileHelperArg, exchangeDir + "/request", exchangeDir + "/status"}
	mounts := append(s.layout.mounts(ex.empty),
		bind(helper, exchangeDir+"/awf", true),
		bind(ex.request, exchangeDir+"/request", true),
		bind(ex.status, exchangeDir+"/status", false),
		engine.Mount{Type: engine.MountTmpfs, Target: "/tmp", TmpfsOptions: &engine.TmpfsOptions{SizeBytes: r.cfg.TmpSize, Mode: 0o1777}},
	)
	if ex.stdin != "" {
		entry = append(entry, exchangeDir+"/stdin")
		mounts = append(mounts, bind(ex.stdin, exchangeDir+"/stdin", true))
	}
	labels := map[string]string{LabelBackend: "container"}
	maps.Copy(labels, r.cfg.Labels)
	withInit := true
	req := engine.CreateRequest{
		Image:      s.image,
		Entrypoint: entry,
		Cmd:        []string{},
		Env:        []string{process.FileHelperEnv},
		WorkingDir: s.dir,
		User:       r.user,
		Hostname:   "awf-sandbox",
		Labels:     labels,
		HostConfig: engine.HostConfig{
			NetworkMode:    s.network,
			Mounts:         mounts,
			Resources:      s.resources,
			CapDrop:        []string{"ALL"},
			SecurityOpt:    []string{"no-new-privileges"},
			ReadonlyRootfs: true,
			Init:           &withInit, // reaps what the script leaves behind; kills it all when the helper exits
			IpcMode:        "private",
			LogConfig:      &engine.LogConfig{Type: "none"}, // output is streamed, never stored
		},
	}
	apiCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), apiTimeout)
	defer cancel()
	id, err := r.cli.CreateContainer(apiCtx, req)
	if err != nil {
		return "", r.createError(apiCtx, s, err)
	}
	return id, nil
}

func bind(source, target string, ro bool) engine.Mount {
	return engine.Mount{Type: engine.MountBind, Source: source, Target: target, ReadOnly: ro}
}

// createError classifies a failed create: the engine unreachable (System), the image or the
// network missing (Execution, with what to do), anything else (System).
func (r *Runner) createError(ctx context.Context, s *spec, err error) error {
	switch {
	case errors.Is(err, engine.ErrConnectionFailed):
		return fault.Wrap(fault.System, fmt.Errorf("container backend: %w", err))
	case errors.Is(err, engine.ErrNotFound):
		if _, ierr := r.cli.InspectImage(ctx, s.image); errors.Is(ierr, engine.ErrNotFound) {
			return fault.New(fault.Execution, "container backend: image %q is not on the docker engine, and images are never pulled: "+
				"build or load it first (docker build -t %s ...)", s.image, s.image)
		}
		return fault.New(fault.Execution, "container backend: %w", err)
	}
	return fault.Wrap(fault.System, fmt.Errorf("container backend: %w", err))
}

// execute attaches to the container, starts it, waits for it and collects the result. The
// request's timeout runs from the start, so that it measures the script, not the engine's
// work to create the container.
func (r *Runner) execute(ctx context.Context, id string, s *spec, ex *exchange) (ports.ProcessResult, error) {
	bg := context.WithoutCancel(ctx)
	var overflowed atomic.Bool
	out := &capped{limit: s.output, onOverflow: func() {
		overflowed.Store(true)
		go r.kill(bg, id)
	}}
	errOut := &capped{limit: r.cfg.StderrLimit}

	apiCtx, cancel := context.WithTimeout(bg, apiTimeout) // bounds the handshake, not the stream
	att, err := r.cli.AttachContainer(apiCtx, id)
	cancel()
	if err != nil {
		return ports.ProcessResult{ExitCode: -1}, fault.Wrap(fault.System, fmt.Errorf("container backend: %w", err))
	}
	defer att.Close()
	demuxed := make(chan struct{})
	go func() {
		defer close(demuxed)
		// Ends at EOF, when the container stops, or when the drain below gives up and
		// closes the stream: an error then says only that.
		if err := engine.Demux(out, errOut, att); err != nil {
			r.log.Debug("container output", "container", id, "error", err)
		}
	}()

	runCtx, cancelRun := process.WithTimeout(ctx, s.timeout)
	defer cancelRun()
	apiCtx, cancel = context.WithTimeout(bg, apiTimeout)
	err = r.cli.StartContainer(apiCtx, id)
	cancel()
	if err != nil {
		return ports.ProcessResult{ExitCode: -1}, fault.Wrap(fault.System, fmt.Errorf("container backend: %w", err))
	}
	stop := context.AfterFunc(runCtx, func() { r.kill(bg, id) })
	defer stop()

	code, waitErr := r.wait(bg, id)
	stopped := runCtx.Err() != nil
	select {
	case <-demuxed:
	case <-time.After(r.cfg.DrainTimeout):
		att.Close()
		<-demuxed
	}
	oom := r.oomKilled(bg, id)

	res := ports.ProcessResult{
		Stdout:    out.String(),
		Stderr:    errOut.String() + errOut.Dropped("stderr"),
		ExitCode:  code,
		Truncated: out.Truncated(),
	}
	if oom {
		res.Stderr += fmt.Sprintf("\n[awf: the container ran out of memory (limit %d bytes) and was killed]\n", s.resources.Memory)
	}
	switch {
	case stopped:
		return res, process.StopError(runCtx, s.timeout)
	case waitErr != nil:
		return res, fault.Wrap(fault.System, fmt.Errorf("container backend: %w", waitErr))
	case oom || overflowed.Load():
		return res, nil // killed on purpose: the helper could not report
	}
	return res, helperError(ex, res)
}

// wait waits until the container stops and returns its exit status.
func (r *Runner) wait(ctx context.Context, id string) (int, error) {
	res, err := r.cli.WaitContainer(ctx, id, engine.WaitNotRunning)
	switch {
	case err != nil:
		return -1, err
	case res.Error != nil && res.Error.Message != "":
		return res.StatusCode, fmt.Errorf("wait for container %s: %s", id, res.Error.Message)
	}
	return res.StatusCode, nil
}

// kill sends SIGKILL to the container: everything in it dies, as its processes share a PID
// namespace. Killing a container that has already stopped is not an error worth reporting.
func (r *Runner) kill(ctx context.Context, id string) {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	if err := r.cli.KillContainer(ctx, id, "KILL"); err != nil && !errors.Is(err, engine.ErrConflict) {
		r.log.Debug("kill container", "container", id, "error", err)
	}
}

// oomKilled reports whether the kernel killed a process of the container for memory.
func (r *Runner) oomKilled(ctx context.Context, id string) bool {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	info, err := r.cli.InspectContainer(ctx, id)
	return err == nil && info.State != nil && info.State.OOMKilled
}

// remove removes the container, killing it if it still runs.
func (r *Runner) remove(ctx context.Context, id string) {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	if err := r.cli.RemoveContainer(ctx, id); err != nil {
		r.log.Warn("container backend: remove container", "container", id, "error", err)
	}
}

// helperError turns the status file into Run's error: a failure the helper reported, or none
// at all, which means the helper never ran the script.
func helperError(ex *exchange, res ports.ProcessResult) error {
	data, err := os.ReadFile(ex.status)
	if err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("container backend: read helper status: %w", err))
	}
	st, err := process.DecodeStatus(data)
	if err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("container backend: helper status: %w", err))
	}
	if st.Err != nil {
		return st.Err
	}
	if !st.Ready {
		msg := fmt.Sprintf("container backend: the helper did not run the script (does awf's main call process.FileHelperMain?): exit status %d", res.ExitCode)
		if first, _, _ := strings.Cut(strings.TrimSpace(res.Stderr), "\n"); first != "" {
			msg += ": " + first
		}
		return fault.New(fault.System, "%s", msg)
	}
	return nil
}
