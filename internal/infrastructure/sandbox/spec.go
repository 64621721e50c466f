package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// SpecVersion is the version of the Spec encoding; Decode refuses any other.
const SpecVersion = 1

// NetworkMode says what network a process gets.
type NetworkMode string

// Network modes.
const (
	// NetworkNone is no network at all: an empty network namespace, Landlock denying every
	// TCP bind and connect, seccomp denying UDP. The default.
	NetworkNone NetworkMode = "none"
	// NetworkAllowlist is TCP to the awf-side filtering proxy only (Network.ProxyPort), which
	// lets through the allowed hosts. Without a proxy port it is NetworkNone.
	NetworkAllowlist NetworkMode = "allowlist"
	// NetworkHost is the host's network, unfiltered: a policy's explicit choice.
	NetworkHost NetworkMode = "host"
)

// Spec is a compiled sandbox policy for the processes of one tool (or shell step): absolute
// paths, the command allowlist, network, limits and which layers are mandatory. It travels as
// JSON from awf to its process helper (Encode, DecodeSpec); Prepare fills its Plan.
type Spec struct {
	Version int `json:"version"`
	// Dir is the working directory, absolute.
	Dir string `json:"dir"`
	// Read and Write are absolute paths (directories or files) a process may read, or read
	// and write, with everything beneath. Write implies read. System directories are in Read.
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
	// Protect are absolute glob patterns (filepath.Match syntax) of paths never writable,
	// even inside Write: they are bound read-only when the helper starts.
	Protect []string `json:"protect,omitempty"`
	// Visible are protected paths that stay readable (bound read-only, not hidden):
	// .git/hooks when the policy lets git run hooks (git_hooks: true).
	Visible []string `json:"visible,omitempty"`
	// Commands is the command allowlist (sandbox/cmdcheck) when RestrictCommands is set;
	// RestrictCommands with no Commands allows no command at all.
	Commands         []string `json:"commands,omitempty"`
	RestrictCommands bool     `json:"restrict_commands,omitempty"`
	// ExecAllowlist makes the kernel enforce Commands (`exec: allowlist`): processes may
	// execute only the allowed programs and what they need to start (ResolveExec); it
	// requires Landlock, the mount namespace and seccomp.
	ExecAllowlist bool    `json:"exec_allowlist,omitempty"`
	Network       Network `json:"network"`
	Limits        Limits  `json:"limits"`
	Env           Env     `json:"env"`
	// Strict makes every applicable layer mandatory (`enforce: strict`).
	Strict bool `json:"strict,omitempty"`
	// Require lists the layers that must be applied, or the tool does not run.
	Require []Layer `json:"require,omitempty"`
	// Unavailable lists layers to treat as missing on this machine: tests and `awf doctor`
	// use it to show what a weaker machine would do. Compile never sets it.
	Unavailable []Layer `json:"unavailable,omitempty"`
	// Plan is what Prepare decided for one helper; nil before Prepare.
	Plan *Plan `json:"plan,omitempty"`
	// Executable is what an exec allowlist lets processes execute, resolved in the helper
	// (Helper.Setup, ResolveExec) before Enter; never on the wire.
	Executable *ExecSet `json:"-"`
}

// Network is the network part of a Spec.
type Network struct {
	Mode NetworkMode `json:"mode"`
	// Hosts are the host patterns the proxy lets through (NetworkAllowlist).
	Hosts []string `json:"hosts,omitempty"`
	// ProxyPort is the loopback TCP port of the awf-side filtering proxy; set by whoever runs
	// the proxy, before Prepare. The only port a process may connect to in NetworkAllowlist.
	ProxyPort int `json:"proxy_port,omitempty"`
}

// Resources whose limit can stop a sandboxed script, as LimitReached and the process helper
// name them.
const (
	ResourceMemory = "memory"
	ResourcePIDs   = "pids"
)

// Limits are the resource limits of a Spec; zero means none (NoFile: DefaultNoFile).
type Limits struct {
	// Memory caps the private writable memory of each process (RLIMIT_DATA), or of the
	// whole sandbox (memory.max) in a cgroup. Bytes.
	Memory int64 `json:"memory,omitempty"`
	// PIDs caps the processes and threads (RLIMIT_NPROC for a non-root uid, or pids.max).
	PIDs int `json:"pids,omitempty"`
	// FileSize caps the size of any file a process writes (RLIMIT_FSIZE). Bytes.
	FileSize int64 `json:"file_size,omitempty"`
	// NoFile caps open descriptors per process (RLIMIT_NOFILE).
	NoFile int `json:"nofile,omitempty"`
	// CPU is a number of cores (cpu.max in a cgroup; no rlimit equivalent).
	CPU float64 `json:"cpu,omitempty"`
}

// Env is the environment policy: which of awf's variables a process sees, and fixed ones.
type Env struct {
	Allow []string          `json:"allow,omitempty"`
	Set   map[string]string `json:"set,omitempty"`
}

// Plan is what Prepare decided for one helper process and what Enter must then do.
type Plan struct {
	// Namespaces the helper is created in (mountns, pidns, netns, userns).
	Namespaces []Layer `json:"namespaces,omitempty"`
	// Root says the helper starts as root in the initial user namespace.
	Root bool `json:"root,omitempty"`
	// DropUID is the uid (and gid) the helper switches to before running the script when it
	// starts as root; -1 means it keeps its uid.
	DropUID int `json:"drop_uid"`
	// IDMap asks for the writable paths to be bound through an idmapped mount that shows
	// their owner as DropUID, so that the dropped uid can write them and files it creates
	// belong to the owner on disk.
	IDMap bool `json:"idmap,omitempty"`
	// IDMaps are the user namespaces for the idmapped mounts, passed as descriptors.
	IDMaps []IDMap `json:"idmaps,omitempty"`
	// TempDir is the private temporary directory ($TMPDIR and $HOME of the script).
	TempDir string `json:"temp_dir"`
	// Cgroup is the cgroup v2 directory the helper was started in; "" when none.
	Cgroup string `json:"cgroup,omitempty"`
	// Seatbelt says the helper was started through sandbox-exec with the Seatbelt profile of
	// this spec (macOS): the profile is in force before the helper's first instruction.
	Seatbelt bool `json:"seatbelt,omitempty"`
	// Protected are the existing paths that match the spec's Protect patterns, found by
	// the parent (ProtectIndex.Matches) just before the helper starts; the helper hides them.
	Protected []string `json:"protected,omitempty"`
	// ProtectTruncated says the search for them stopped at maxProtectWalk entries.
	ProtectTruncated bool `json:"protect_truncated,omitempty"`
}

// IDMap is a user namespace, passed to the helper as an open descriptor, whose mapping makes
// files owned by UID:GID on disk appear owned by the dropped uid through an idmapped mount.
type IDMap struct {
	UID int `json:"uid"`
	GID int `json:"gid"`
	// FD is the descriptor the helper inherits it on (Launch.ExtraFiles).
	FD int `json:"fd"`
}

// Encode returns the JSON encoding of s.
func (s *Spec) Encode() ([]byte, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode sandbox spec: %w", err)
	}
	return data, nil
}

// DecodeSpec reads a Spec encoded by Encode: unknown fields, another version or an invalid
// spec are errors.
func DecodeSpec(data []byte) (*Spec, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Spec
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("decode sandbox spec: %w", err)
	}
	if s.Version != SpecVersion {
		return nil, fmt.Errorf("decode sandbox spec: version %d, want %d", s.Version, SpecVersion)
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("decode sandbox spec: %w", err)
	}
	return &s, nil
}

// Validate checks what Enter relies on: absolute clean paths and known names.
func (s *Spec) Validate() error {
	if err := checkAbs("dir", s.Dir); err != nil {
		return err
	}
	for _, list := range []struct {
		name  string
		paths []string
	}{{"read", s.Read}, {"write", s.Write}, {"protect", s.Protect}, {"visible", s.Visible}} {
		for _, p := range list.paths {
			if err := checkAbs(list.name, p); err != nil {
				return err
			}
		}
	}
	switch s.Network.Mode {
	case NetworkNone, NetworkAllowlist, NetworkHost:
	default:
		return fmt.Errorf("network mode %q: want none, allowlist or host", s.Network.Mode)
	}
	if s.Network.ProxyPort < 0 || s.Network.ProxyPort > 65535 {
		return fmt.Errorf("proxy port %d out of range", s.Network.ProxyPort)
	}
	for _, ls := range [][]Layer{s.Require, s.Unavailable} {
		for _, l := range ls {
			if _, err := ParseLayer(string(l)); err != nil {
				return err
			}
		}
	}
	if p := s.Plan; p != nil && p.TempDir != "" {
		if err := checkAbs("temp dir", p.TempDir); err != nil {
			return err
		}
	}
	if p := s.Plan; p != nil {
		for _, path := range p.Protected {
			if err := checkAbs("protected", path); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkAbs(what, p string) error {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p || strings.ContainsRune(p, 0) {
		return fmt.Errorf("%s path %q: must be absolute and clean", what, p)
	}
	return nil
}

// Required returns the layers that must be applied on this machine's OS (RequiredOn).
func (s *Spec) Required() []Layer { return s.RequiredOn(runtime.GOOS) }

// RequiredOn returns the layers that must be applied on goos: Require, and what the exec
// allowlist and `enforce: strict` need there. On Linux an exec allowlist needs Landlock, the
// mount namespace and seccomp, and strict every layer that applies to this spec (netns and
// landlock-net by network mode; userns and cgroup only when listed, as they are means rather
// than protections). On macOS both need Seatbelt. Elsewhere, where awf has no OS layer,
// they need the Linux set, which is missing: the tool is refused.
func (s *Spec) RequiredOn(goos string) []Layer {
	req := slices.Clone(s.Require)
	if goos == "darwin" {
		if s.ExecAllowlist || s.Strict {
			req = append(req, LayerSeatbelt)
		}
		slices.Sort(req)
		return slices.Compact(req)
	}
	if s.ExecAllowlist {
		// Landlock's execute right; noexec mounts against the loader; no memfd_create.
		req = append(req, LayerLandlock, LayerMountNS, LayerSeccomp)
	}
	if s.Strict {
		req = append(req, LayerMountNS, LayerPIDNS, LayerRlimits, LayerNoNewPrivs, LayerUID,
			LayerLandlock, LayerSeccomp)
		switch s.Network.Mode {
		case NetworkNone:
			req = append(req, LayerNetNS)
		case NetworkAllowlist:
			req = append(req, LayerLandlockNet)
		}
	}
	slices.Sort(req)
	return slices.Compact(req)
}

// requires reports whether l is mandatory.
func (s *Spec) requires(l Layer) bool { return slices.Contains(s.Required(), l) }

// unavailable reports whether l is simulated as missing.
func (s *Spec) unavailable(l Layer) bool { return slices.Contains(s.Unavailable, l) }

// minimalEnv are the variables of awf's environment every process sees, besides Env.Allow.
var minimalEnv = []string{"PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM"}

// BaseEnv filters awf's environment (K=V entries) for a process: the minimal variables
// (PATH, LANG, LC_*, TZ, TERM) and Env.Allow pass, then Env.Set is applied. The process
// runner calls it for the environment a script starts from; variables the request sets
// explicitly go on top.
func (s *Spec) BaseEnv(environ []string) []string {
	keep := append(slices.Clone(minimalEnv), s.Env.Allow...)
	out := make([]string, 0, len(keep)+len(s.Env.Set))
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if ok && slices.Contains(keep, name) {
			if _, set := s.Env.Set[name]; !set {
				out = append(out, kv)
			}
		}
	}
	names := make([]string, 0, len(s.Env.Set))
	for name := range s.Env.Set {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		out = append(out, name+"="+s.Env.Set[name])
	}
	return out
}

// Environ adjusts a script's environment inside the helper: HOME, TMPDIR, TMP and TEMP point
// to the private temporary directory (awf's own home is neither readable nor writable there),
// and with a network allowlist the proxy variables point to the filtering proxy. Without a
// Plan it returns env unchanged.
func (s *Spec) Environ(env []string) []string {
	if s.Plan == nil || s.Plan.TempDir == "" {
		return env
	}
	var set []string
	for _, name := range []string{"HOME", "TMPDIR", "TMP", "TEMP"} {
		set = append(set, name+"="+s.Plan.TempDir)
	}
	if n := s.Network; n.Mode == NetworkAllowlist && n.ProxyPort > 0 {
		proxy := fmt.Sprintf("http://127.0.0.1:%d", n.ProxyPort)
		for _, name := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"} {
			set = append(set, name+"="+proxy, strings.ToLower(name)+"="+proxy)
		}
	}
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.ContainsFunc(set, func(s string) bool { return strings.HasPrefix(s, name+"=") }) {
			out = append(out, kv)
		}
	}
	return append(out, set...)
}
