package shellcanon

import "strings"

// shells run the script given with -c.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true}

// codeRunners run code that is not on the command line as a command: the canonical form of a
// script using them is opaque.
var codeRunners = map[string]bool{"eval": true, "source": true, ".": true, "trap": true, "alias": true}

// wrapper describes a command that runs another command given by its arguments: options
// taking a value (which are skipped with it), and how many positional arguments come before
// the wrapped command.
type wrapper struct {
	valued     map[string]bool
	positional int
	assigns    bool // NAME=VALUE arguments come before the command (env)
}

var wrappers = map[string]wrapper{
	"env":     {valued: set("-u", "--unset", "-C", "--chdir", "-S", "--split-string"), assigns: true},
	"nice":    {valued: set("-n", "--adjustment")},
	"nohup":   {},
	"setsid":  {},
	"time":    {valued: set("-f", "--format", "-o", "--output")},
	"command": {},
	"builtin": {},
	"exec":    {valued: set("-a")},
	"timeout": {valued: set("-s", "--signal", "-k", "--kill-after"), positional: 1},
	"stdbuf":  {valued: set("-i", "-o", "-e", "--input", "--output", "--error")},
	"ionice":  {valued: set("-c", "-n", "-p", "--class", "--classdata")},
	"xargs": {valued: set("-a", "--arg-file", "-d", "--delimiter", "-E", "-e", "-I", "-i", "-L", "-l",
		"-n", "--max-args", "-P", "--max-procs", "-s", "--max-chars", "--process-slot-var")},
	"sudo":    {valued: set("-u", "--user", "-g", "--group", "-C", "-D", "--chdir", "-h", "-p", "-r", "-t", "-U")},
	"doas":    {valued: set("-u", "-C")},
	"chroot":  {valued: set("--userspec", "--groups"), positional: 1},
	"flock":   {valued: set("-w", "--timeout", "-E", "--conflict-exit-code"), positional: 1},
	"watch":   {valued: set("-n", "--interval", "-d")},
	"strace":  {valued: set("-e", "-o", "-p", "-s", "-u")},
	"taskset": {valued: set("-c", "--cpu-list"), positional: 1},
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// wrapped returns where the command a wrapper runs sits in argv (argv[lo:hi]; empty when none
// is given), or false when name is not a wrapper. find's -exec, -execdir, -ok and -okdir
// commands are found the same way.
func wrapped(name string, argv []string) (lo, hi int, ok bool) {
	if name == "find" {
		return findExec(argv)
	}
	wr, ok := wrappers[name]
	if !ok {
		return 0, 0, false
	}
	pos := wr.positional
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "--":
			return min(i+1+pos, len(argv)), len(argv), true
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if wr.valued[a] {
				i++
			}
		case wr.assigns && strings.Contains(a, "=") && !strings.HasPrefix(a, "="):
		case pos > 0:
			pos--
		default:
			return i, len(argv), true
		}
	}
	return len(argv), len(argv), true
}

// findExec finds the first command find runs with -exec and friends, up to ";" or "+".
func findExec(argv []string) (lo, hi int, ok bool) {
	for i, a := range argv {
		switch a {
		case "-exec", "-execdir", "-ok", "-okdir":
			for j := i + 1; j < len(argv); j++ {
				if argv[j] == ";" || argv[j] == "+" {
					return i + 1, j, true
				}
			}
			return i + 1, len(argv), true
		}
	}
	return 0, 0, false
}
