package toolwire

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/tools/command"
	"github.com/awf-dev/awf/internal/infrastructure/tools/file"
	"github.com/awf-dev/awf/internal/infrastructure/tools/httptool"
	"github.com/awf-dev/awf/internal/infrastructure/tools/shell"
)

// FilePolicy is the file tools' policy from the workflow's sandbox paths (templates already
// resolved); nil lists keep the defaults (the working directory).
func FilePolicy(wf *workflow.Workflow, workDir string) file.Policy {
	p := file.Policy{WorkDir: workDir}
	if s := wf.Sandbox; s != nil {
		p.Read, p.Write, p.Protect = s.Paths.Read, s.Paths.Write, s.Paths.Protect
		if p.Read != nil && p.Write != nil {
			// Written paths can be read back.
			p.Read = append(slices.Clip(p.Read), p.Write...)
		}
	}
	return p
}

// WebPolicy is http_request's policy from the workflow's sandbox: its hosts, and its
// limits.timeout as the bound of a whole exchange (connection to last body byte).
func WebPolicy(wf *workflow.Workflow) httptool.Policy {
	if wf.Sandbox == nil {
		return httptool.Policy{}
	}
	return httptool.Policy{Hosts: wf.Sandbox.Hosts, Timeout: wf.Sandbox.Limits.Timeout}
}

// Restricted builds the tool of a `builtin: true` entry with restrictions: the built-in with
// its paths or hosts narrowed, or the shell under the workflow policy narrowed by all three
// (commands, paths, hosts), which every layer applies (command check, exec guard, Landlock,
// filtering proxy, container). Restrictions only narrow: a path glob whose tree is not
// inside what the workflow policy allows, or a host the policy does not allow, is an error.
// The shell restricted here is also what wrapped .tool files and manifest steps that call
// shell or run_command reach, since the workflow level resolves first.
func Restricted(files file.Policy, web httptool.Policy, exec command.Config) func(workflow.ToolSpec) (tool.Tool, error) {
	return func(spec workflow.ToolSpec) (tool.Tool, error) {
		r := spec.Restrictions
		if r == nil {
			return nil, nil
		}
		switch spec.Name {
		case shell.Name, shell.Alias:
			cfg := exec
			cfg.Restrictions = r
			return shell.NewNamed(spec.Name, cfg)
		case "read_file", "write_file", "list_dir", "glob", "grep":
			if r.Paths == nil {
				return nil, nil
			}
			return narrowFiles(spec, files, r.Paths)
		case "http_request":
			if r.Hosts == nil {
				return nil, nil
			}
			for _, h := range r.Hosts {
				if len(web.Hosts) > 0 && !slices.Contains(web.Hosts, h) && !slices.Contains(web.Hosts, "*") {
					return nil, restrictionError(spec, "host %q is not in sandbox.hosts %v", h, web.Hosts)
				}
			}
			p := web
			p.Hosts = r.Hosts
			return httptool.New(p)
		}
		return nil, restrictionError(spec, "awf has no built-in %q whose restrictions it could enforce", spec.Name)
	}
}

func narrowFiles(spec workflow.ToolSpec, base file.Policy, paths []string) (tool.Tool, error) {
	allowed := base.Read
	if spec.Name == "write_file" {
		allowed = base.Write
	}
	for _, g := range paths {
		if !within(base.WorkDir, g, allowed) {
			return nil, restrictionError(spec, "path %q reaches beyond what the sandbox policy allows (%v)", g, orWorkDir(allowed))
		}
	}
	p := base
	p.Read, p.Write = paths, paths
	tools, err := file.NewTools(p)
	if err != nil {
		return nil, err
	}
	for _, t := range tools {
		if t.Name() == spec.Name {
			return t, nil
		}
	}
	return nil, nil
}

// within reports whether every path glob may match lies inside one of the allowed globs: the
// glob's static prefix must be inside the static prefix of an allowed glob that covers its
// whole tree ("dir/**"), or inside the working directory when allowed is nil.
func within(workDir, glob string, allowed []string) bool {
	prefix := staticPrefix(workDir, glob)
	if allowed == nil {
		return inside(prefix, workDir)
	}
	for _, a := range allowed {
		tree, ok := strings.CutSuffix(a, "/**")
		if !ok || strings.ContainsAny(tree, "*?[{") {
			continue
		}
		if inside(prefix, absolute(workDir, tree)) {
			return true
		}
	}
	return false
}

// staticPrefix is the directory part of glob before its first metacharacter, made absolute.
func staticPrefix(workDir, glob string) string {
	if i := strings.IndexAny(glob, "*?[{"); i >= 0 {
		glob = glob[:i]
		if j := strings.LastIndex(glob, "/"); j >= 0 {
			glob = glob[:j]
		} else {
			glob = "."
		}
	}
	return absolute(workDir, glob)
}

func absolute(workDir, p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(workDir, p)
	}
	return filepath.Clean(p)
}

func inside(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func orWorkDir(globs []string) any {
	if globs == nil {
		return "the working directory"
	}
	return globs
}

func restrictionError(spec workflow.ToolSpec, format string, args ...any) error {
	return workflow.Problems{{Pos: spec.Pos, Field: "restrictions",
		Msg: fmt.Sprintf("tool %q: restrictions can only narrow the sandbox policy: ", spec.Name) + fmt.Sprintf(format, args...)}}
}
