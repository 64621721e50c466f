package cmdcheck

import (
	"slices"
	"strings"
)

// Programs that run other programs through an option or a script of their own (issue 11,
// item 3a): each one's argv is read here and what it would run is checked, or refused when it
// cannot be seen. docs/security.md lists them.

// longMatch reports whether the long option given (without "=value") selects name: the
// same, or an abbreviation GNU getopt_long accepts ("--to-com" for "--to-command"). Any
// prefix of four or more characters counts, so an abbreviation that getopt would reject as
// ambiguous is refused too (the safe side).
func longMatch(given, name string) bool {
	return given == name || len(given) >= 4 && strings.HasPrefix(given, "--") && strings.HasPrefix(name, given)
}

// matchesAny reports the name of opts that given selects, if any.
func matchesAny(given string, opts []string) (string, bool) {
	for _, o := range opts {
		if strings.HasPrefix(o, "--") && longMatch(given, o) || given == o {
			return o, true
		}
	}
	return "", false
}

// rgValued are ripgrep's short options that take a value, which ends a cluster.
const rgValued = "ABCEMTdefgjmrt"

// checkRg follows ripgrep's --pre (a program run on every file searched) and refuses
// --search-zip (-z), which runs decompression programs it never names.
func checkRg(z *analyzer, args []arg, c callCtx) error {
	for i := 1; i < len(args); i++ {
		a := args[i]
		if !a.ok {
			continue // a pattern or path: the guard sees it expanded
		}
		if a.s == "--" {
			return nil
		}
		name, value, attached := strings.Cut(a.s, "=")
		switch {
		case name == "--pre-glob" && !attached:
			i++
		case name == "--pre":
			v := arg{value, true}
			if !attached {
				if i+1 == len(args) {
					return nil
				}
				i++
				v = args[i]
			}
			if !v.ok {
				return z.strict(refuse("rg", RuleDynamic, "rg --pre with a program only known at run time"))
			}
			if err := z.argv([]arg{v}, c.through("rg --pre")); err != nil {
				return err
			}
		case longMatch(name, "--search-zip"):
			return z.strict(refuse("rg", RuleRunsOthers, "rg --search-zip runs decompression programs"))
		case strings.HasPrefix(a.s, "-") && !strings.HasPrefix(a.s, "--"):
			for j := 1; j < len(a.s); j++ {
				if a.s[j] == 'z' {
					return z.strict(refuse("rg", RuleRunsOthers, "rg -z runs decompression programs"))
				}
				if strings.IndexByte(rgValued, a.s[j]) >= 0 {
					if j == len(a.s)-1 {
						i++ // the value is the next argument
					}
					break
				}
			}
		}
	}
	return nil
}

var sedOpts = optSpec{
	flag: []string{"-n", "--quiet", "--silent", "-E", "-r", "--regexp-extended", "-s", "--separate", "-u", "--unbuffered",
		"-z", "--null-data", "--posix", "--debug", "--sandbox", "--follow-symlinks", "-b", "--binary"},
	arg:      []string{"-e", "--expression", "-f", "--file", "-l", "--line-length"},
	optional: []string{"-i", "--in-place"},
}

// checkSed refuses sed scripts that run commands (the e command, the e flag of s) or that
// are read from a file; --sandbox, which makes sed refuse e, r and w itself, allows any. As
// GNU sed, it reads options anywhere before "--"; the scripts are the -e values, or the first
// operand when there is none.
func checkSed(z *analyzer, args []arg, c callCtx) error {
	if z.list == nil {
		return nil
	}
	var scripts, operands []arg
	rest := args[1:]
	for len(rest) > 0 {
		p, err := sedOpts.parse("sed", rest)
		if err != nil {
			return err
		}
		switch {
		case p.has("-f", "--file"):
			return refuse("sed", RuleRunsOthers, "a sed script read from a file cannot be checked (it could run commands with e)")
		case p.has("--sandbox"):
			return nil
		}
		scripts = append(append(scripts, p.vals["-e"]...), p.vals["--expression"]...)
		rest = nil
		for i, a := range p.rest {
			if !a.ok {
				return refuse("sed", RuleDynamic, "an argument only known at run time could be an option or a script")
			}
			if strings.HasPrefix(a.s, "-") && a.s != "-" && a.s != "--" {
				rest = p.rest[i:]
				break
			}
			operands = append(operands, a)
		}
	}
	if len(scripts) == 0 && len(operands) > 0 {
		scripts = operands[:1]
	}
	for _, s := range scripts {
		if !s.ok {
			return refuse("sed", RuleDynamic, "a sed script only known at run time")
		}
		if why := sedRunsCommand(s.s); why != "" {
			return refuse("sed", RuleRunsOthers, "%s", why)
		}
	}
	return nil
}

// sedRunsCommand reads a sed script as GNU sed does and says why it could run a command
// (the e command, s///e), or cannot be read with certainty; "" when it runs none.
func sedRunsCommand(script string) string {
	sc := sedScanner{s: script}
	for {
		sc.skip(" \t\n;")
		if sc.done() {
			return ""
		}
		if sc.peek() == '#' {
			sc.toEOL()
			continue
		}
		if !sc.address() {
			return "a sed address that cannot be read"
		}
		sc.skip(" \t")
		if sc.peek() == '!' {
			sc.i++
			sc.skip(" \t")
		}
		if sc.done() {
			return "a sed address without a command"
		}
		cmd := sc.s[sc.i]
		sc.i++
		switch {
		case cmd == 'e':
			return "the sed e command runs a shell command"
		case cmd == 's':
			flags, ok := sc.substitution()
			if !ok {
				return "a sed s command that cannot be read"
			}
			if strings.Contains(flags, "e") {
				return "the e flag of sed's s command runs the pattern space as a command"
			}
		case cmd == 'y':
			if _, ok := sc.delimited(2); !ok {
				return "a sed y command that cannot be read"
			}
		case strings.IndexByte("aic", cmd) >= 0:
			sc.text()
		case strings.IndexByte(":btTrRwWv", cmd) >= 0:
			sc.toEOL() // a label, file name or version: to the end of the line (; too for labels)
		case strings.IndexByte("{}=dDgGhHnNpPxzFqQlL", cmd) >= 0:
			sc.skip("0123456789")
		default:
			return "an unknown sed command " + string(cmd)
		}
	}
}

type sedScanner struct {
	s string
	i int
}

func (sc *sedScanner) done() bool { return sc.i >= len(sc.s) }

func (sc *sedScanner) peek() byte {
	if sc.done() {
		return 0
	}
	return sc.s[sc.i]
}

func (sc *sedScanner) skip(set string) {
	for !sc.done() && strings.IndexByte(set, sc.s[sc.i]) >= 0 {
		sc.i++
	}
}

func (sc *sedScanner) toEOL() {
	for !sc.done() && sc.s[sc.i] != '\n' {
		sc.i++
	}
}

// text skips the text of a, i and c: to the end of the line, lines ending in a backslash
// continuing.
func (sc *sedScanner) text() {
	for !sc.done() {
		switch sc.s[sc.i] {
		case '\\':
			sc.i += 2
			continue
		case '\n':
			return
		}
		sc.i++
	}
}

// address skips zero, one or two addresses (N, $, /re/flags, \cREc, first~step, addr,+N);
// false when one cannot be read.
func (sc *sedScanner) address() bool {
	present, ok := sc.oneAddress(false)
	if !present || !ok {
		return ok
	}
	sc.skip(" \t")
	if sc.peek() != ',' {
		return true
	}
	sc.i++
	sc.skip(" \t")
	present, ok = sc.oneAddress(true)
	return present && ok
}

func (sc *sedScanner) oneAddress(second bool) (present, ok bool) {
	switch c := sc.peek(); {
	case c >= '0' && c <= '9' || c == '$':
		sc.i++
		sc.skip("0123456789~")
	case c == '/' || c == '\\':
		if c == '\\' {
			sc.i++
		}
		if _, ok := sc.delimited(1); !ok {
			return true, false
		}
		sc.skip("IM")
	case second && (c == '+' || c == '~'):
		sc.i++
		sc.skip("0123456789")
	default:
		return false, true
	}
	return true, true
}

// delimited reads parts parts delimited by the character at the cursor, which backslashes
// escape; it returns the text after them up to the end of the command.
func (sc *sedScanner) delimited(parts int) (string, bool) {
	if sc.done() {
		return "", false
	}
	d := sc.s[sc.i]
	if d == '\n' || d == '\\' {
		return "", false
	}
	sc.i++
	for p := 0; p < parts; p++ {
		for {
			if sc.done() {
				return "", false
			}
			ch := sc.s[sc.i]
			sc.i++
			if ch == '\\' {
				sc.i++
				continue
			}
			if ch == d {
				break
			}
		}
	}
	return "", true
}

// substitution reads the rest of s/re/replacement/flags and returns the flags; a w flag's
// file name ends the command.
func (sc *sedScanner) substitution() (string, bool) {
	if _, ok := sc.delimited(2); !ok {
		return "", false
	}
	var flags strings.Builder
	for !sc.done() {
		ch := sc.s[sc.i]
		switch {
		case ch == 'w':
			sc.toEOL()
			return flags.String(), true
		case strings.IndexByte("gpiImMe0123456789", ch) >= 0:
			flags.WriteByte(ch)
			sc.i++
		case strings.IndexByte(" \t;\n}#", ch) >= 0:
			return flags.String(), true
		default:
			return "", false
		}
	}
	return flags.String(), true
}

// makeVars are make variables that choose the program recipes run with.
var makeVars = []string{"SHELL", ".SHELLFLAGS", "MAKESHELL"}

// checkMake refuses what replaces the shell make runs recipes with, and --eval. make is a
// build tool: its recipes come from a Makefile the check does not read (docs/security.md).
func checkMake(z *analyzer, args []arg, c callCtx) error {
	for _, a := range args[1:] {
		if !a.ok {
			continue
		}
		name, _, assign := strings.Cut(a.s, "=")
		switch {
		case assign && slices.Contains(makeVars, strings.TrimSuffix(strings.TrimSuffix(name, ":"), "+")):
			return z.strict(refuse("make", RuleRunsOthers, "%s= replaces the shell make runs recipes with", name))
		case longMatch(name, "--eval") || a.s == "-E" || strings.HasPrefix(a.s, "-E") && !strings.HasPrefix(a.s, "--"):
			return z.strict(refuse("make", RuleRunsOthers, "make --eval adds rules that cannot be checked"))
		}
	}
	return nil
}

// checkVim refuses the options through which vi, vim and friends run editor commands (and
// through them shell commands): +cmd, --cmd, and the letters c, S, s, u, U, e and E (ex mode
// reads commands from standard input).
func checkVim(z *analyzer, args []arg, c callCtx) error {
	for _, a := range args[1:] {
		switch {
		case !a.ok:
			return z.strict(refuse(args[0].s, RuleDynamic, "an argument only known at run time could be an editor command"))
		case a.s == "--":
			return nil
		case strings.HasPrefix(a.s, "+") || longMatch(a.s, "--cmd") ||
			strings.HasPrefix(a.s, "-") && !strings.HasPrefix(a.s, "--") && strings.ContainsAny(a.s[1:], "cSsuUeE"):
			return z.strict(refuse(args[0].s, RuleRunsOthers, "%s %s runs editor commands, which can run any program", args[0].s, a.s))
		}
	}
	return nil
}

// checkEmacs refuses the options that evaluate Lisp.
func checkEmacs(z *analyzer, args []arg, c callCtx) error {
	for _, a := range args[1:] {
		name, _, _ := strings.Cut(a.s, "=")
		if !a.ok || slices.ContainsFunc([]string{"--eval", "--load", "--funcall", "--script", "--execute"}, func(o string) bool { return longMatch(name, o) }) ||
			slices.Contains([]string{"-l", "-f", "-x"}, a.s) {
			return z.strict(refuse("emacs", RuleRunsOthers, "emacs %s evaluates Lisp, which can run any program", a.String()))
		}
	}
	return nil
}

// sshCommandOptions are ssh configuration keys (lower case) whose value runs locally.
var sshCommandOptions = []string{"proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand", "match"}

// sshValued are the short options of ssh, scp and sftp that take a value.
const sshValued = "BbcDEeFIiJLlmOoPpQRSWw"

// checkSSH refuses ssh, scp and sftp options that run local commands: -o ProxyCommand and
// friends, -F (a configuration file may hold them); scp's and sftp's -S program is checked.
// What ssh runs on the remote host is not a local program.
func checkSSH(z *analyzer, args []arg, c callCtx) error {
	name := programKey(args[0].s)
	for i := 1; i < len(args); i++ {
		a := args[i]
		if !a.ok {
			continue
		}
		if !strings.HasPrefix(a.s, "-") || a.s == "-" || a.s == "--" {
			if name == "ssh" {
				return nil // the destination: what follows runs remotely
			}
			continue
		}
		for j := 1; j < len(a.s); j++ {
			opt := a.s[j]
			if strings.IndexByte(sshValued, opt) < 0 {
				continue
			}
			v := arg{a.s[j+1:], true}
			if v.s == "" {
				if i+1 == len(args) {
					return nil
				}
				i++
				v = args[i]
			}
			if err := z.sshOption(name, opt, v, c); err != nil {
				return err
			}
			break
		}
	}
	return nil
}

func (z *analyzer) sshOption(name string, opt byte, v arg, c callCtx) error {
	switch {
	case opt != 'o' && opt != 'F' && opt != 'S':
		return nil
	case !v.ok:
		return z.strict(refuse(name, RuleDynamic, "%s -%c with a value only known at run time", name, opt))
	case opt == 'F':
		return z.strict(refuse(name, RuleRunsOthers, "%s -F reads a configuration that can run local commands", name))
	case opt == 'S' && name != "ssh":
		return z.argv(lits(v.s), c.through(name+" -S"))
	case opt == 'o':
		key := strings.ToLower(strings.TrimSpace(v.s))
		if i := strings.IndexAny(key, "= \t"); i >= 0 {
			key = key[:i]
		}
		if slices.Contains(sshCommandOptions, key) {
			return z.strict(refuse(name, RuleRunsOthers, "%s -o %s runs a local command", name, key))
		}
	}
	return nil
}

// checkZip refuses zip's --unzip-command (-TT) and checks the unzip its -T runs.
func checkZip(z *analyzer, args []arg, c callCtx) error {
	for _, a := range args[1:] {
		name, _, _ := strings.Cut(a.s, "=")
		switch {
		case !a.ok:
		case a.s == "-TT" || longMatch(name, "--unzip-command"):
			return z.strict(refuse("zip", RuleRunsOthers, "zip %s runs a command", a.s))
		case a.s == "-T" || longMatch(name, "--test"):
			if err := z.argv(lits("unzip"), c.through("zip -T")); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkMan refuses man's pager and browser options; PAGER and MANPAGER are checked as
// variables.
func checkMan(z *analyzer, args []arg, c callCtx) error {
	for _, a := range args[1:] {
		name, _, _ := strings.Cut(a.s, "=")
		if a.ok && (strings.HasPrefix(a.s, "-P") || strings.HasPrefix(a.s, "-H") || longMatch(name, "--pager") || longMatch(name, "--html")) {
			return z.strict(refuse("man", RuleRunsOthers, "man %s runs a pager or browser program", a.s))
		}
	}
	return nil
}
