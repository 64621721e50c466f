package cmdcheck

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// program is what the checker knows about a program that runs others.
type program struct {
	// transparent wrappers only change how the program they run runs (env, timeout, nice):
	// they need no allowlist entry of their own.
	transparent bool
	check       func(z *analyzer, args []arg, c callCtx) error
}

var loaderName = sync.OnceValue(func() *regexp.Regexp { // compiled on first use, not at every start
	return regexp.MustCompile(`^ld(-linux|-musl|64)?[-.a-z0-9_]*\.so(\.[0-9]+)*$`)
})

// programKey is the name programs are known by: the base name, or "ld.so" for any dynamic
// loader (ld-linux-x86-64.so.2 /usr/bin/curl runs curl).
func programKey(name string) string {
	base := filepath.Base(name)
	if loaderName().MatchString(base) {
		return "ld.so"
	}
	return base
}

// lookupProgram returns the handler of a program that runs others (a switch rather than a
// map: the handlers call back into the analyzer).
func lookupProgram(key string) (program, bool) {
	switch key {
	case "env":
		return program{transparent: true, check: checkEnv}, true
	case "nice":
		return wrapper(true, optSpec{arg: []string{"-n", "--adjustment"}, numeric: true}, 0), true
	case "nohup":
		return wrapper(true, optSpec{}, 0), true
	case "timeout":
		return wrapper(true, optSpec{
			flag: []string{"--preserve-status", "--foreground", "-v", "--verbose"},
			arg:  []string{"-s", "--signal", "-k", "--kill-after"},
		}, 1), true
	case "stdbuf":
		return wrapper(true, optSpec{arg: []string{"-i", "-o", "-e", "--input", "--output", "--error"}}, 0), true
	case "time":
		return wrapper(true, optSpec{
			flag: []string{"-p", "-v", "--verbose", "-a", "--append", "-q", "--quiet", "--portability"},
			arg:  []string{"-f", "--format", "-o", "--output"},
		}, 0), true
	case "setsid":
		return wrapper(true, optSpec{flag: []string{"-c", "--ctty", "-f", "--fork", "-w", "--wait"}}, 0), true
	case "ionice":
		return wrapper(true, optSpec{
			flag: []string{"-t", "--ignore"},
			arg:  []string{"-c", "--class", "-n", "--classdata", "-u", "--uid", "-p", "--pid", "-P", "--pgid"},
			stop: []string{"-p", "--pid", "-P", "--pgid", "-u", "--uid"},
		}, 0), true
	case "taskset":
		return wrapper(true, optSpec{flag: []string{"-a", "--all-tasks", "-c", "--cpu-list", "-p", "--pid"}, stop: []string{"-p", "--pid"}}, 1), true
	case "xargs":
		return program{check: checkXargs}, true
	case "find":
		return program{check: checkFind}, true
	case "sh", "bash", "dash", "zsh", "ksh", "mksh", "lksh", "ash", "yash", "posh", "rbash":
		return program{check: checkShell}, true
	case "busybox":
		return program{check: checkBusybox}, true
	case "git":
		return program{check: checkGit}, true
	case "awk", "gawk", "mawk", "nawk":
		return program{check: checkAwk}, true
	case "tar", "sort", "rsync":
		return program{check: checkCommandOptions}, true
	case "flock":
		return program{check: checkFlock}, true
	case "watch":
		return program{check: checkWatch}, true
	case "ld.so":
		return wrapper(false, optSpec{
			flag: []string{"--list", "--verify", "--inhibit-cache", "--list-tunables", "--list-diagnostics"},
			arg:  []string{"--library-path", "--inhibit-rpath", "--audit", "--preload", "--argv0", "--glibc-hwcaps-prepend", "--glibc-hwcaps-mask"},
		}, 0), true
	case "sudo", "su", "doas", "pkexec", "runuser", "sg", "newgrp":
		return refusing(RulePrivilege, "runs a program with other privileges, which no_new_privs prevents anyway"), true
	case "nsenter", "unshare", "chroot", "setpriv", "capsh", "firejail", "bwrap", "systemd-run", "systemd-nspawn":
		return refusing(RuleNamespace, "enters or makes namespaces or changes privileges"), true
	case "ip":
		return program{check: checkIP}, true
	case "rg":
		return program{check: checkRg}, true
	case "sed", "gsed":
		return program{check: checkSed}, true
	case "make", "gmake":
		return program{check: checkMake}, true
	case "vi", "vim", "nvim", "view", "vimdiff", "rvim", "gvim":
		return program{check: checkVim}, true
	case "emacs":
		return program{check: checkEmacs}, true
	case "ssh", "scp", "sftp":
		return program{check: checkSSH}, true
	case "zip":
		return program{check: checkZip}, true
	case "man":
		return program{check: checkMan}, true
	case "ex", "parallel", "sem", "strace", "ltrace", "gdb", "valgrind", "expect", "at", "batch", "crontab",
		"chrt", "prlimit", "numactl", "unbuffer", "cpulimit", "catchsegv", "script", "run-parts", "dbus-run-session":
		return refusing(RuleRunsOthers, "runs other programs in ways the command check cannot follow"), true
	}
	return program{}, false
}

// optSpec describes a program's options.
type optSpec struct {
	arg  []string // options with a value: "-n", "--adjustment" (also "--adjustment=5", "-n5")
	flag []string // options without
	// optional are options whose value is optional and only given attached ("-i{}",
	// "--replace=X").
	optional []string
	// stop are options after which the program runs no command (taskset -p).
	stop []string
	// numeric accepts "-10" (nice).
	numeric bool
}

type parsedOpts struct {
	vals map[string][]arg
	rest []arg
}

func (p parsedOpts) has(names ...string) bool {
	return slices.ContainsFunc(names, func(n string) bool { _, ok := p.vals[n]; return ok })
}

func (p parsedOpts) value(names ...string) (arg, bool) {
	for _, n := range names {
		if v, ok := p.vals[n]; ok && len(v) > 0 {
			return v[len(v)-1], true
		}
	}
	return arg{}, false
}

// parse splits args (after the program name) into options and the rest, which starts at the
// first operand. An option it does not know hides where the command starts: a refusal.
func (o optSpec) parse(prog string, args []arg) (parsedOpts, error) {
	p := parsedOpts{vals: map[string][]arg{}}
	set := func(name string, v arg) { p.vals[name] = append(p.vals[name], v) }
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.ok {
			// An option or the command: only known at run time.
			return p, refuse(prog, RuleDynamic, "an argument only known at run time hides which program %s runs", prog)
		}
		s := a.s
		switch {
		case s == "--":
			p.rest = args[i+1:]
			return p, nil
		case s == "-" || !strings.HasPrefix(s, "-"):
			p.rest = args[i:]
			return p, nil
		case o.numeric && isNumber(s[1:]):
			set("-N", a)
		case strings.HasPrefix(s, "--"):
			name, value, hasValue := strings.Cut(s, "=")
			switch {
			case slices.Contains(o.arg, name) && hasValue, slices.Contains(o.optional, name):
				set(name, arg{value, true})
			case slices.Contains(o.arg, name):
				if i+1 == len(args) {
					return p, refuse(prog, RuleOption, "option %s needs a value", name)
				}
				i++
				set(name, args[i])
			case slices.Contains(o.flag, name) && !hasValue:
				set(name, arg{"", true})
			default:
				return p, refuse(prog, RuleOption, "unknown option %q hides which program %s runs", s, prog)
			}
		default:
			consumed, err := o.short(prog, s, args[i+1:], set)
			if err != nil {
				return p, err
			}
			i += consumed
		}
		if p.has(o.stop...) {
			return p, nil
		}
	}
	return p, nil
}

// short parses a cluster of short options such as -xvf FILE; it returns how many of the
// following arguments it consumed.
func (o optSpec) short(prog, s string, next []arg, set func(string, arg)) (int, error) {
	for j := 1; j < len(s); j++ {
		name := "-" + s[j:j+1]
		switch {
		case slices.Contains(o.arg, name):
			if j+1 < len(s) {
				set(name, arg{s[j+1:], true})
				return 0, nil
			}
			if len(next) == 0 {
				return 0, refuse(prog, RuleOption, "option %s needs a value", name)
			}
			set(name, next[0])
			return 1, nil
		case slices.Contains(o.optional, name):
			set(name, arg{s[j+1:], true})
			return 0, nil
		case slices.Contains(o.flag, name):
			set(name, arg{"", true})
		default:
			return 0, refuse(prog, RuleOption, "unknown option %q hides which program %s runs", s, prog)
		}
	}
	return 0, nil
}

func isNumber(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "+"), "-")
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// strict returns err when an allowlist is set; listing programs without one goes on.
func (z *analyzer) strict(err error) error {
	if z.list == nil {
		return nil
	}
	return err
}

// wrapper is a program that runs the rest of its arguments (after options and positional
// operands such as timeout's duration) as a command.
func wrapper(transparent bool, o optSpec, positional int) program {
	return program{transparent: transparent, check: func(z *analyzer, args []arg, c callCtx) error {
		name := programKey(args[0].s)
		p, err := o.parse(name, args[1:])
		if err != nil {
			return z.strict(err)
		}
		if p.has(o.stop...) {
			return nil
		}
		rest := p.rest
		if len(rest) < positional {
			return nil
		}
		return z.argv(rest[positional:], c.through(name))
	}}
}

func refusing(rule Rule, why string) program {
	return program{check: func(z *analyzer, args []arg, c callCtx) error {
		return z.strict(refuse(args[0].s, rule, "%s", why))
	}}
}

var envOpts = optSpec{
	flag:     []string{"-i", "--ignore-environment", "-0", "--null", "-v", "--debug", "--list-signal-handling"},
	arg:      []string{"-u", "--unset", "-C", "--chdir", "-S", "--split-string"},
	optional: []string{"--block-signal", "--default-signal", "--ignore-signal"},
}

// checkEnv follows env [-i] [-u NAME] [NAME=VALUE]... COMMAND, keeping track of the
// variables it changes: PATH decides which program a name is.
func checkEnv(z *analyzer, args []arg, c callCtx) error {
	p, err := envOpts.parse("env", args[1:])
	if err != nil {
		return z.strict(err)
	}
	c = c.through("env")
	c.env = cloneEnv(c.env)
	// Dropping the git settings the sandbox sets (hooks and fsmonitor off) is refused under an
	// allowlist, once the program itself has been checked.
	var drops error
	if p.has("-i", "--ignore-environment") {
		drops = refuse("env", RuleEnv, "env -i drops the settings the sandbox sets (git's hooks and fsmonitor off)")
		c.clearEnv, c.env = true, map[string]*string{}
	}
	for _, n := range append(p.vals["-u"], p.vals["--unset"]...) {
		if !n.ok || sandboxGitVar(n.s) {
			drops = refuse("env", RuleEnv, "env -u %s would drop the git settings the sandbox sets (hooks and fsmonitor off)", n.s)
		}
		c.env[n.s] = nil
	}
	rest := p.rest
	if split, ok := p.value("-S", "--split-string"); ok {
		fields, simple := splitSimple(split.s)
		if !split.ok || !simple {
			return z.strict(refuse("env", RuleOption, "env -S with quotes, escapes or variables hides which program runs"))
		}
		rest = append(lits(fields...), rest...)
	}
	for len(rest) > 0 && rest[0].ok {
		name, value, ok := strings.Cut(rest[0].s, "=")
		if !ok || !syntax.ValidName(name) {
			break
		}
		if err := z.envVar(name, arg{value, true}, c); err != nil {
			return err
		}
		c.env[name] = &value
		rest = rest[1:]
	}
	if err := z.argv(rest, c); err != nil || z.list == nil {
		return err
	}
	return drops
}

func cloneEnv(env map[string]*string) map[string]*string {
	out := make(map[string]*string, len(env))
	for k, v := range env {
		out[k] = v
	}
	return out
}

// splitSimple splits on blanks when s has no quotes, escapes or variables.
func splitSimple(s string) ([]string, bool) {
	if strings.ContainsAny(s, `'"\$`+"`") {
		return nil, false
	}
	return strings.Fields(s), true
}

// commandVars hold a command line that some program runs; codeVars make programs load or
// run code no command line shows.
var (
	commandVars = []string{
		"GIT_SSH_COMMAND", "GIT_SSH", "GIT_PAGER", "PAGER", "GIT_EDITOR", "EDITOR", "VISUAL",
		"GIT_ASKPASS", "SSH_ASKPASS", "GIT_EXTERNAL_DIFF", "GIT_PROXY_COMMAND", "GIT_SEQUENCE_EDITOR",
		"MANPAGER", "LESSOPEN", "LESSCLOSE", "BROWSER",
	}
	codeVars = []string{
		"LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "GCONV_PATH", "BASH_ENV", "ENV", "PROMPT_COMMAND",
		"PS4", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
		"GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "NODE_OPTIONS", "PERL5OPT", "PYTHONSTARTUP", "PYTHONPATH",
		"RIPGREP_CONFIG_PATH", "MAKEFLAGS", "MFLAGS", "GNUMAKEFLAGS", "MAKEFILES", "GIT_ALLOW_PROTOCOL",
	}
)

// sandboxGitVar reports whether name is one of git's command-scope settings, through which the
// sandbox turns git's hooks and fsmonitor off (process.GitEnv): GIT_CONFIG_COUNT,
// GIT_CONFIG_KEY_n, GIT_CONFIG_VALUE_n. Setting, emptying or unsetting one undoes that.
func sandboxGitVar(name string) bool {
	return name == "GIT_CONFIG_COUNT" || strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_")
}

// envVar checks a variable given to a command.
func (z *analyzer) envVar(name string, v arg, c callCtx) error {
	if z.list == nil {
		return nil
	}
	switch {
	case slices.Contains(commandVars, name):
		if !v.ok {
			return refuse(name, RuleEnv, "%s holds a command that is only known at run time", name)
		}
		if strings.TrimSpace(v.s) == "" {
			return nil
		}
		return z.scriptVia(v.s, c, name)
	case sandboxGitVar(name):
		return refuse(name, RuleEnv, "%s would change the git settings the sandbox sets (hooks and fsmonitor off)", name)
	case slices.Contains(codeVars, name):
		if v.ok && v.s == "" {
			return nil
		}
		return refuse(name, RuleEnv, "%s makes programs load or run code that cannot be checked", name)
	}
	return nil
}

// scriptVia checks a command line that a program runs through a shell.
func (z *analyzer) scriptVia(src string, c callCtx, via string) error {
	saved := z.viaPrefix
	z.viaPrefix = append(slices.Clone(c.via), via)
	defer func() { z.viaPrefix = saved }()
	return z.script(src, c.depth+1)
}

// isShell reports whether key is a shell that takes -c.
func isShell(key string) bool {
	switch key {
	case "sh", "bash", "dash", "zsh", "ksh", "mksh", "lksh", "ash", "yash", "posh", "rbash":
		return true
	}
	return false
}

// checkShell follows sh -c SCRIPT into SCRIPT. A shell reading a file or stdin runs what no
// command line shows: refused.
func checkShell(z *analyzer, args []arg, c callCtx) error {
	name := programKey(args[0].s)
	command := false
	i := 1
	for ; i < len(args); i++ {
		if !args[i].ok {
			return z.strict(refuse(name, RuleDynamic, "an option only known at run time"))
		}
		s := args[i].s
		if s == "--" || s == "-" {
			i++
			break
		}
		if strings.HasPrefix(s, "--") {
			switch s {
			case "--login", "--noprofile", "--norc", "--posix", "--restricted", "--verbose", "--noediting", "--debugger":
				continue
			case "--rcfile", "--init-file":
				return z.strict(refuse(name, RuleShellScript, "%s %s runs a file first", name, s))
			}
			return z.strict(refuse(name, RuleOption, "unknown option %q", s))
		}
		if len(s) < 2 || s[0] != '-' && s[0] != '+' {
			break
		}
		for _, ch := range s[1:] {
			switch {
			case ch == 'c' && s[0] == '-':
				command = true
			case ch == 'o' || ch == 'O':
				i++ // the option's name
			case ch < 'a' || ch > 'z':
				return z.strict(refuse(name, RuleOption, "unknown option %q", s))
			}
		}
	}
	rest := args[min(i, len(args)):]
	if !command {
		return z.strict(refuse(name, RuleShellScript, "%s would run a script from a file or stdin, which cannot be checked; put the script itself in sandbox.commands", name))
	}
	if len(rest) == 0 {
		return nil
	}
	if !rest[0].ok {
		return z.strict(refuse(name, RuleDynamic, "%s -c with a script only known at run time", name))
	}
	return z.scriptVia(rest[0].s, c, name+" -c")
}

func checkBusybox(z *analyzer, args []arg, c callCtx) error {
	if len(args) < 2 {
		return nil
	}
	return z.argv(args[1:], c.through("busybox"))
}

var xargsOpts = optSpec{
	flag: []string{"-0", "--null", "-o", "--open-tty", "-p", "--interactive", "-r", "--no-run-if-empty",
		"-t", "--verbose", "-x", "--exit", "--show-limits"},
	arg: []string{"-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L", "-n", "--max-args", "-P",
		"--max-procs", "-s", "--max-chars", "--process-slot-var"},
	optional: []string{"-e", "--eof", "-i", "--replace", "-l", "--max-lines"},
}

// checkXargs follows xargs into its command (echo when none). Input spliced by -I into a
// shell script would be code: refused.
func checkXargs(z *analyzer, args []arg, c callCtx) error {
	p, err := xargsOpts.parse("xargs", args[1:])
	if err != nil {
		return z.strict(err)
	}
	if len(p.rest) == 0 {
		return nil
	}
	repl := ""
	if v, ok := p.value("-I"); ok {
		repl = v.s
	} else if v, ok := p.value("-i", "--replace"); ok {
		repl = v.s
		if repl == "" {
			repl = "{}"
		}
	}
	if err := z.replaceInShell(p.rest, repl, "xargs"); err != nil {
		return err
	}
	return z.argv(p.rest, c.through("xargs"))
}

// replaceInShell refuses a shell command whose arguments contain the string a wrapper
// replaces with its input (file names, lines): that input would become code.
func (z *analyzer) replaceInShell(inner []arg, repl, wrapper string) error {
	if repl == "" || len(inner) == 0 || !inner[0].ok || !isShell(programKey(inner[0].s)) {
		return nil
	}
	for _, a := range inner[1:] {
		if !a.ok || strings.Contains(a.s, repl) {
			return z.strict(refuse(inner[0].s, RuleReplace, "%s would splice its input (%s) into a shell script", wrapper, repl))
		}
	}
	return nil
}

// checkFind follows -exec, -execdir, -ok and -okdir.
func checkFind(z *analyzer, args []arg, c callCtx) error {
	for i := 1; i < len(args); i++ {
		a := args[i]
		if !a.ok || a.s != "-exec" && a.s != "-execdir" && a.s != "-ok" && a.s != "-okdir" {
			continue
		}
		j := i + 1
		for j < len(args) && !(args[j].ok && (args[j].s == ";" || args[j].s == "+")) {
			j++
		}
		inner := args[i+1 : j]
		if err := z.replaceInShell(inner, "{}", "find "+a.s); err != nil {
			return err
		}
		if err := z.argv(inner, c.through("find "+a.s)); err != nil {
			return err
		}
		i = j
	}
	return nil
}

func checkIP(z *analyzer, args []arg, c callCtx) error {
	for i, a := range args {
		if a.ok && a.s == "netns" && slices.ContainsFunc(args[i:], func(x arg) bool { return x.ok && x.s == "exec" }) {
			return z.strict(refuse("ip", RuleNamespace, "ip netns exec runs a program in another network namespace"))
		}
	}
	return nil
}

var awkExec = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\bsystem\s*\(|\|\s*(getline|&)|\b(print|printf)\b[^;{}\n]*\|`)
})

// checkAwk refuses awk programs that run commands (system(), pipes) or come from files.
func checkAwk(z *analyzer, args []arg, c callCtx) error {
	program := ""
	for i := 1; i < len(args); i++ {
		a := args[i]
		if !a.ok {
			return z.strict(refuse("awk", RuleAwk, "an argument only known at run time could be the program"))
		}
		switch s := a.s; {
		case s == "-f" || s == "--file" || s == "-E" || s == "--exec" || strings.HasPrefix(s, "-f") || strings.HasPrefix(s, "--file="):
			return z.strict(refuse("awk", RuleAwk, "an awk program read from a file cannot be checked"))
		case s == "-l" || s == "--load" || strings.HasPrefix(s, "--load="):
			return z.strict(refuse("awk", RuleAwk, "awk extensions load code"))
		case s == "-e" || s == "--source":
			if i+1 < len(args) {
				i++
				program += args[i].s + "\n"
			}
		case s == "-v" || s == "-F" || s == "--assign" || s == "--field-separator":
			i++
		case s == "--":
			if i+1 < len(args) && program == "" {
				program = args[i+1].s
			}
			i = len(args)
		case strings.HasPrefix(s, "-") && s != "-":
		default:
			if program == "" {
				program = s
			}
			i = len(args)
		}
	}
	if awkExec().MatchString(program) {
		return z.strict(refuse("awk", RuleAwk, "the awk program runs commands (system() or a pipe)"))
	}
	return nil
}

// commandOptions are options of tar, sort and rsync whose value is a command.
var commandOptions = map[string][]string{
	"tar":   {"--to-command", "-I", "--use-compress-program", "--info-script", "-F", "--new-volume-script", "--rsh-command", "--rmt-command"},
	"sort":  {"--compress-program"},
	"rsync": {"-e", "--rsh"},
}

func checkCommandOptions(z *analyzer, args []arg, c callCtx) error {
	name := programKey(args[0].s)
	opts := commandOptions[name]
	for i := 1; i < len(args); i++ {
		a := args[i]
		if !a.ok {
			continue
		}
		opt, value, attached := strings.Cut(a.s, "=")
		if name == "tar" && (i == 1 && !strings.HasPrefix(a.s, "-") || strings.HasPrefix(a.s, "-") && !strings.HasPrefix(a.s, "--")) &&
			len(a.s) > 2 && strings.ContainsAny(strings.TrimPrefix(a.s, "-"), "IF") {
			// -I and -F inside a cluster (tar -xIsh f, tar xIf sh a.tar): where their
			// command is cannot be told with certainty.
			return z.strict(refuse("tar", RuleRunsOthers, "tar %s: -I or -F in a cluster of options runs a command", a.s))
		}
		if o, ok := matchesAny(opt, []string{"--checkpoint-action"}); ok && attached {
			opt = o
			if cmd, ok := strings.CutPrefix(value, "exec="); ok {
				if err := z.scriptVia(cmd, c, name+" "+opt); err != nil {
					return err
				}
			}
			continue
		}
		o, ok := matchesAny(opt, opts)
		if !ok {
			continue
		}
		opt = o
		v := arg{value, true}
		if !attached {
			if i+1 == len(args) {
				continue
			}
			i++
			v = args[i]
		}
		if !v.ok {
			return z.strict(refuse(name, RuleDynamic, "%s with a command only known at run time", opt))
		}
		if err := z.scriptVia(v.s, c, name+" "+opt); err != nil {
			return err
		}
	}
	return nil
}

var flockOpts = optSpec{
	flag: []string{"-s", "--shared", "-x", "--exclusive", "-e", "-u", "--unlock", "-n", "--nonblock", "--nb",
		"-o", "--close", "-F", "--no-fork", "--verbose"},
	arg: []string{"-w", "--timeout", "--wait", "-E", "--conflict-exit-code", "-c", "--command"},
}

func checkFlock(z *analyzer, args []arg, c callCtx) error {
	p, err := flockOpts.parse("flock", args[1:])
	if err != nil {
		return z.strict(err)
	}
	if cmd, ok := p.value("-c", "--command"); ok {
		if !cmd.ok {
			return z.strict(refuse("flock", RuleDynamic, "flock -c with a command only known at run time"))
		}
		return z.scriptVia(cmd.s, c, "flock -c")
	}
	if len(p.rest) < 2 {
		return nil // flock FD
	}
	return z.argv(p.rest[1:], c.through("flock"))
}

var watchOpts = optSpec{
	flag: []string{"-b", "--beep", "-c", "--color", "-C", "--no-color", "-e", "--errexit", "-g", "--chgexit",
		"-t", "--no-title", "-x", "--exec", "-p", "--precise", "-r", "--no-rerun", "-w", "--no-wrap"},
	arg:      []string{"-n", "--interval", "-q", "--equexit"},
	optional: []string{"-d", "--differences"},
}

func checkWatch(z *analyzer, args []arg, c callCtx) error {
	p, err := watchOpts.parse("watch", args[1:])
	if err != nil {
		return z.strict(err)
	}
	if p.has("-x", "--exec") {
		return z.argv(p.rest, c.through("watch"))
	}
	words := make([]string, 0, len(p.rest))
	for _, a := range p.rest {
		if !a.ok {
			return z.strict(refuse("watch", RuleDynamic, "watch with a command only known at run time"))
		}
		words = append(words, a.s)
	}
	if len(words) == 0 {
		return nil
	}
	return z.scriptVia(strings.Join(words, " "), c, "watch")
}
