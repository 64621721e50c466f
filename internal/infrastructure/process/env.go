package process

import (
	"os"
	"slices"
	"strings"

	"github.com/awf-dev/awf/internal/domain/fault"
	"mvdan.cc/sh/v3/syntax"
)

// DefaultPath is PATH in the minimal environment.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// MinimalEnv returns the environment a script starts from when neither the request nor the
// Config gives one: PATH, HOME (awf's own, left out when unknown), LANG=C.UTF-8 and TMPDIR.
// Nothing else of awf's environment, which holds API keys, reaches a script by default.
func MinimalEnv() []string {
	env := []string{"PATH=" + DefaultPath}
	if home, err := os.UserHomeDir(); err == nil {
		env = append(env, "HOME="+home)
	}
	return append(env, "LANG=C.UTF-8", "TMPDIR="+os.TempDir())
}

// mergeEnv returns base with extra on top: a name in extra replaces the base entry in place,
// and new names follow in sorted order, so the result is deterministic. Entries of base
// without "=" are dropped; a later duplicate in base wins, as in os/exec.
func mergeEnv(base []string, extra map[string]string) ([]string, error) {
	out := make([]string, 0, len(base)+len(extra))
	index := make(map[string]int, len(base)+len(extra))
	set := func(name, kv string) {
		if i, ok := index[name]; ok {
			out[i] = kv
			return
		}
		index[name] = len(out)
		out = append(out, kv)
	}
	for _, kv := range base {
		if name, _, ok := strings.Cut(kv, "="); ok && name != "" {
			set(name, kv)
		}
	}
	names := make([]string, 0, len(extra))
	for name := range extra {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return nil, fault.New(fault.Invalid, "environment variable name %q: must be non-empty, without '=' or NUL", name)
		}
		set(name, name+"="+extra[name])
	}
	return out, nil
}

// checkVars refuses variable names the shell could not reference: such a request comes from a
// bug in the binding, never from a value.
func checkVars(vars map[string]string) error {
	for name := range vars {
		if !syntax.ValidName(name) {
			return fault.New(fault.Invalid, "shell variable name %q is not a valid identifier", name)
		}
	}
	return nil
}

// helperEnv is the helper process's own environment: empty, so that the script's variables do
// not tune the Go runtime (GODEBUG, GOGC, GOMAXPROCS) and do not show in the helper's
// /proc/<pid>/environ. Two settings of Go's own tooling pass through from awf's environment:
// GOCOVERDIR, so a -cover build measures the helper too, and GORACE, so a -race build's helper
// can be told not to sleep 1s at exit (atexit_sleep_ms).
func helperEnv() []string {
	env := []string{}
	for _, name := range []string{"GOCOVERDIR", "GORACE"} {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}
