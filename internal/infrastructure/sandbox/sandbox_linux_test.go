//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/google/go-cmp/cmp"
)

// fullReport is a machine with every layer, so that Prepare's decisions can be tested
// whatever this machine is.
func fullReport(uid int) Report {
	r := Report{OS: "linux", Arch: "amd64", UID: uid, Root: uid == 0, LandlockABI: 7, Seccomp: true,
		UserNS: true, Namespaces: true, IDMap: true}
	r.Layers = r.verdicts()
	return r
}

func TestReport(t *testing.T) {
	full := fullReport(0)
	for _, l := range LayersOn("linux") {
		if want := l != LayerCgroup; full.Available(l) != want {
			t.Errorf("full report: Available(%s) = %v, want %v", l, full.Available(l), want)
		}
	}
	tests := []struct {
		name    string
		r       Report
		missing []Layer
	}{
		{"no landlock", full.Without(LayerLandlock), []Layer{LayerLandlock, LayerLandlockNet}},
		{"old landlock", full.Without(LayerLandlockNet), []Layer{LayerLandlockNet}},
		{"root without user namespaces keeps namespaces, loses the uid drop", full.Without(LayerUserNS), []Layer{LayerUserNS, LayerUID}},
		{"root without a mount namespace loses the uid drop", full.Without(LayerMountNS), []Layer{LayerMountNS, LayerUID}},
		{"non-root", full.AsUser(1000), nil},
		{"non-root without user namespaces", full.AsUser(1000).Without(LayerUserNS), []Layer{LayerMountNS, LayerPIDNS, LayerNetNS, LayerUserNS}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var missing []Layer
			for _, s := range tc.r.Layers {
				if !s.Available && s.Layer != LayerCgroup {
					missing = append(missing, s.Layer)
					if s.Hint == "" {
						t.Errorf("%s unavailable without a hint", s.Layer)
					}
				}
			}
			if diff := cmp.Diff(tc.missing, missing); diff != "" {
				t.Errorf("missing layers (-want +got):\n%s", diff)
			}
		})
	}
	text := full.Without(LayerSeccomp).String()
	for _, want := range []string{"LAYER", "landlock      yes", "seccomp       NO", "simulated: switched off; to get it:"} {
		if !strings.Contains(text, want) {
			t.Errorf("Report.String() lacks %q:\n%s", want, text)
		}
	}
	data, err := json.Marshal(full)
	if err != nil || !strings.Contains(string(data), `"landlock_abi":7`) || !strings.Contains(string(data), `"layers":[{"layer":"mountns","available":true`) {
		t.Errorf("Report JSON = %s, %v", data, err)
	}
}

func TestProbeThisMachine(t *testing.T) {
	r := Probe()
	if r.OS != "linux" || len(r.Layers) != len(LayersOn("linux")) || r.UID != os.Geteuid() {
		t.Fatalf("Probe() = %+v", r)
	}
	if !r.Available(LayerRlimits) || !r.Available(LayerNoNewPrivs) {
		t.Errorf("Probe(): rlimits and no-new-privs are always available on Linux:\n%s", r)
	}
}

func TestPrepare(t *testing.T) {
	ns := uintptr(syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC | syscall.CLONE_NEWPID)
	tests := []struct {
		name    string
		rep     Report
		network Network
		flags   uintptr
		dropUID int
		layers  []Layer
	}{
		{name: "root", rep: fullReport(0), flags: ns | syscall.CLONE_NEWNET, dropUID: NobodyUID,
			layers: []Layer{LayerMountNS, LayerPIDNS, LayerNetNS, LayerRlimits, LayerNoNewPrivs, LayerUID, LayerLandlock, LayerLandlockNet, LayerSeccomp}},
		{name: "root, host network", rep: fullReport(0), network: Network{Mode: NetworkHost}, flags: ns, dropUID: NobodyUID,
			layers: []Layer{LayerMountNS, LayerPIDNS, LayerRlimits, LayerNoNewPrivs, LayerUID, LayerLandlock, LayerSeccomp}},
		{name: "root, proxy", rep: fullReport(0), network: Network{Mode: NetworkAllowlist, Hosts: []string{"x"}, ProxyPort: 3128}, flags: ns, dropUID: NobodyUID,
			layers: []Layer{LayerMountNS, LayerPIDNS, LayerRlimits, LayerNoNewPrivs, LayerUID, LayerLandlock, LayerLandlockNet, LayerSeccomp}},
		{name: "root, allowlist without a proxy is no network", rep: fullReport(0), network: Network{Mode: NetworkAllowlist, Hosts: []string{"x"}}, flags: ns | syscall.CLONE_NEWNET, dropUID: NobodyUID,
			layers: []Layer{LayerMountNS, LayerPIDNS, LayerNetNS, LayerRlimits, LayerNoNewPrivs, LayerUID, LayerLandlock, LayerLandlockNet, LayerSeccomp}},
		{name: "root without user namespaces", rep: fullReport(0).Without(LayerUserNS), flags: ns | syscall.CLONE_NEWNET, dropUID: -1,
			layers: []Layer{LayerMountNS, LayerPIDNS, LayerNetNS, LayerRlimits, LayerNoNewPrivs, LayerLandlock, LayerLandlockNet, LayerSeccomp}},
		{name: "non-root", rep: fullReport(0).AsUser(NobodyUID), flags: ns | syscall.CLONE_NEWNET | syscall.CLONE_NEWUSER, dropUID: -1,
			layers: []Layer{LayerMountNS, LayerPIDNS, LayerNetNS, LayerUserNS, LayerRlimits, LayerNoNewPrivs, LayerUID, LayerLandlock, LayerLandlockNet, LayerSeccomp}},
		{name: "non-root without user namespaces", rep: fullReport(0).AsUser(NobodyUID).Without(LayerUserNS), dropUID: -1,
			layers: []Layer{LayerRlimits, LayerNoNewPrivs, LayerUID, LayerLandlock, LayerLandlockNet, LayerSeccomp}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if os.Geteuid() != 0 && !tc.rep.Root {
				t.Skip("simulating a user needs root")
			}
			spec, err := Compile(nil, nil, Context{Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if tc.network.Mode != "" {
				spec.Network = tc.network
			}
			l, err := Prepare(spec, tc.rep)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if got := l.SysProcAttr.Cloneflags; got != tc.flags {
				t.Errorf("Cloneflags = %#x, want %#x", got, tc.flags)
			}
			if l.Spec.Plan.DropUID != tc.dropUID || l.Spec.Plan.IDMap != (tc.dropUID >= 0) {
				t.Errorf("Plan = %+v, want DropUID %d", l.Spec.Plan, tc.dropUID)
			}
			if diff := cmp.Diff(tc.layers, l.Expected.Layers); diff != "" {
				t.Errorf("Expected layers (-want +got):\n%s", diff)
			}
			if l.SysProcAttr.Pdeathsig != syscall.SIGKILL {
				t.Error("no parent-death signal: the helper would outlive a killed awf")
			}
			fi, err := os.Stat(l.Spec.Plan.TempDir)
			if err != nil || fi.Mode().Perm() != 0o700 {
				t.Fatalf("temp dir %s: %v, %v", l.Spec.Plan.TempDir, fi, err)
			}
			owner := int(fi.Sys().(*syscall.Stat_t).Uid)
			if want := scriptUID(tc.rep, tc.dropUID); owner != want {
				t.Errorf("temp dir owner = %d, want %d", owner, want)
			}
			if spec.Plan != nil {
				t.Error("Prepare changed the caller's spec")
			}
			l.Close()
			if _, err := os.Stat(l.Spec.Plan.TempDir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("Close left the temp dir: %v", err)
			}
		})
	}
}

func scriptUID(rep Report, drop int) int {
	if drop >= 0 {
		return drop
	}
	return rep.UID
}

func TestPrepareFailsClosed(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Spec)
		rep     Report
		missing Layer
	}{
		{"required landlock", func(s *Spec) { s.Require = []Layer{LayerLandlock} }, fullReport(0).Without(LayerLandlock), LayerLandlock},
		{"strict without seccomp", func(s *Spec) { s.Strict = true }, fullReport(0).Without(LayerSeccomp), LayerSeccomp},
		{"strict without network namespaces", func(s *Spec) { s.Strict = true }, fullReport(0).Without(LayerNetNS), LayerNetNS},
		{"strict, proxy network needs landlock-net", func(s *Spec) {
			s.Strict, s.Network = true, Network{Mode: NetworkAllowlist, Hosts: []string{"x"}, ProxyPort: 1}
		}, fullReport(0).Without(LayerLandlockNet), LayerLandlockNet},
		{"strict root needs the uid drop", func(s *Spec) { s.Strict = true }, fullReport(0).Without(LayerUserNS), LayerUID},
		{"required cgroup", func(s *Spec) { s.Require = []Layer{LayerCgroup} }, fullReport(0), LayerCgroup},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec, _ := Compile(nil, nil, Context{Dir: t.TempDir()})
			tc.mutate(spec)
			_, err := Prepare(spec, tc.rep)
			me, ok := errors.AsType[*MissingError](err)
			if !ok || me.Layer != tc.missing {
				t.Fatalf("Prepare = %v, want a missing %s", err, tc.missing)
			}
			if fault.KindOf(err) != fault.Denied || !strings.Contains(err.Error(), "to get it:") {
				t.Errorf("Prepare error %q (%v): want denied, with how to get it", err, fault.KindOf(err))
			}
		})
	}
}

// sandboxedScript runs script under the real machine's layers in a fresh world.
func sandboxedScript(t *testing.T, spec *Spec, rep Report, script string) result {
	t.Helper()
	return runSandboxed(t, spec, rep, script, []string{"PATH=/usr/bin:/bin", "LANG=C"}, 20*time.Second)
}

func requireRoot(t *testing.T) Report {
	t.Helper()
	rep := Probe()
	if !rep.Root || !rep.Available(LayerUID) || !rep.Available(LayerLandlock) {
		t.Skip("needs root with namespaces, idmapped mounts and Landlock")
	}
	return rep
}

func TestEnterFailsClosedInTheHelper(t *testing.T) {
	rep := Probe()
	ws := worldDir(t)
	spec, _ := Compile(nil, nil, Context{Dir: ws})
	l, err := Prepare(spec, rep)
	must(t, err)
	defer l.Close()
	// Only the helper learns that seccomp is missing, as on a kernel that lied to the probe.
	l.Spec.Require = []Layer{LayerSeccomp}
	l.Spec.Unavailable = []Layer{LayerSeccomp}
	res := runLaunch(t, l, "echo ran > ran", []string{"PATH=/usr/bin:/bin"}, 20*time.Second)
	if res.status != 125 || !strings.Contains(res.setupErr, "required layer seccomp is not available") {
		t.Errorf("status %d, setup error %q; want 125 and a refusal naming seccomp", res.status, res.setupErr)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
		t.Error("the script ran although a required layer was missing")
	}
}

// worldDir makes a directory every uid can reach, removed after the test.
func worldDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "awf-world-")
	must(t, err)
	must(t, os.Chmod(dir, 0o755))
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestClosedAncestor(t *testing.T) {
	rep := requireRoot(t)
	// The workspace under a directory uid 65534 cannot enter, as /root/project would be.
	private := t.TempDir() // mode 0700, owned by root
	ws := filepath.Join(private, "a", "ws")
	must(t, os.MkdirAll(ws, 0o700))
	write(t, filepath.Join(private, "a", "sibling-secret"), secretText, 0o644)
	spec, _ := Compile(nil, nil, Context{Dir: ws})
	// Landlock does not cover stat: only the covering tmpfs hides the sibling.
	sibling := filepath.Join(private, "a", "sibling-secret")
	res := sandboxedScript(t, spec, rep, `echo made > out && cat out && id -u && if [ -e `+sibling+` ]; then echo visible; else echo hidden; fi`)
	if want := "made\n65534\nhidden\n"; res.stdout != want {
		t.Errorf("stdout = %q, want %q: the write works as uid 65534, the rest of the closed directory is hidden\nstderr: %s", res.stdout, want, res.stderr)
	}
	st, err := os.Stat(filepath.Join(ws, "out"))
	if err != nil || st.Sys().(*syscall.Stat_t).Uid != 0 {
		t.Errorf("out: %v; want it on disk, owned by the workspace owner (root)", err)
	}
}

func TestProtectedPaths(t *testing.T) {
	rep := requireRoot(t)
	ws := worldDir(t)
	for _, d := range []string{".git/hooks", ".awf/state", "sub", "svc/deep", "keys/a"} {
		must(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	files := map[string]string{
		".git/config": "[core]\n", ".git/hooks/pre-commit": "#!/bin/sh\n", ".awf/state/x": "state\n",
		".env": "TOKEN=1\n", ".env.local": "A=1\n", "svc/deep/.ENV.prod": "B=2\n", "secrets.txt": "s\n",
		"keys/a/id.pem": "pem\n",
	}
	for f, content := range files {
		write(t, filepath.Join(ws, f), content, 0o644)
	}
	spec, _ := Compile(&workflow.Policy{Paths: workflow.PathPolicy{Protect: []string{"secrets.txt", "keys/**/*.pem"}}}, nil, Context{Dir: ws})
	script := `
for f in .git/hooks/pre-commit .git/hooks/post-checkout .git/config .awf/state/x .env .env.local svc/deep/.ENV.prod secrets.txt keys/a/id.pem; do
	if echo evil >> $f; then echo "wrote $f"; fi
	if [ -s $f ]; then echo "read $f: $(cat $f)"; fi
done
ls -A .awf .git/hooks
mv .git .g && echo "moved .git"
rm -rf .awf && echo "removed .awf"
echo ok > sub/fine && echo "wrote sub/fine"
echo ok > .git/ORIG_HEAD && echo "wrote .git/ORIG_HEAD"
`
	res := sandboxedScript(t, spec, rep, script)
	if want := ".awf:\n\n.git/hooks:\nwrote sub/fine\nwrote .git/ORIG_HEAD\n"; res.stdout != want {
		t.Errorf("stdout = %q, want %q: every protected path hidden (empty) and read-only\nstderr: %s", res.stdout, want, res.stderr)
	}
	for f, content := range files {
		if data, _ := os.ReadFile(filepath.Join(ws, f)); string(data) != content {
			t.Errorf("%s changed: %q", f, data)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, ".git", "hooks", "post-checkout")); err == nil {
		t.Error("a new hook was created")
	}

	// With git_hooks: true the hooks stay readable (git runs them), still read-only.
	spec, _ = Compile(&workflow.Policy{GitHooks: true}, nil, Context{Dir: ws})
	res = sandboxedScript(t, spec, rep, "cat .git/hooks/pre-commit; echo evil >> .git/hooks/pre-commit || echo refused; cat .env")
	if want := "#!/bin/sh\nrefused\n"; res.stdout != want {
		t.Errorf("git_hooks: true: stdout = %q, want %q (hooks readable, read-only; .env hidden)\nstderr: %s", res.stdout, want, res.stderr)
	}
}

func TestNetworkAllowlistThroughProxy(t *testing.T) {
	rep := requireRoot(t)
	if !rep.Available(LayerLandlockNet) {
		t.Skip("needs Landlock ABI 4")
	}
	base := worldDir(t)
	attacker := copyAttacker(t, base)
	proxy, other := listenTCP(t), listenTCP(t)
	spec, _ := Compile(nil, nil, Context{Dir: base})
	spec.Read = append(spec.Read, filepath.Dir(attacker))
	spec.Network = Network{Mode: NetworkAllowlist, Hosts: []string{"example.org"}, ProxyPort: proxy.port}
	script := "echo $HTTPS_PROXY; " + attacker + " attack tcp 127.0.0.1:" + strconv.Itoa(proxy.port) + "; " +
		attacker + " attack tcp 127.0.0.1:" + strconv.Itoa(other.port) + "; " + attacker + " attack udp 127.0.0.1:53"
	res := sandboxedScript(t, spec, rep, script)
	want := "http://127.0.0.1:" + strconv.Itoa(proxy.port) + "\nok\nEACCES\nEPERM\n"
	if res.stdout != want {
		t.Errorf("stdout = %q, want %q (proxy reachable, other ports and UDP not)\nstderr: %s", res.stdout, want, res.stderr)
	}
	if other.received() {
		t.Error("a port other than the proxy's was reached")
	}
}

func TestHelperAppliedRecord(t *testing.T) {
	rep := requireRoot(t)
	spec, _ := Compile(nil, nil, Context{Dir: worldDir(t)})
	res := sandboxedScript(t, spec, rep, "true")
	if res.applied == nil {
		t.Fatalf("no applied record; stderr: %s", res.stderr)
	}
	l, err := Prepare(spec, rep)
	must(t, err)
	defer l.Close()
	if diff := cmp.Diff(l.Expected.Layers, res.applied.Layers); diff != "" {
		t.Errorf("helper applied other layers than Prepare expected (-expected +applied):\n%s", diff)
	}
	if res.applied.UID != NobodyUID || res.applied.LandlockABI != rep.LandlockABI || res.applied.Backend != "clone" {
		t.Errorf("applied = %+v", res.applied)
	}
	if !strings.HasPrefix(res.applied.String(), "clone: mountns pidns netns rlimits") {
		t.Errorf("Applied.String() = %q", res.applied.String())
	}
}

func TestCommandsAllowlistInTheHelper(t *testing.T) {
	rep := requireRoot(t)
	ws := worldDir(t)
	spec, _ := Compile(nil, nil, Context{Dir: ws})
	spec.Commands, spec.RestrictCommands = []string{"cat", "ls"}, true
	// A program planted in the writable workspace under an allowed name is not trusted,
	// even when the script puts the workspace first in PATH.
	must(t, os.Mkdir(filepath.Join(ws, "bin"), 0o755))
	write(t, filepath.Join(ws, "bin", "cat"), "#!/bin/sh\necho planted\n", 0o755)
	res := sandboxedScript(t, spec, rep, "ls / >/dev/null; cat /dev/null && echo cat-ok; PATH=$PWD/bin:$PATH cat /dev/null; x=id; $x")
	if res.stdout != "cat-ok\n" {
		t.Errorf("stdout = %q, want only cat-ok\nstderr: %s", res.stdout, res.stderr)
	}
	for _, rule := range []string{"(rule untrusted-path)", `command "id" refused (rule sandbox.commands)`} {
		if !strings.Contains(res.stderr, rule) {
			t.Errorf("stderr lacks %q:\n%s", rule, res.stderr)
		}
	}
	if res.status != 126 {
		t.Errorf("status = %d, want 126 (the last command was refused)", res.status)
	}
}

func TestCreateCgroup(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "awf-1")
	cg, err := createCgroup(dir, Limits{Memory: 1 << 20, PIDs: 10, CPU: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(cg.fd)
	want := map[string]string{"memory.max": "1048576", "memory.swap.max": "0", "pids.max": "10", "cpu.max": "50000 100000"}
	for name, v := range want {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != v {
			t.Errorf("%s = %q, %v; want %q", name, got, err, v)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(want) {
		t.Errorf("cgroup files %v, want %d", entries, len(want))
	}
	if _, err := createCgroup(filepath.Join(t.TempDir(), "no", "parent"), Limits{PIDs: 1}); err == nil {
		t.Error("createCgroup in a missing parent = nil error")
	}
}

func TestCloneProbes(t *testing.T) {
	if !slices.Contains([]bool{true, false}, canClone(0, os.Geteuid() == 0)) || !canClone(0, false) {
		t.Error("canClone(no flags) = false: a plain fork must work")
	}
	for _, tc := range []struct {
		release string
		want    bool
	}{{"6.18.44-fc", true}, {"5.12.0", true}, {"5.11.9", false}, {"4.19", false}, {"x", false}} {
		if got := kernelAtLeast(tc.release, 5, 12); got != tc.want {
			t.Errorf("kernelAtLeast(%q, 5, 12) = %v, want %v", tc.release, got, tc.want)
		}
	}
}

func TestExpect(t *testing.T) {
	spec, _ := Compile(nil, nil, Context{Dir: "/work/ws"})
	a, err := Expect(spec, fullReport(0))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"backend": "clone", "landlock_abi": "7", "uid": "65534",
		"layers": "mountns,pidns,netns,rlimits,no-new-privs,uid,landlock,landlock-net,seccomp",
	}
	got := a.Map()
	if got["layers"] != want["layers"] || got["uid"] != want["uid"] || got["backend"] != want["backend"] || got["landlock_abi"] != want["landlock_abi"] {
		t.Errorf("Expect(...).Map() = %v, want %v", got, want)
	}
	if !strings.Contains(got["skipped"], "userns:") || !strings.Contains(got["skipped"], "cgroup:") {
		t.Errorf("skipped = %q, want userns and cgroup", got["skipped"])
	}
	spec.Strict = true
	if _, err := Expect(spec, fullReport(0).Without(LayerLandlock)); err == nil {
		t.Error("Expect(strict, no Landlock) = nil error, want a refusal")
	}
}

func TestExpectCreatesNothing(t *testing.T) {
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), tempPrefix+"*"))
	spec, _ := Compile(nil, nil, Context{Dir: "/work/ws"})
	for range 3 {
		Expect(spec, fullReport(0))
	}
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), tempPrefix+"*"))
	if len(after) > len(before) {
		t.Errorf("Expect created %d temp dirs", len(after)-len(before))
	}
}

func TestPlantedSymlinkInPolicyPath(t *testing.T) {
	rep := requireRoot(t)
	ws, outside := worldDir(t), worldDir(t)
	// An earlier call, allowed to write the workspace, made build point outside it.
	must(t, os.Symlink(outside, filepath.Join(ws, "build")))
	spec, err := Compile(&workflow.Policy{Paths: workflow.PathPolicy{Write: []string{"build/**"}}}, nil, Context{Dir: ws})
	must(t, err)
	res := sandboxedScript(t, spec, rep, "echo x > build/pwned")
	if res.status != 125 || !strings.Contains(res.setupErr, "leads through a symbolic link") {
		t.Errorf("status %d, setup error %q; want a refusal of the planted link", res.status, res.setupErr)
	}
	if _, err := os.Stat(filepath.Join(outside, "pwned")); err == nil {
		t.Error("the write went through the planted link")
	}
	// A real directory is fine.
	must(t, os.Remove(filepath.Join(ws, "build")))
	must(t, os.Mkdir(filepath.Join(ws, "build"), 0o755))
	if res := sandboxedScript(t, spec, rep, "echo x > build/ok && echo no > elsewhere"); res.status != 1 || !strings.Contains(res.stderr, "elsewhere") {
		t.Errorf("status %d, stderr %q; want build writable, the rest of the workspace not", res.status, res.stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "build", "ok")); err != nil {
		t.Errorf("build/ok: %v", err)
	}
}

func TestMakeWriteDirs(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	must(t, os.Symlink(outside, filepath.Join(ws, "link")))
	s := &Spec{Dir: ws, Write: []string{filepath.Join(ws, "build", "out"), "/nonexistent/elsewhere"}}
	must(t, makeWriteDirs(s))
	if fi, err := os.Stat(filepath.Join(ws, "build", "out")); err != nil || !fi.IsDir() {
		t.Errorf("build/out: %v", err)
	}
	if _, err := os.Stat("/nonexistent/elsewhere"); err == nil {
		t.Error("created a writable path outside the working directory")
	}
	s.Write = []string{filepath.Join(ws, "link", "x")}
	if err := makeWriteDirs(s); fault.KindOf(err) != fault.Denied {
		t.Errorf("makeWriteDirs through a link = %v, want denied", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Error("created a directory through a symbolic link")
	}
}

func TestIDMapRefusedKeepsRootWithoutCapabilities(t *testing.T) {
	rep := requireRoot(t)
	const noIDMap = "/sys/fs/cgroup/unified" // cgroup2 takes no idmapped mounts
	var st syscall.Statfs_t
	if syscall.Statfs(noIDMap, &st) != nil || st.Type != 0x63677270 {
		t.Skip("needs a cgroup2 mount at " + noIDMap)
	}
	ws := worldDir(t)
	spec, _ := Compile(nil, nil, Context{Dir: ws})
	spec.Write = append(spec.Write, noIDMap)
	res := sandboxedScript(t, spec, rep, "id -u; grep CapEff /proc/self/status; echo ok > made && cat made")
	if res.applied == nil || res.applied.Has(LayerUID) || !strings.Contains(res.applied.Skipped[LayerUID], "idmapped mount of "+noIDMap) {
		t.Fatalf("applied = %+v, skipped %v; want no uid drop, because of the idmapping\nstdout %s stderr %s", res.applied, res.applied.Skipped, res.stdout, res.stderr)
	}
	if want := "0\nCapEff:\t0000000000000000\nok\n"; res.stdout != want {
		t.Errorf("stdout = %q, want %q (root without capabilities, workspace writable)\nstderr: %s", res.stdout, want, res.stderr)
	}
}

func TestExecAllowlist(t *testing.T) {
	rep := requireRoot(t)
	base := worldDir(t)
	attacker := copyAttacker(t, base)
	ws := filepath.Join(base, "ws")
	must(t, os.MkdirAll(ws, 0o755))
	write(t, filepath.Join(ws, "run.sh"), "#!/bin/sh\n/usr/bin/id\n", 0o755)
	spec, err := Compile(&workflow.Policy{Commands: []string{"ls", attacker}, Exec: ExecAllowlist}, nil, Context{Dir: ws})
	must(t, err)
	spec.Read = append(spec.Read, filepath.Dir(attacker))
	run := func(script string) result {
		return runSandboxed(t, spec, rep, script, []string{"PATH=/usr/bin:/bin", "LANG=C"}, 20*time.Second)
	}
	if res := run("ls run.sh"); res.status != 0 || res.stdout != "run.sh\n" {
		t.Fatalf("an allowed program: status %d, stdout %q, stderr %q", res.status, res.stdout, res.stderr)
	} else if !strings.HasPrefix(res.applied.Map()["exec"], "allowlist: ") {
		t.Errorf("the applied record does not say the allowlist is enforced: %v", res.applied.Map())
	}
	ld := loader()
	for _, tc := range []struct{ name, script string }{
		{"a program not allowed", "attack exec /usr/bin/id"},
		{"a shell", "attack exec /bin/sh -c /usr/bin/id"},
		{"a script", "attack exec ./run.sh"},
		{"the dynamic loader", "attack exec " + ld + " /usr/bin/id"},
		{"a copy in the workspace", "attack copyexec /usr/bin/id ./id-copy"},
		{"a copy through the loader", "attack copyexec /usr/bin/id ./id-copy2 " + ld},
		{"a copy in $TMPDIR", `attack copyexec /usr/bin/id "$TMPDIR/id"`},
		{"a memory file", "attack memfd /usr/bin/id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := run(attacker + " " + tc.script)
			refused := strings.HasPrefix(res.stdout, "EACCES") || strings.HasPrefix(res.stdout, "EPERM") ||
				strings.Contains(res.stderr, "failed to map segment")
			if strings.Contains(res.stdout, "uid=") || !refused {
				t.Errorf("want the kernel to refuse it (EACCES from Landlock, EPERM from seccomp, or the loader failing to map from a noexec mount); stdout %q, stderr %q", res.stdout, res.stderr)
			}
		})
	}
}

func TestHiddenGitConfigKeepsRepositoryFormat(t *testing.T) {
	rep := requireRoot(t)
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("needs git")
	}
	ws := worldDir(t)
	for _, args := range [][]string{
		{"init", "-q", "--object-format=sha256", ws},
		{"-C", ws, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-q", "--allow-empty", "-m", "first"},
		{"-C", ws, "config", "core.hooksPath", "/tmp/evil"},
	} {
		if out, err := exec.Command(git, args...).CombinedOutput(); err != nil {
			t.Skipf("git %v: %v\n%s", args, err, out)
		}
	}
	spec, _ := Compile(nil, nil, Context{Dir: ws})
	res := sandboxedScript(t, spec, rep, "git log --format=%s && git config core.hooksPath || echo no-hooks-path")
	if res.stdout != "first\nno-hooks-path\n" {
		t.Errorf("stdout = %q, want the SHA-256 repository readable and its hooksPath hidden\nstderr: %s", res.stdout, res.stderr)
	}
}
