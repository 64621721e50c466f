package container

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/infrastructure/process"
)

// exchange holds the files of one run that the helper in the container reads (request,
// stdin) and writes (status), in a private host directory. Each file is bound into the
// container on its own, the status file alone writable.
type exchange struct {
	dir     string
	request string
	status  string
	stdin   string // "" when the script gets no input
	empty   string // an empty read-only file, bound over protected files
}

// stage writes the exchange files of s under base ("" means os.TempDir()).
func stage(base string, s *spec) (ex *exchange, err error) {
	dir, err := os.MkdirTemp(base, "awf-container-")
	if err != nil {
		return nil, fault.Wrap(fault.System, fmt.Errorf("container backend: exchange directory: %w", err))
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	ex = &exchange{dir: dir, request: filepath.Join(dir, "request"), status: filepath.Join(dir, "status")}
	if err := writeRequest(ex.request, s.wire); err != nil {
		return nil, err
	}
	ex.empty = filepath.Join(dir, "empty")
	if err := os.WriteFile(ex.empty, nil, 0o444); err != nil {
		return nil, fault.Wrap(fault.System, fmt.Errorf("container backend: empty file: %w", err))
	}
	if err := os.WriteFile(ex.status, nil, 0o600); err != nil {
		return nil, fault.Wrap(fault.System, fmt.Errorf("container backend: status file: %w", err))
	}
	if s.stdin != "" {
		ex.stdin = filepath.Join(dir, "stdin")
		if err := os.WriteFile(ex.stdin, []byte(s.stdin), 0o600); err != nil {
			return nil, fault.Wrap(fault.System, fmt.Errorf("container backend: stdin file: %w", err))
		}
	}
	return ex, nil
}

func writeRequest(path string, req *process.Request) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("container backend: request file: %w", err))
	}
	err = process.EncodeRequest(f, req) // buffered inside
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("container backend: write request: %w", err))
	}
	return nil
}
