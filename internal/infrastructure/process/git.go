package process

// [sandbox] git inside the sandbox. Two things go wrong with git under the sandbox, both set
// right through git's command-scope configuration in the environment (GIT_CONFIG_COUNT,
// GIT_CONFIG_KEY_n, GIT_CONFIG_VALUE_n; git 2.31 and later), which outranks the system, global
// and repository files, so a repository's own .git/config cannot undo it:
//
//   - A root awf runs tools as uid 65534, which owns nothing: git refuses the workspace's
//     repository ("detected dubious ownership"). The repository that holds the working
//     directory is named in safe.directory, which git reads only from protected (system,
//     global, command) configuration: a repository cannot name itself.
//   - An allowed git runs other programs through hooks (.git/hooks, or core.hooksPath) and
//     core.fsmonitor. Both are off (core.hooksPath=/dev/null, core.fsmonitor=false) unless the
//     policy allows them (sandbox.git_hooks: true).

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// GitEnv returns env with git's command-scope configuration for a sandboxed script started in
// dir (by this backend or the container one): safe.directory for the repository holding dir (and dir itself), and, unless hooks is
// set, hooks and fsmonitor off. Entries env already has (from env.set or env.allow) are kept
// and come first: for a single-valued key the last entry wins, so these win.
func GitEnv(env []string, dir string, hooks bool) []string {
	pairs := [][2]string{{"safe.directory", dir}}
	if top := gitTop(dir); top != "" && top != dir {
		pairs = append(pairs, [2]string{"safe.directory", top})
	}
	if !hooks {
		pairs = append(pairs, [2]string{"core.hooksPath", os.DevNull}, [2]string{"core.fsmonitor", "false"})
	}
	n := 0
	out := make([]string, 0, len(env)+2*len(pairs)+1)
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GIT_CONFIG_COUNT="); ok {
			n, _ = strconv.Atoi(v)
			continue
		}
		out = append(out, kv)
	}
	n = max(n, 0)
	for i, p := range pairs {
		k := strconv.Itoa(n + i)
		out = append(out, "GIT_CONFIG_KEY_"+k+"="+p[0], "GIT_CONFIG_VALUE_"+k+"="+p[1])
	}
	return append(out, "GIT_CONFIG_COUNT="+strconv.Itoa(n+len(pairs)))
}

// gitTop is the nearest directory at or above dir that holds a .git entry (a repository's
// top level, or a worktree's), or "" when there is none.
func gitTop(dir string) string {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}
