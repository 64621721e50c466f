package cmdcheck

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

var gitGlobal = optSpec{
	flag: []string{"-p", "--paginate", "-P", "--no-pager", "--bare", "--no-replace-objects",
		"--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs",
		"--no-optional-locks", "--no-advice", "--html-path", "--man-path", "--info-path", "--version",
		"--help", "-v", "-h"},
	arg: []string{"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix",
		"--config-env", "--list-cmds", "--attr-source"},
	optional: []string{"--exec-path"},
}

// gitCommandKeys are configuration keys (lower case; * is one dotted component) whose value
// git runs as a command line. gitRefusedKeys load or enable code that cannot be checked.
var (
	gitCommandKeys = []string{
		"core.pager", "core.editor", "core.sshcommand", "core.askpass", "core.gitproxy",
		"core.fsmonitor", "sequence.editor", "diff.external", "diff.*.command", "diff.*.textconv",
		"merge.*.driver", "filter.*.clean", "filter.*.smudge", "filter.*.process", "gpg.program",
		"gpg.*.program", "pager.*", "alias.*", "uploadpack.packobjectshook", "remote.*.uploadpack",
		"remote.*.receivepack", "man.*.cmd", "web.browser", "browser.*.cmd", "interactive.difffilter",
		"sendemail.sendmailcmd", "credential.helper", "credential.*.helper", "mergetool.*.cmd",
		"difftool.*.cmd",
	}
	gitRefusedKeys = []string{
		"core.hookspath", "init.templatedir", "include.path", "includeif.*.path",
		"protocol.ext.allow", "protocol.allow", "core.worktree", "safe.directory",
	}
)

func gitKeyMatches(patterns []string, key string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return gitKeyMatch(p, key) })
}

// gitKeyMatch matches a key against a pattern component by component, case-insensitively: *
// is one component, and a two-component pattern "x.*" also takes any deeper key under x
// (alias.*, pager.*). It allocates nothing: it runs for every -c of every git command.
func gitKeyMatch(pattern, key string) bool {
	deep := strings.Count(pattern, ".") == 1 && strings.HasSuffix(pattern, ".*")
	for {
		p, prest, pmore := strings.Cut(pattern, ".")
		k, krest, kmore := strings.Cut(key, ".")
		if p != "*" && !strings.EqualFold(p, k) {
			return false
		}
		switch {
		case !pmore && !kmore:
			return true
		case !pmore:
			return deep && p == "*"
		case !kmore:
			return false
		}
		pattern, key = prest, krest
	}
}

// gitConfig checks one key=value git would use.
func (z *analyzer) gitConfig(key string, value arg, c callCtx) error {
	lower := strings.ToLower(key)
	switch {
	case gitKeyMatches(gitRefusedKeys, lower):
		return z.strict(refuse("git", RuleGitConfig, "%s makes git load or run code that cannot be checked", key))
	case !gitKeyMatches(gitCommandKeys, lower):
		return nil
	case !value.ok:
		return z.strict(refuse("git", RuleGitConfig, "%s with a value only known at run time", key))
	}
	v := strings.TrimSpace(value.s)
	switch {
	case v == "":
		return nil
	case strings.HasPrefix(lower, "alias."):
		cmd, shell := strings.CutPrefix(v, "!")
		if !shell {
			// Another git command with arguments, which may carry -c settings of their own.
			words, simple := splitSimple(v)
			if !simple {
				return z.strict(refuse("git", RuleGitConfig, "%s with quotes or variables hides what git runs", key))
			}
			return z.argv(append(lits("git"), lits(words...)...), c.through("git alias"))
		}
		return z.scriptVia(cmd, c, "git alias")
	case strings.HasPrefix(lower, "credential.") && !strings.HasPrefix(v, "!") && !strings.HasPrefix(v, "/"):
		return z.argv(lits("git-credential-"+strings.Fields(v)[0]), c.through("git "+key))
	case lower == "core.fsmonitor" && isGitBool(v):
		return nil
	}
	return z.scriptVia(strings.TrimPrefix(v, "!"), c, "git "+key)
}

func isGitBool(v string) bool {
	switch strings.ToLower(v) {
	case "true", "false", "yes", "no", "on", "off", "1", "0":
		return true
	}
	return false
}

// checkGit checks git's -c configuration and the options of subcommands that run commands
// (rebase --exec, bisect run, submodule foreach, difftool --extcmd, --upload-pack...).
func checkGit(z *analyzer, args []arg, c callCtx) error {
	p, err := gitGlobal.parse("git", args[1:])
	if err != nil {
		return z.strict(err)
	}
	if v, ok := p.vals["--exec-path"]; ok && slices.ContainsFunc(v, func(a arg) bool { return a.s != "" }) {
		return z.strict(refuse("git", RuleGitConfig, "--exec-path makes git run its commands from another directory"))
	}
	for _, kv := range p.vals["-c"] {
		if !kv.ok {
			return z.strict(refuse("git", RuleGitConfig, "git -c with a setting only known at run time"))
		}
		key, value, _ := strings.Cut(kv.s, "=")
		if err := z.gitConfig(key, arg{value, true}, c); err != nil {
			return err
		}
	}
	for _, kv := range p.vals["--config-env"] {
		key, _, _ := strings.Cut(kv.s, "=")
		if !kv.ok || gitKeyMatches(gitCommandKeys, key) || gitKeyMatches(gitRefusedKeys, key) {
			return z.strict(refuse("git", RuleGitConfig, "--config-env %s takes a command from the environment", key))
		}
	}
	if len(p.rest) == 0 || !p.rest[0].ok {
		return nil
	}
	return z.gitSubcommand(p.rest[0].s, p.rest[1:], c.through("git "+p.rest[0].s))
}

// gitRemoteCommands take repository addresses, and remoteHelper is the address form
// "<transport>::<address>" with which git runs the program git-remote-<transport> (ext:: runs
// any command line).
var (
	gitRemoteCommands = map[string]bool{"clone": true, "fetch": true, "pull": true, "push": true, "ls-remote": true,
		"remote": true, "archive": true, "submodule": true, "fetch-pack": true, "send-pack": true}
	remoteHelper = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(--[a-z-]+=)?[A-Za-z][A-Za-z0-9+.-]*::`) })
)

// gitExecOptions are subcommand options whose value is a command line.
var gitExecOptions = map[string][]string{
	"rebase":        {"-x", "--exec"},
	"difftool":      {"-x", "--extcmd"},
	"fetch":         {"--upload-pack"},
	"pull":          {"--upload-pack"},
	"clone":         {"-u", "--upload-pack"},
	"ls-remote":     {"--upload-pack"},
	"archive":       {"--exec"},
	"push":          {"--receive-pack", "--exec"},
	"grep":          {"-O", "--open-files-in-pager"},
	"filter-branch": {"--env-filter", "--tree-filter", "--index-filter", "--parent-filter", "--msg-filter", "--commit-filter", "--tag-name-filter"},
}

func (z *analyzer) gitSubcommand(sub string, args []arg, c callCtx) error {
	switch sub {
	case "bisect":
		if len(args) > 0 && args[0].ok && args[0].s == "run" {
			return z.argv(args[1:], c)
		}
		return nil
	case "submodule":
		return z.gitForeach(args, c)
	case "config":
		return z.gitConfigCommand(args, c)
	}
	opts := gitExecOptions[sub]
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.ok {
			continue
		}
		name, value, attached := strings.Cut(a.s, "=")
		if !attached && len(name) > 2 && name[0] == '-' && name[1] != '-' && slices.Contains(opts, name[:2]) {
			name, value, attached = name[:2], name[2:], true // -Oless
		}
		if gitRemoteCommands[sub] && remoteHelper().MatchString(a.s) {
			// A remote helper transport (ext::sh -c ..., fd::): git runs the helper or command.
			return z.strict(refuse("git", RuleRunsOthers, "git transport %q runs a remote helper or command", name))
		}
		o, ok := matchesAny(name, opts)
		if !ok {
			continue
		}
		name = o
		v := arg{value, true}
		if !attached {
			if sub == "grep" {
				continue // -O alone: the default pager
			}
			if i+1 == len(args) {
				continue
			}
			i++
			v = args[i]
		}
		if !v.ok {
			return z.strict(refuse("git", RuleDynamic, "git %s %s with a command only known at run time", sub, name))
		}
		if err := z.scriptVia(v.s, c, name); err != nil {
			return err
		}
	}
	return nil
}

// gitForeach follows git submodule [--quiet] foreach [--recursive] COMMAND...
func (z *analyzer) gitForeach(args []arg, c callCtx) error {
	i := slices.IndexFunc(args, func(a arg) bool { return a.ok && a.s == "foreach" })
	if i < 0 {
		return nil
	}
	var words []string
	for _, a := range args[i+1:] {
		switch {
		case !a.ok:
			return z.strict(refuse("git", RuleDynamic, "git submodule foreach with a command only known at run time"))
		case len(words) == 0 && (a.s == "--recursive" || a.s == "-q" || a.s == "--quiet"):
		default:
			words = append(words, a.s)
		}
	}
	if len(words) == 0 {
		return nil
	}
	return z.scriptVia(strings.Join(words, " "), c, "foreach")
}

// gitConfigCommand checks `git config KEY VALUE` (and --add, set): the value is run by later
// git commands.
func (z *analyzer) gitConfigCommand(args []arg, c callCtx) error {
	var operands []arg
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a.ok && (a.s == "-e" || longMatch(a.s, "--edit")):
			return z.strict(refuse("git", RuleGitConfig, "git config --edit runs an editor"))
		case a.ok && (a.s == "-f" || a.s == "--file" || a.s == "--blob" || a.s == "--type" || a.s == "--default" || a.s == "--comment" || a.s == "--value"):
			i++
		case a.ok && strings.HasPrefix(a.s, "-"):
		default:
			operands = append(operands, a)
		}
	}
	if len(operands) > 0 && operands[0].ok && operands[0].s == "set" {
		operands = operands[1:]
	}
	if len(operands) < 2 || !operands[0].ok {
		return nil
	}
	return z.gitConfig(operands[0].s, operands[1], c)
}
