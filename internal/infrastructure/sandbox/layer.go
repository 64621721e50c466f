package sandbox

import (
	"fmt"
	"slices"
	"strings"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// Layer names one OS enforcement mechanism. The names are what a policy's `require:` lists and
// what `awf doctor` and audit records show.
type Layer string

// The layers Enter can apply, in the order it applies them.
const (
	// LayerMountNS is a private mount namespace: the root read-only, the writable paths bound
	// read-write, protected paths bound read-only, secrets of /etc masked.
	LayerMountNS Layer = "mountns"
	// LayerPIDNS is a private pid namespace with its own /proc: the sandbox sees only its
	// processes, and all of them die with the helper (setsid ones included).
	LayerPIDNS Layer = "pidns"
	// LayerNetNS is an empty network namespace: no interface but a down loopback.
	LayerNetNS Layer = "netns"
	// LayerUserNS is a user namespace, which a non-root awf needs for the three above.
	LayerUserNS Layer = "userns"
	// LayerRlimits are resource limits: memory, processes, file size, open files, no core.
	LayerRlimits Layer = "rlimits"
	// LayerCgroup is a cgroup v2 with memory.max and pids.max, stricter than rlimits.
	LayerCgroup Layer = "cgroup"
	// LayerNoNewPrivs is PR_SET_NO_NEW_PRIVS: setuid binaries and file capabilities give
	// nothing.
	LayerNoNewPrivs Layer = "no-new-privs"
	// LayerUID is running as a non-root uid: 65534 (nobody) when awf is root.
	LayerUID Layer = "uid"
	// LayerLandlock is Landlock's file system rules.
	LayerLandlock Layer = "landlock"
	// LayerLandlockNet is Landlock's TCP bind and connect rules (ABI 4 and later).
	LayerLandlockNet Layer = "landlock-net"
	// LayerSeccomp is the seccomp filter: no UDP, raw or MPTCP sockets, no io_uring, no new
	// namespaces, no mounts, no ptrace, no TIOCSTI.
	LayerSeccomp Layer = "seccomp"
	// LayerSeatbelt is macOS's sandbox: a Seatbelt profile generated from the policy (read and
	// write paths, protected paths, network, exec allowlist), applied by sandbox-exec.
	LayerSeatbelt Layer = "seatbelt"
)

// Layers returns every layer a policy may name: Linux's, in the order Enter applies them,
// then macOS's.
func Layers() []Layer {
	return append(linuxLayers(), LayerSeatbelt)
}

// linuxLayers are the layers of Linux, in the order Enter applies them.
func linuxLayers() []Layer {
	return []Layer{
		LayerMountNS, LayerPIDNS, LayerNetNS, LayerUserNS, LayerRlimits, LayerCgroup,
		LayerNoNewPrivs, LayerUID, LayerLandlock, LayerLandlockNet, LayerSeccomp,
	}
}

// LayersOn returns the layers awf can apply on goos: Linux's on linux, Seatbelt on darwin,
// none elsewhere (Windows).
func LayersOn(goos string) []Layer {
	switch goos {
	case "linux":
		return linuxLayers()
	case "darwin":
		return []Layer{LayerSeatbelt}
	}
	return nil
}

// hints say how to get a layer a machine lacks; the refusal of a required layer quotes them.
var hints = map[Layer]string{
	LayerMountNS:     "run awf as root, or enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces>0; on Ubuntu also kernel.apparmor_restrict_unprivileged_userns=0)",
	LayerPIDNS:       "same as mountns: root, or unprivileged user namespaces",
	LayerNetNS:       "same as mountns: root, or unprivileged user namespaces",
	LayerUserNS:      "enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces>0; on Ubuntu kernel.apparmor_restrict_unprivileged_userns=0)",
	LayerRlimits:     "rlimits are always available on Linux",
	LayerCgroup:      "run awf in a cgroup v2 whose subtree has the memory and pids controllers delegated (systemd-run --user --scope -p Delegate=yes awf ...)",
	LayerNoNewPrivs:  "needs Linux 3.5 or later",
	LayerUID:         "run awf as root (it drops to uid 65534 through an idmapped mount) or as a non-root user",
	LayerLandlock:    "needs Linux 5.13+ built with CONFIG_SECURITY_LANDLOCK=y and landlock in the lsm= boot parameter (cat /sys/kernel/security/lsm)",
	LayerLandlockNet: "needs Landlock ABI 4 (Linux 6.7 or later)",
	LayerSeccomp:     "needs a kernel built with CONFIG_SECCOMP_FILTER=y on amd64 or arm64",
	LayerSeatbelt:    "macOS only: /usr/bin/sandbox-exec, part of every macOS since 10.5",
}

// Hint says how to get layer l on a machine that lacks it.
func Hint(l Layer) string { return hints[l] }

// ParseLayer checks a name from a policy's `require:` list. An unknown name is fault.Invalid
// with a did-you-mean hint.
func ParseLayer(name string) (Layer, error) {
	l := Layer(name)
	if slices.Contains(Layers(), l) {
		return l, nil
	}
	names := make([]string, 0, len(Layers()))
	for _, l := range Layers() {
		names = append(names, string(l))
	}
	msg := fmt.Sprintf("sandbox.require: unknown layer %q (known: %s)", name, strings.Join(names, ", "))
	if hint := workflow.DidYouMean(name, names); hint != "" {
		msg += ": " + hint
	}
	return "", fault.New(fault.Invalid, "%s", msg)
}

// MissingError is the refusal of a required layer this machine (or this configuration) does
// not provide. It is fault.Denied: the tool does not run.
type MissingError struct {
	Layer  Layer
	Reason string // what is missing, e.g. "kernel has Landlock ABI 0"
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("sandbox: required layer %s is not available: %s (to get it: %s)", e.Layer, e.Reason, Hint(e.Layer))
}

// FaultKind classifies the refusal as fault.Denied.
func (e *MissingError) FaultKind() fault.Kind { return fault.Denied }
