package durable

import (
	"debug/buildinfo"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
)

// helperProgram is the program a worker's sandboxed tool calls re-run as their helper, since
// awf-temporal is larger and slower to start (the Temporal SDK's package initialisation) and
// the helper needs none of it: awf beside awf-temporal (installed together, as make build
// builds them), else awf on PATH when it is the same build as this program; "" (this
// program) otherwise. Runner and helper share the sandbox specification's encoding, which
// only the same source is sure to share: a helper of another version could leave out a layer
// it does not know. Same build means the same module version, Go version and VCS revision,
// state and time, read from the binary without running it.
func helperProgram() string {
	p, err := cmdutil.FindProgram("awf")
	if err != nil {
		return ""
	}
	if self, err := os.Executable(); err == nil && filepath.Dir(self) == filepath.Dir(p) {
		return p
	}
	own, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	other, err := buildinfo.ReadFile(p)
	if err != nil || !sameBuild(own, other) {
		return ""
	}
	return p
}

// sameBuild reports whether a and b were built from the same source with the same Go: a
// build with no revision (outside version control) matches only a released module version.
func sameBuild(a, b *debug.BuildInfo) bool {
	if a.GoVersion != b.GoVersion || a.Main.Path != b.Main.Path || a.Main.Version != b.Main.Version {
		return false
	}
	for _, key := range []string{"vcs.revision", "vcs.time", "vcs.modified"} {
		if setting(a, key) != setting(b, key) {
			return false
		}
	}
	return setting(a, "vcs.revision") != "" || (a.Main.Version != "" && a.Main.Version != "(devel)")
}

func setting(bi *debug.BuildInfo, key string) string {
	for _, s := range bi.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}
