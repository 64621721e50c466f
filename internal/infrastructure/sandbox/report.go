package sandbox

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
)

// Report is what this machine can enforce, from Probe: the raw facts and, per layer, whether
// it is available and how to get it when it is not. `awf doctor` prints it (String, or JSON).
// Prepare decides from a Report; tests pass one changed by Without or AsUser to simulate a
// weaker machine.
type Report struct {
	OS     string `json:"os"`
	Arch   string `json:"arch"`
	Kernel string `json:"kernel,omitempty"`
	// UID is the effective uid awf runs as; Root is UID == 0.
	UID  int  `json:"uid"`
	Root bool `json:"root"`
	// LandlockABI is the kernel's Landlock ABI version; 0 means no Landlock.
	LandlockABI int `json:"landlock_abi"`
	// Seccomp says seccomp filters can be installed for this architecture.
	Seccomp bool `json:"seccomp"`
	// Seatbelt says /usr/bin/sandbox-exec applied a profile on this machine (macOS).
	Seatbelt bool `json:"seatbelt,omitempty"`
	// UserNS says this process can create a user namespace.
	UserNS bool `json:"user_namespaces"`
	// Namespaces says mount, pid and network namespaces can be created: as root, or inside a
	// new user namespace.
	Namespaces bool `json:"namespaces"`
	// IDMap says the kernel has idmapped mounts (5.12+); a file system that refuses them
	// makes the helper keep root without capabilities instead of dropping to 65534.
	IDMap  bool       `json:"idmapped_mounts"`
	Cgroup CgroupInfo `json:"cgroup"`
	// Layers is the verdict per layer, in Layers() order.
	Layers []LayerStatus `json:"layers"`
	// Simulated lists layers switched off by Without; Prepare passes them to the helper.
	Simulated []Layer `json:"simulated,omitempty"`
}

// CgroupInfo describes the cgroup v2 hierarchy awf is in.
type CgroupInfo struct {
	// Mount is where the cgroup v2 hierarchy is mounted; "" when there is none.
	Mount string `json:"mount,omitempty"`
	// Dir is awf's own cgroup directory.
	Dir string `json:"dir,omitempty"`
	// Controllers are those enabled for Dir's children (cgroup.subtree_control).
	Controllers []string `json:"controllers,omitempty"`
	// Usable says Dir is writable with the memory and pids controllers delegated: awf can
	// make a child cgroup per process.
	Usable bool   `json:"usable"`
	Detail string `json:"detail,omitempty"`
}

// LayerStatus is one layer's verdict.
type LayerStatus struct {
	Layer     Layer  `json:"layer"`
	Available bool   `json:"available"`
	Detail    string `json:"detail"`
	Hint      string `json:"hint,omitempty"`
}

// Available reports whether layer l is available.
func (r Report) Available(l Layer) bool {
	for _, s := range r.Layers {
		if s.Layer == l {
			return s.Available
		}
	}
	return false
}

// Status returns layer l's verdict.
func (r Report) Status(l Layer) LayerStatus {
	for _, s := range r.Layers {
		if s.Layer == l {
			return s
		}
	}
	return LayerStatus{Layer: l, Detail: "unknown layer"}
}

// Without returns a copy of r in which the given layers are unavailable, as on a machine
// without them, with what depends on them: no user namespaces means no namespaces for a
// non-root user and no uid drop for root (idmapped mounts need one); no mount namespace
// means no uid drop either.
func (r Report) Without(layers ...Layer) Report {
	r.Simulated = slices.Clone(r.Simulated)
	for _, l := range layers {
		if !slices.Contains(r.Simulated, l) {
			r.Simulated = append(r.Simulated, l)
		}
		switch l {
		case LayerLandlock:
			r.LandlockABI = 0
		case LayerLandlockNet:
			r.LandlockABI = min(r.LandlockABI, 3)
		case LayerSeccomp:
			r.Seccomp = false
		case LayerUserNS:
			r.UserNS = false
			if !r.Root {
				r.Namespaces = false
			}
		case LayerCgroup:
			r.Cgroup.Usable = false
			r.Cgroup.Detail = "simulated: switched off"
		case LayerSeatbelt:
			r.Seatbelt = false
		}
	}
	r.Layers = r.verdicts()
	return r
}

// AsUser returns a copy of r for awf running as the non-root uid: Prepare then starts the
// helper as that uid, inside a user namespace when r has them. Only root can simulate this.
func (r Report) AsUser(uid int) Report {
	r.UID, r.Root = uid, uid == 0
	if !r.Root && !r.UserNS {
		r.Namespaces = false
	}
	r.Layers = r.verdicts()
	return r
}

// verdicts derives the per-layer verdicts from the facts.
func (r Report) verdicts() []LayerStatus {
	linux := r.OS == "linux"
	off := func(l Layer) bool { return slices.Contains(r.Simulated, l) }
	ns := r.Namespaces
	nsDetail := "root: created with clone flags"
	if !r.Root {
		nsDetail = "inside a new user namespace"
	}
	if !ns {
		nsDetail = "cannot create namespaces (not root, no user namespaces)"
	}
	uidOK, uidDetail := true, fmt.Sprintf("runs as uid %d (not root)", r.UID)
	if r.Root {
		uidOK = ns && r.UserNS && r.IDMap && !off(LayerMountNS)
		uidDetail = "drops to uid 65534; writable paths through an idmapped mount"
		if !uidOK {
			uidDetail = "stays root without capabilities: idmapped mounts need a mount namespace, a user namespace and Linux 5.12"
		}
	}
	status := []struct {
		l      Layer
		ok     bool
		detail string
	}{
		{LayerMountNS, ns && !off(LayerMountNS), nsDetail},
		{LayerPIDNS, ns && !off(LayerPIDNS), nsDetail},
		{LayerNetNS, ns && !off(LayerNetNS), nsDetail},
		{LayerUserNS, r.UserNS, map[bool]string{true: "can create user namespaces", false: "cannot create user namespaces"}[r.UserNS]},
		{LayerRlimits, linux, "RLIMIT_DATA, RLIMIT_NPROC (non-root uid only), RLIMIT_FSIZE, RLIMIT_NOFILE, RLIMIT_CORE=0"},
		{LayerCgroup, r.Cgroup.Usable, r.Cgroup.Detail},
		{LayerNoNewPrivs, linux, "prctl(PR_SET_NO_NEW_PRIVS)"},
		{LayerUID, uidOK && !off(LayerUID), uidDetail},
		{LayerLandlock, r.LandlockABI >= 1, fmt.Sprintf("Landlock ABI %d", r.LandlockABI)},
		{LayerLandlockNet, r.LandlockABI >= 4, fmt.Sprintf("Landlock ABI %d (TCP rules need 4)", r.LandlockABI)},
		{LayerSeccomp, r.Seccomp, map[bool]string{true: "seccomp filter for " + r.Arch, false: "no seccomp filter for " + r.Arch}[r.Seccomp]},
		{LayerSeatbelt, r.Seatbelt, map[bool]string{true: "sandbox-exec with a profile generated from the policy",
			false: "sandbox-exec did not apply a test profile"}[r.Seatbelt]},
	}
	out := make([]LayerStatus, 0, len(status))
	for _, s := range status {
		if !slices.Contains(LayersOn(r.OS), s.l) {
			continue
		}
		ls := LayerStatus{Layer: s.l, Available: s.ok, Detail: s.detail}
		if off(s.l) {
			ls.Available, ls.Detail = false, "simulated: switched off"
		}
		if !ls.Available {
			ls.Hint = Hint(s.l)
		}
		out = append(out, ls)
	}
	return out
}

// String renders the report as a table for `awf doctor`.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sandbox on %s/%s, kernel %s, uid %d\n", r.OS, r.Arch, r.Kernel, r.UID)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LAYER\tSTATUS\tDETAIL")
	for _, s := range r.Layers {
		state := "yes"
		if !s.Available {
			state = "NO"
		}
		detail := s.Detail
		if s.Hint != "" {
			detail += "; to get it: " + s.Hint
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Layer, state, detail)
	}
	tw.Flush()
	b.WriteString(r.verdict())
	return b.String()
}

// verdict is the report's last line: what the missing layers mean for a run, or that none is.
func (r Report) verdict() string {
	var missing []string
	for _, s := range r.Layers {
		if !s.Available {
			missing = append(missing, string(s.Layer))
		}
	}
	if len(r.Layers) == 0 {
		return fmt.Sprintf("awf has no OS layer on %s: tool processes run under the call gate and the tools' own checks only (L0, L1). A workflow that lists a layer in sandbox.require, or sets enforce: strict, refuses its tools on this machine.\n", r.OS)
	}
	if len(missing) == 0 {
		return "every layer is available: tool processes run under all of them\n"
	}
	return fmt.Sprintf("missing: %s. Tools still run under the other layers; a workflow that lists a missing layer in sandbox.require, or sets enforce: strict, refuses its tools on this machine.\n",
		strings.Join(missing, ", "))
}
