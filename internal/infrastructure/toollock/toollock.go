// Package toollock reads and writes lock files: the digests of every tool a workflow can use
// (tool.Pin), written by `awf tools lock` beside the workflow and checked by every run, so that
// a tool changed after review (a poisoned description, an MCP server's rug pull, an edited
// .tool file) is refused instead of given to a model.
package toollock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/awf-dev/awf/internal/bom"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/tool"
)

// Version is the format of the lock files this package writes and reads.
const Version = 1

// Ext is added to a workflow file's name to name its lock file: wf.yaml's is wf.yaml.lock, so
// that each workflow has its own and the pair sorts together.
const Ext = ".lock"

// File is a lock file.
type File struct {
	Version  int                 `json:"version"`
	Workflow string              `json:"workflow"` // the workflow's file name, for people
	Tools    map[string]tool.Pin `json:"tools"`    // by registered name
}

// Path returns the lock file of the workflow file wf.
func Path(wf string) string { return wf + Ext }

// Read reads the lock file at path; ok is false when there is none. A file that does not
// parse, or of another version, is a fault.Invalid error naming it.
func Read(path string) (f *File, ok bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fault.Wrap(fault.System, fmt.Errorf("read lock file: %w", err))
	}
	if data, err = bom.Strip(data); err != nil { // people edit lock files to review them
		return nil, false, fault.New(fault.Invalid, "%s: %w", path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	f = &File{}
	if err := dec.Decode(f); err != nil {
		return nil, false, fault.New(fault.Invalid, "%s: not a lock file: %v (write it again with awf tools lock)", path, err)
	}
	if f.Version != Version {
		return nil, false, fault.New(fault.Invalid, "%s: lock file version %d, this awf reads version %d (write it again with awf tools lock)", path, f.Version, Version)
	}
	if f.Tools == nil {
		f.Tools = map[string]tool.Pin{}
	}
	return f, true, nil
}

// Write writes f to path atomically (a temporary file renamed into place), indented with keys
// sorted, so that a change reads well in a diff.
func Write(path string, f *File) error {
	f.Version = Version
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("encode lock file: %w", err))
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("write lock file: %w", err))
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fault.Wrap(fault.System, fmt.Errorf("write lock file: %w", err))
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fault.Wrap(fault.System, fmt.Errorf("write lock file: %w", err))
	}
	if err := tmp.Close(); err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("write lock file: %w", err))
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("write lock file: %w", err))
	}
	return nil
}
