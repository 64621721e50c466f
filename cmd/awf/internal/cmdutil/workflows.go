package cmdutil

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/infrastructure/manifest"
)

// WorkflowDirs are where `awf list` looks for workflows, and where `awf run NAME` finds the
// workflow a name stands for, relative to the working directory, for a project whose .awf is
// there; see SearchDirs.
var WorkflowDirs = []string{"workflows", filepath.Join(".awf", "workflows")}

// SearchDirs are the WorkflowDirs of a command: ./workflows and the workflows directory of the
// project's awf directory (config.FindProject), so that `awf list` in a subdirectory shows the
// project's .awf/workflows. The latter is as written relative to the working directory when
// the project is there, absolute otherwise.
func SearchDirs(f *Factory) []string {
	cfg, err := f.Config()
	cwd, werr := os.Getwd()
	if err != nil || werr != nil || cfg.Project.Dir == "" {
		return WorkflowDirs
	}
	return []string{WorkflowDirs[0], cfg.Project.Path(cwd, "workflows")}
}

// WorkflowFiles lists the YAML files of dir, sorted; a missing dir has none.
func WorkflowFiles(dir string) ([]string, error) {
	var files []string
	for _, pat := range []string{"*.yaml", "*.yml"} {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return nil, err
		}
		files = append(files, m...)
	}
	slices.Sort(files)
	return files, nil
}

// ResolveWorkflow turns what the user typed after `awf run` into a file: a path that exists
// is itself; a bare name (no directory, no .yaml) is the workflow `awf list` shows under that
// name, found by file name first (NAME.yaml in SearchDirs), then by the name: a workflow
// file declares. Anything else is returned as given, for the loader's own "no such file".
func ResolveWorkflow(f *Factory, arg string) string {
	if _, err := os.Stat(arg); err == nil || strings.ContainsRune(arg, filepath.Separator) ||
		filepath.Ext(arg) == ".yaml" || filepath.Ext(arg) == ".yml" {
		return arg
	}
	var all []string
	for _, dir := range SearchDirs(f) {
		files, err := WorkflowFiles(dir)
		if err != nil {
			continue
		}
		for _, file := range files {
			if strings.TrimSuffix(strings.TrimSuffix(filepath.Base(file), ".yaml"), ".yml") == arg {
				return file
			}
		}
		all = append(all, files...)
	}
	for _, file := range all {
		if wf, _ := f.Loader().Load(file); wf != nil && wf.Name == arg {
			return file
		}
	}
	return arg
}

// ProjectTools is the source of the project's tools: those under the project's awf directory
// (config.FindProject), so that a run in a subdirectory sees the tools of the project root;
// under workDir/.awf when the configuration names no project (factories built in tests).
func ProjectTools(f *Factory, workDir string) (manifest.Dir, error) {
	cfg, err := f.Config()
	if err != nil {
		return manifest.Dir{}, err
	}
	if cfg.Project.Dir == "" {
		return manifest.Project(workDir), nil
	}
	cwd, err := os.Getwd()
	if err != nil {
		return manifest.Dir{}, err
	}
	return manifest.Dir{Root: cfg.Project.Path(cwd), At: tool.LevelProject}, nil
}
