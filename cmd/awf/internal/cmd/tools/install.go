package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/infrastructure/manifest"
	"github.com/awf-dev/awf/internal/infrastructure/toolrepo"
)

// RegistryEnv names the environment variable holding the default registry, so that the
// install commands awf prints (`awf tools install --deps TOOL`) work as they are.
const RegistryEnv = "AWF_TOOLS_REGISTRY"

// InstallOptions are everything `awf tools install` needs.
type InstallOptions struct {
	IO       *iostreams.IOStreams
	Factory  *cmdutil.Factory
	Refs     []string
	Deps     bool
	Registry string
	Dir      string
	Output   cmdutil.Format
}

func newCmdInstall(f *cmdutil.Factory, runF RunFunc) *cobra.Command {
	opts := &InstallOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "install [--deps] OWNER/NAME[@CONSTRAINT]... --registry DIR|URL",
		Short: "Install tools from a registry",
		Long: `Install owner/name tools from a registry: a directory or an http(s):// URL holding an
index.json of versioned packages with the SHA-256 checksum of every file. Each tool gets the
highest version its constraint accepts (the highest release without one), into
<dir>/<owner>/<name>/<version>/; a version already installed is skipped. With --deps, what the
tools depend on is installed too, recursively, unless an installed version satisfies it.

A bare NAME with --deps installs the missing dependencies of that project or user tool.

Every file is checked against the index before anything is installed: a checksum or size that
does not match refuses the whole install (exit 5). Each package appears at once, complete.
awf run never installs anything itself.

The registry defaults to $` + RegistryEnv + `; the install directory to $XDG_DATA_HOME/awf/tools
(else ~/.local/share/awf/tools), which is where runs look for installed tools.`,
		Example: `  awf tools install --deps acme/summarize@^1.0.0 --registry https://tools.example.com/registry
  awf tools install acme/lint --registry ./registry --dir /tmp/tools
  awf tools install --deps my-meta-tool`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fault.New(fault.Usage, "need a tool: awf tools install [--deps] OWNER/NAME[@CONSTRAINT] --registry DIR|URL")
			}
			return nil
		},
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Refs = args
			if opts.Registry == "" {
				opts.Registry = f.Getenv(RegistryEnv)
			}
			if opts.Dir == "" {
				opts.Dir = manifest.DefaultInstallDir(f.Getenv)
			}
			return dispatch(cmd.Context(), runF, opts, runInstall)
		},
	}
	cmd.Flags().BoolVar(&opts.Deps, "deps", false, "also install what the tools depend on, recursively")
	cmd.Flags().StringVar(&opts.Registry, "registry", "", "the registry: a `DIR` or an http(s):// URL (default $"+RegistryEnv+")")
	cmd.Flags().StringVar(&opts.Dir, "dir", "", "install into `DIR` (default $XDG_DATA_HOME/awf/tools)")
	_ = cmd.RegisterFlagCompletionFunc("dir", cmdutil.CompleteDirs)
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

// InstallResult is the JSON object `awf tools install` prints.
type InstallResult struct {
	Registry string `json:"registry"`
	Dir      string `json:"dir"`
	toolrepo.Report
	// NotInstallable are dependencies of a local tool that no registry provides (bare names).
	NotInstallable []string `json:"not_installable,omitempty"`
}

func runInstall(ctx context.Context, opts *InstallOptions) error {
	res := InstallResult{Registry: opts.Registry, Dir: opts.Dir}
	reqs, err := requests(opts, &res)
	if err != nil {
		return err
	}
	if len(reqs) == 0 {
		// A local tool whose missing dependencies are all bare names: no registry can help.
		if len(res.NotInstallable) > 0 {
			return fault.New(fault.Invalid, "nothing to install: %s", strings.Join(res.NotInstallable, "; "))
		}
		return writeInstall(opts, res)
	}
	if opts.Registry == "" {
		return fault.New(fault.Usage, "no registry to install %s from: give --registry DIR|URL (a directory or an http(s):// URL with an index.json, see docs/tools.md#sharing-tools-registries) or set %s",
			requestList(reqs), RegistryEnv)
	}
	if opts.Dir == "" {
		return fault.New(fault.Usage, "no install directory: give --dir, or set XDG_DATA_HOME or HOME")
	}
	repo, err := toolrepo.Open(opts.Registry, toolrepo.Options{})
	if err != nil {
		return err
	}
	in := &toolrepo.Installer{Repo: repo, Dir: opts.Dir, Deps: opts.Deps}
	res.Report, err = in.Install(ctx, reqs...)
	if err != nil {
		return err
	}
	return writeInstall(opts, res)
}

// requests turns the arguments into registry requests: owner/name refs as they are, and for a
// bare name (with --deps) the missing owner/name dependencies of that local tool.
func requests(opts *InstallOptions, res *InstallResult) ([]toolrepo.Request, error) {
	var reqs []toolrepo.Request
	for _, ref := range opts.Refs {
		if strings.Contains(ref, "/") {
			q, err := toolrepo.ParseRequest(ref)
			if err != nil {
				return nil, err
			}
			reqs = append(reqs, q)
			continue
		}
		if !opts.Deps {
			return nil, fault.New(fault.Usage, "%q is not owner/name: registries hold owner/name tools (to install what the local tool %s needs, add --deps)", ref, ref)
		}
		local, err := localDeps(opts, ref, res)
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, local...)
	}
	return reqs, nil
}

// localDeps lists what a project or user tool needs and is missing.
func localDeps(opts *InstallOptions, name string, res *InstallResult) ([]toolrepo.Request, error) {
	set, _, err := toolSet(opts.Factory, opts.IO, "")
	if err != nil {
		return nil, err
	}
	missing, err := set.Registry.CheckDependencies(name)
	if err != nil {
		return nil, err
	}
	var reqs []toolrepo.Request
	for _, m := range missing {
		if !strings.Contains(m.Dependency, "/") {
			res.NotInstallable = append(res.NotInstallable, fmt.Sprintf("%s needs %s: %s; %s", m.Tool, m.Dependency, m.Reason, m.Fix()))
			continue
		}
		q, err := toolrepo.ParseRequest(m.Dependency)
		if err != nil {
			return nil, fmt.Errorf("tool %s: dependency %s: %w", m.Tool, m.Dependency, err)
		}
		reqs = append(reqs, q)
	}
	return reqs, nil
}

func writeInstall(opts *InstallOptions, res InstallResult) error {
	if opts.Output.JSON() {
		return cmdutil.WriteJSON(opts.IO.Out, res)
	}
	w := opts.IO.Out
	for _, p := range res.Installed {
		fmt.Fprintf(w, "installed %s@%s in %s\n", p.Ref, p.Version, p.Dir)
	}
	for _, p := range res.Skipped {
		fmt.Fprintf(w, "skipped %s@%s: %s\n", p.Ref, p.Version, p.Reason)
	}
	if len(res.Installed)+len(res.Skipped) == 0 {
		fmt.Fprintln(w, "nothing to install")
	}
	for _, u := range res.Unmet {
		fmt.Fprintf(opts.IO.ErrOut, "warning: %s needs %s, which is not installed; install it with: awf tools install --deps %s\n",
			u.Tool, u.Dependency, u.Tool)
	}
	for _, s := range res.NotInstallable {
		fmt.Fprintf(opts.IO.ErrOut, "warning: %s\n", s)
	}
	return nil
}

// requestList names the tools an install would fetch, for messages.
func requestList(reqs []toolrepo.Request) string {
	names := make([]string, len(reqs))
	for i, q := range reqs {
		names[i] = q.String()
	}
	return strings.Join(names, ", ")
}
