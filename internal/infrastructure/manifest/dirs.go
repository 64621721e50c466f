package manifest

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/semver"
)

// MaxFileSize bounds a manifest or .tool file; tool definitions are small.
const MaxFileSize = 1 << 20

// File and directory names within a tool root.
const (
	ToolsDir       = "tools"         // <root>/tools/<name>/config.yaml
	WrappedToolDir = "wrapped-tools" // <root>/wrapped-tools/*.tool
	ConfigFile     = "config.yaml"
	ToolExt        = ".tool"
)

// Dir is the tools of one level under a root: manifests in <root>/tools/<name>/config.yaml
// and .tool files in <root>/wrapped-tools/. A root that does not exist holds no tools.
type Dir struct {
	Root string
	At   tool.Level
}

var _ ports.ToolSource = Dir{}

// Project is the project's tools: ./.awf under the given project directory.
func Project(projectDir string) Dir {
	return Dir{Root: filepath.Join(projectDir, ".awf"), At: tool.LevelProject}
}

// User is the user's tools: $XDG_CONFIG_HOME/awf, else ~/.config/awf. An empty Root (no
// XDG_CONFIG_HOME nor HOME) holds no tools.
func User(getenv func(string) string) Dir {
	return Dir{Root: userRoot(getenv), At: tool.LevelUser}
}

func userRoot(getenv func(string) string) string {
	if x := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "awf")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "awf")
	}
	return ""
}

// DefaultInstallDir is where installed tools live: $XDG_DATA_HOME/awf/tools, else
// ~/.local/share/awf/tools ("" when neither is set).
func DefaultInstallDir(getenv func(string) string) string {
	if x := getenv("XDG_DATA_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "awf", "tools")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "share", "awf", "tools")
	}
	return ""
}

// Level returns d.At.
func (d Dir) Level() tool.Level { return d.At }

// Load reads every manifest and .tool file under the root. Problems with single files are in
// the set; an error means a directory could not be read.
func (d Dir) Load() (tool.Set, error) {
	var set tool.Set
	if d.Root == "" {
		return set, nil
	}
	if err := d.manifests(&set); err != nil {
		return set, err
	}
	return set, d.toolFiles(&set)
}

// manifests reads <root>/tools/<name>/config.yaml; the directory names the tool.
func (d Dir) manifests(set *tool.Set) error {
	dir := filepath.Join(d.Root, ToolsDir)
	entries, err := readDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		path := filepath.Join(dir, e.Name(), ConfigFile)
		m, probs, err := LoadManifest(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a directory without a manifest: maybe resources of another tool
		}
		if err != nil {
			set.Problems = append(set.Problems, workflow.Problem{Pos: workflow.Pos{File: path}, Msg: err.Error()})
			continue
		}
		if m != nil && m.Name != e.Name() && m.Name != "" {
			probs = append(probs, workflow.Problem{Pos: m.Pos,
				Msg: fmt.Sprintf("name %q does not match its directory %q (tools/<name>/config.yaml)", m.Name, e.Name())})
		}
		add(set, m, probs)
	}
	return nil
}

// toolFiles reads <root>/wrapped-tools/*.tool in name order; of two files defining one name
// the first wins and the second is a warning (seed 004).
func (d Dir) toolFiles(set *tool.Set) error {
	dir := filepath.Join(d.Root, WrappedToolDir)
	entries, err := readDir(dir)
	if err != nil {
		return err
	}
	first := map[string]string{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ToolExt) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		data, err := readFile(path)
		if err != nil {
			set.Problems = append(set.Problems, workflow.Problem{Pos: workflow.Pos{File: path}, Msg: err.Error()})
			continue
		}
		tf, probs := ParseToolFile(path, data)
		set.Problems = append(set.Problems, probs...)
		name, pos := "", workflow.Pos{}
		switch {
		case tf.Alias != nil:
			name, pos = tf.Alias.Name, tf.Alias.Pos
		case tf.Wrapped != nil:
			name, pos = tf.Wrapped.Name, tf.Wrapped.Pos
		default:
			continue
		}
		if prev, dup := first[name]; dup {
			set.Problems = append(set.Problems, workflow.Problem{Pos: pos, Severity: workflow.SeverityWarning,
				Msg: fmt.Sprintf("tool %q is already defined by %s; this definition is ignored", name, prev)})
			continue
		}
		first[name] = path
		if tf.Alias != nil {
			set.Aliases = append(set.Aliases, *tf.Alias)
		} else {
			set.Wrapped = append(set.Wrapped, *tf.Wrapped)
		}
	}
	return nil
}

// Installed is the installed tools: <Dir>/<owner>/<name>/<version>/config.yaml, reached as
// owner/name[@constraint]. The install command writes this layout.
type Installed struct {
	Dir string
}

var _ ports.ToolSource = Installed{}

// Level is tool.LevelInstalled.
func (Installed) Level() tool.Level { return tool.LevelInstalled }

// Load reads every installed version. The path decides owner, name and version; a manifest
// that disagrees with its path is a problem.
func (s Installed) Load() (tool.Set, error) {
	var set tool.Set
	if s.Dir == "" {
		return set, nil
	}
	owners, err := readDir(s.Dir)
	if err != nil {
		return set, err
	}
	for _, o := range owners {
		if !o.IsDir() {
			continue
		}
		names, err := readDir(filepath.Join(s.Dir, o.Name()))
		if err != nil {
			return set, err
		}
		for _, n := range names {
			if n.IsDir() {
				if err := s.versions(&set, o.Name(), n.Name()); err != nil {
					return set, err
				}
			}
		}
	}
	return set, nil
}

func (s Installed) versions(set *tool.Set, owner, name string) error {
	dir := filepath.Join(s.Dir, owner, name)
	versions, err := readDir(dir)
	if err != nil {
		return err
	}
	for _, v := range versions {
		if !v.IsDir() {
			continue
		}
		path := filepath.Join(dir, v.Name(), ConfigFile)
		m, probs, err := LoadManifest(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			set.Problems = append(set.Problems, workflow.Problem{Pos: workflow.Pos{File: path}, Msg: err.Error()})
			continue
		}
		if m != nil {
			probs = append(probs, checkInstalled(m, owner, name, v.Name())...)
			m.Owner = owner
		}
		add(set, m, probs)
	}
	return nil
}

// checkInstalled compares an installed manifest with the path it was installed under.
func checkInstalled(m *tool.Manifest, owner, name, version string) workflow.Problems {
	var probs workflow.Problems
	if m.Name != name {
		probs = append(probs, workflow.Problem{Pos: m.Pos, Msg: fmt.Sprintf("name %q does not match the installed path %s/%s", m.Name, owner, name)})
	}
	dirV, err := semver.StrictNewVersion(version)
	switch {
	case err != nil:
		probs = append(probs, workflow.Problem{Pos: m.Pos, Msg: fmt.Sprintf("installed version directory %q is not a semantic version", version)})
	case m.Version == "":
		m.Version = version
	default:
		if v, err := semver.NewVersion(m.Version); err == nil && !v.Equal(dirV) {
			probs = append(probs, workflow.Problem{Pos: m.Pos,
				Msg: fmt.Sprintf("version %s does not match the installed path's version %s", m.Version, version)})
		}
		m.Version = version
	}
	return probs
}

// add puts a manifest in the set unless it has errors; its problems go in either way.
func add(set *tool.Set, m *tool.Manifest, probs workflow.Problems) {
	probs = dedupe(probs)
	set.Problems = append(set.Problems, probs...)
	if m != nil && len(probs.Errors()) == 0 {
		set.Manifests = append(set.Manifests, m)
	}
}

// LoadManifest reads and decodes one config.yaml. A file that cannot be read is an error
// (fs.ErrNotExist when it is missing); what is wrong inside it is in the problems.
func LoadManifest(path string) (*tool.Manifest, workflow.Problems, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, nil, err
	}
	m, probs := Decode(path, data)
	return m, probs, nil
}

// LoadToolFile reads and parses one .tool file.
func LoadToolFile(path string) (ToolFile, workflow.Problems, error) {
	data, err := readFile(path)
	if err != nil {
		return ToolFile{}, nil, err
	}
	tf, probs := ParseToolFile(path, data)
	return tf, probs, nil
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fault.New(fault.System, "read %s: %w", path, err)
	}
	if len(data) > MaxFileSize {
		return nil, fault.New(fault.Invalid, "%s is larger than %d bytes: not a tool definition", path, MaxFileSize)
	}
	return data, nil
}

// readDir lists a directory (os.ReadDir sorts by name); a missing one is empty.
func readDir(dir string) ([]os.DirEntry, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fault.New(fault.System, "read tool directory %s: %w", dir, err)
	}
	return entries, nil
}
