package cmdutil

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/internal/domain/fault"
)

// ExitError ends a command with an exact exit code: that of a program the command handed over
// to, which already printed its own messages.
type ExitError struct {
	Code    int
	Program string
}

func (e *ExitError) Error() string {
	return fmt.Sprintf("%s exited with status %d", e.Program, e.Code)
}

// FindProgram finds a companion program of awf (awf-temporal): beside the running executable
// first, so that an installed pair stays together, then on PATH.
func FindProgram(name string) (string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), name)
		if info, err := os.Stat(p); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fault.New(fault.Usage, "%s not found beside awf or on PATH: this command needs it; build it with `go build -o $(dirname $(command -v awf))/%s ./cmd/awf/%s` or `make build`", name, name, name)
}

// Handoff runs program (found by FindProgram) with args and awf's standard streams, as git
// runs git-foo for `git foo`: the Temporal engine lives in awf-temporal so that awf itself
// starts without the Temporal SDK's package initialisation. The program's exit code becomes
// awf's through an *ExitError; it printed its own messages.
func Handoff(ios *iostreams.IOStreams, program string, args []string) error {
	path, err := FindProgram(program)
	if err != nil {
		return err
	}
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = ios.In, ios.Out, ios.ErrOut
	err = cmd.Run()
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		return &ExitError{Code: ee.ExitCode(), Program: program}
	}
	if err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("run %s: %w", path, err))
	}
	return nil
}

// Engines of `awf run --engine`.
const (
	EngineLocal    = "local"
	EngineTemporal = "temporal"
)

// EngineName is the engine of a run: flag (--engine) when given, else the configured one
// (engine: in config, AWF_ENGINE), else local. An engine awf does not know is a usage error.
func EngineName(f *Factory, flag string) (string, error) {
	name := flag
	if name == "" {
		cfg, err := f.Config()
		if err != nil {
			return "", err
		}
		name = cfg.Engine
	}
	switch name {
	case "", EngineLocal:
		return EngineLocal, nil
	case EngineTemporal:
		return name, nil
	}
	return "", fault.New(fault.Usage, "engine %q: want local or temporal (--engine, engine: in config, AWF_ENGINE)", name)
}

// EngineProgram is the program that has engine: awf-temporal for temporal.
func EngineProgram(engine string) string { return "awf-" + engine }

// Server says where the temporal engine's server is: HOST:PORT, namespace and the task queue
// of awf's workflows. Empty fields come from the configuration (temporal:, AWF_TEMPORAL, ...).
type Server struct {
	HostPort, Namespace, TaskQueue string
}

// AddServerFlags adds --temporal, --namespace and --task-queue. Commands of plain awf that
// hand a temporal run over have them too, so that their command line parses before the
// handoff.
func AddServerFlags(cmd *cobra.Command, s *Server) {
	cmd.Flags().StringVar(&s.HostPort, "temporal", "", "temporal engine: server `HOST:PORT` (default temporal: in config, AWF_TEMPORAL, else localhost:7233)")
	cmd.Flags().StringVar(&s.Namespace, "namespace", "", "temporal engine: `NAMESPACE` (default temporal_namespace: in config, AWF_TEMPORAL_NAMESPACE, else default)")
	cmd.Flags().StringVar(&s.TaskQueue, "task-queue", "", "temporal engine: task `QUEUE` of awf's workflows (default temporal_task_queue: in config, AWF_TEMPORAL_TASK_QUEUE, else awf)")
}
