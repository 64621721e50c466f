//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// layerConfig is one column of the table: the machine as Probe sees it, or weakened.
type layerConfig struct {
	name    string
	report  func(Report) Report
	nonRoot bool // awf runs as NobodyUID: the workspace is that user's
}

var layerConfigs = []layerConfig{
	{name: "root", report: func(r Report) Report { return r }},
	{name: "root, no Landlock", report: func(r Report) Report { return r.Without(LayerLandlock) }},
	{name: "root, no seccomp", report: func(r Report) Report { return r.Without(LayerSeccomp) }},
	{name: "root, no user namespaces", report: func(r Report) Report { return r.Without(LayerUserNS) }},
	{name: "root, no namespaces", report: func(r Report) Report {
		return r.Without(LayerMountNS, LayerPIDNS, LayerNetNS, LayerUserNS)
	}},
	{name: "non-root", nonRoot: true, report: func(r Report) Report { return r.AsUser(NobodyUID) }},
	{name: "non-root, no user namespaces", nonRoot: true, report: func(r Report) Report {
		return r.AsUser(NobodyUID).Without(LayerUserNS)
	}},
	{name: "non-root, no Landlock, no user namespaces", nonRoot: true, report: func(r Report) Report {
		return r.AsUser(NobodyUID).Without(LayerUserNS, LayerLandlock)
	}},
}

// fixture is the world one configuration's attacks run in.
type fixture struct {
	ws       string // the working directory: a git repository with .env and a hook
	outside  string // a directory no policy lists, writable by anyone (so DAC stops nothing)
	secret   string // outside/secret, readable by anyone
	victim   string // outside/victim, owned by the uid the script runs as
	attacker string // this test binary, executable by anyone
	owner    int
	tcp, udp *listener
	applied  *Applied
	// outsider is a process outside the sandbox running as owner (so the uid check stops no
	// signal); gone is closed once it has exited.
	outsider *os.Process
	gone     chan struct{}
}

const secretText = "the-secret-content"

// listener records what reaches a loopback port.
type listener struct {
	port int
	mu   sync.Mutex
	got  bytes.Buffer
}

func (l *listener) received() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.got.Len() > 0
}

func (l *listener) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got.Reset()
}

func listenTCP(t *testing.T) *listener {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	l := &listener{port: ln.Addr().(*net.TCPAddr).Port}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetReadDeadline(time.Now().Add(2 * time.Second))
				b, _ := io.ReadAll(c)
				l.mu.Lock()
				l.got.Write(append(b, '+'))
				l.mu.Unlock()
			}()
		}
	}()
	return l
}

func listenUDP(t *testing.T) *listener {
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	l := &listener{port: pc.LocalAddr().(*net.UDPAddr).Port}
	go func() {
		buf := make([]byte, 2048)
		for {
			n, _, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			l.mu.Lock()
			l.got.Write(buf[:n])
			l.mu.Unlock()
		}
	}()
	return l
}

// newFixture builds the world under a fresh directory, reachable by the uid the scripts run
// as (owner for the workspace, anyone for the rest).
func newFixture(t *testing.T, base string, owner int, tcp, udp *listener, attacker string) *fixture {
	t.Helper()
	root, err := os.MkdirTemp(base, "world-")
	must(t, err)
	must(t, os.Chmod(root, 0o755))
	f := &fixture{ws: filepath.Join(root, "ws"), outside: filepath.Join(root, "outside"), owner: owner, tcp: tcp, udp: udp, attacker: attacker}
	f.secret, f.victim = filepath.Join(f.outside, "secret"), filepath.Join(f.outside, "victim")
	for _, d := range []string{f.ws, filepath.Join(f.ws, "src"), filepath.Join(f.ws, ".awf"), f.outside} {
		must(t, os.MkdirAll(d, 0o755))
	}
	must(t, os.Chmod(f.outside, 0o777))
	write(t, f.secret, secretText, 0o644)
	write(t, f.victim, "victim", 0o644)
	must(t, os.Chown(f.victim, owner, owner))
	write(t, filepath.Join(f.ws, "src", "x.go"), "package x\n", 0o644)
	write(t, filepath.Join(f.ws, ".env"), "TOKEN=1\n", 0o644)
	write(t, filepath.Join(f.ws, ".awf", "state"), "state\n", 0o644)
	write(t, filepath.Join(f.ws, "hello.c"), "#include <stdio.h>\nint main(void){puts(\"hello\");return 0;}\n", 0o644)
	if git, err := exec.LookPath("git"); err == nil {
		out, err := exec.Command(git, "init", "-q", f.ws).CombinedOutput()
		if err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
		write(t, filepath.Join(f.ws, ".git", "hooks", "pre-commit"), "#!/bin/sh\nexit 0\n", 0o755)
		config, err := os.ReadFile(filepath.Join(f.ws, ".git", "config"))
		must(t, err)
		write(t, filepath.Join(f.ws, ".git", "config"), string(config)+"[remote \"origin\"]\n\turl = https://u:"+secretText+"@example.com/r.git\n", 0o644)
	}
	must(t, filepath.Walk(f.ws, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, owner, owner)
	}))
	startOutsider(t, f)
	return f
}

// startOutsider starts f's process outside the sandbox, as the uid the scripts run as.
func startOutsider(t *testing.T, f *fixture) {
	t.Helper()
	cmd := exec.Command("sleep", "1000")
	if f.owner != os.Getuid() {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(f.owner), Gid: uint32(f.owner)}}
	}
	must(t, cmd.Start())
	f.outsider, f.gone = cmd.Process, make(chan struct{})
	go func() { cmd.Wait(); close(f.gone) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-f.gone })
}

// judgeSignal judges a script that sent SIGKILL to the outsider with /bin/kill.
func judgeSignal(f *fixture, r result) verdict {
	select {
	case <-f.gone:
		return notStopped
	case <-time.After(100 * time.Millisecond):
	}
	text := strings.ToLower(r.stderr)
	switch {
	case strings.Contains(text, "no such process"):
		return stoppedBy("pidns")
	case strings.Contains(text, "not permitted") && f.applied != nil && f.applied.LandlockABI >= 6:
		return stoppedBy("landlock (scope)")
	}
	return byErrno(f, r.stderr)
}

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	must(t, os.WriteFile(path, []byte(content), mode))
	must(t, os.Chmod(path, mode))
}

// verdict is one cell: an attack stopped (by the named layer) or not; a legitimate call
// working or not.
type verdict struct {
	stopped bool
	by      string
}

func stoppedBy(by string) verdict { return verdict{stopped: true, by: by} }

var notStopped = verdict{}

// attack is one row.
type attack struct {
	name     string
	legit    bool
	commands []string // a command allowlist for this row
	// exec runs the row under an exec allowlist of ls and the attacker (sandbox.exec:
	// allowlist): the attacker starts the program itself, past the shell's checks.
	exec   bool
	script func(f *fixture) string
	judge  func(f *fixture, r result) verdict
}

// byErrno names the layer behind an error text, given what was applied.
func byErrno(f *fixture, text string) verdict {
	text = strings.ToLower(text)
	switch {
	case strings.Contains(text, "read-only file system") || strings.Contains(text, "erofs"):
		return stoppedBy("mountns (read-only)")
	case strings.Contains(text, "device or resource busy") || strings.Contains(text, "ebusy"):
		return stoppedBy("mountns (bind mount)")
	case strings.Contains(text, "no such file") || strings.Contains(text, "enoent"):
		return stoppedBy("mountns (hidden)")
	case strings.Contains(text, "network is unreachable") || strings.Contains(text, "enetunreach"):
		return stoppedBy("netns")
	case strings.Contains(text, "permission denied") || strings.Contains(text, "eacces"):
		if f.applied != nil && f.applied.Has(LayerLandlock) {
			return stoppedBy("landlock")
		}
		return stoppedBy("uid")
	case strings.Contains(text, "operation not permitted") || strings.Contains(text, "eperm"):
		if f.applied != nil && f.applied.Has(LayerSeccomp) {
			return stoppedBy("seccomp")
		}
		return stoppedBy("uid / no capabilities")
	}
	return verdict{stopped: true, by: "?: " + firstLine(text)}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// judgeNet judges an attacker's network probe: what it printed, and whether the listener
// heard from it.
func judgeNet(l func(*fixture) *listener) func(f *fixture, r result) verdict {
	return func(f *fixture, r result) verdict {
		out := strings.TrimSpace(r.stdout)
		switch {
		case l(f).received() || out == "ok":
			return notStopped
		case out == "EPERM":
			if f.applied.Has(LayerSeccomp) {
				return stoppedBy("seccomp")
			}
			return stoppedBy("uid / no capabilities")
		case out == "EACCES":
			return stoppedBy("landlock-net")
		case out == "EPROTONOSUPPORT":
			return stoppedBy("kernel (no MPTCP)")
		}
		return byErrno(f, out+r.stderr)
	}
}

// judgeSyscall judges an attacker probe with no side effect to check.
func judgeSyscall(f *fixture, r result) verdict {
	if strings.TrimSpace(r.stdout) == "ok" {
		return notStopped
	}
	return byErrno(f, r.stdout+r.stderr)
}

// judgeFile says whether a write reached path.
func judgeWrite(path func(*fixture) string) func(f *fixture, r result) verdict {
	return func(f *fixture, r result) verdict {
		if _, err := os.Stat(path(f)); err == nil {
			return notStopped
		}
		return byErrno(f, r.stderr)
	}
}

func judgeRead(f *fixture, r result) verdict {
	if strings.Contains(r.stdout, secretText) {
		return notStopped
	}
	return byErrno(f, r.stderr)
}

func attacks() []attack {
	return []attack{
		{name: "write outside the allowed paths", script: func(f *fixture) string {
			return "echo x > " + f.outside + "/pwned"
		}, judge: judgeWrite(func(f *fixture) string { return f.outside + "/pwned" })},
		{name: "write outside through /proc/self/root", script: func(f *fixture) string {
			return "echo x > /proc/self/root" + f.outside + "/pwned-proc"
		}, judge: judgeWrite(func(f *fixture) string { return f.outside + "/pwned-proc" })},
		{name: "read an unlisted directory", script: func(f *fixture) string { return "cat " + f.secret }, judge: judgeRead},
		{name: "kill a process outside the sandbox (same uid)", script: func(f *fixture) string {
			return "/bin/kill -9 " + strconv.Itoa(f.outsider.Pid)
		}, judge: judgeSignal},
		{name: "read through a symlink out of the workspace", script: func(f *fixture) string {
			return "ln -s " + f.secret + " link && cat link"
		}, judge: judgeRead},
		{name: "read through /proc/self/root", script: func(f *fixture) string {
			return "cat /proc/self/root" + f.secret
		}, judge: judgeRead},
		{name: "chmod a file outside the workspace", script: func(f *fixture) string {
			return "chmod 600 " + f.victim
		}, judge: func(f *fixture, r result) verdict {
			if fi, err := os.Stat(f.victim); err == nil && fi.Mode().Perm() != 0o644 {
				return notStopped
			}
			if strings.Contains(r.stderr, "not permitted") {
				return stoppedBy("uid") // chmod is not filtered: the owner check refused it
			}
			return byErrno(f, r.stderr)
		}},
		{name: "write a protected path (.git/hooks, .env, rename .git)", script: func(*fixture) string {
			return "echo evil >> .git/hooks/pre-commit; echo EVIL=1 >> .env; mv .git .git-moved"
		}, judge: func(f *fixture, r result) verdict {
			hook, _ := os.ReadFile(filepath.Join(f.ws, ".git", "hooks", "pre-commit"))
			env, _ := os.ReadFile(filepath.Join(f.ws, ".env"))
			if _, err := os.Stat(filepath.Join(f.ws, ".git-moved")); err == nil || strings.Contains(string(hook), "evil") || strings.Contains(string(env), "EVIL") {
				return notStopped
			}
			return byErrno(f, r.stderr)
		}},
		{name: "read awf's environment through /proc/<pid>/environ", script: func(*fixture) string {
			return "cat /proc/" + strconv.Itoa(os.Getpid()) + "/environ"
		}, judge: func(f *fixture, r result) verdict {
			if strings.Contains(r.stdout, environMarker) {
				return notStopped
			}
			if f.applied.Has(LayerPIDNS) && strings.Contains(strings.ToLower(r.stderr), "no such file") {
				return stoppedBy("pidns")
			}
			return byErrno(f, r.stderr)
		}},
		{name: "UDP datagram to a loopback port", script: func(f *fixture) string {
			return f.attacker + " attack udp 127.0.0.1:" + strconv.Itoa(f.udp.port)
		}, judge: judgeNet(func(f *fixture) *listener { return f.udp })},
		{name: "MPTCP connection to a loopback port", script: func(f *fixture) string {
			return f.attacker + " attack mptcp 127.0.0.1:" + strconv.Itoa(f.tcp.port)
		}, judge: judgeNet(func(f *fixture) *listener { return f.tcp })},
		{name: "TCP connection to a loopback port", script: func(f *fixture) string {
			return f.attacker + " attack tcp 127.0.0.1:" + strconv.Itoa(f.tcp.port)
		}, judge: judgeNet(func(f *fixture) *listener { return f.tcp })},
		{name: "raw socket", script: func(f *fixture) string { return f.attacker + " attack raw" }, judge: judgeSyscall},
		{name: "io_uring", script: func(f *fixture) string { return f.attacker + " attack iouring" }, judge: judgeSyscall},
		{name: "create a user namespace", script: func(f *fixture) string { return f.attacker + " attack userns" }, judge: judgeSyscall},
		{name: "remount / (mount(2))", script: func(f *fixture) string { return f.attacker + " attack remount" }, judge: judgeSyscall},
		{name: "loader trick past the allowlist (ld.so PROGRAM, TCP out)", script: func(f *fixture) string {
			return loader() + " " + f.attacker + " attack tcp 127.0.0.1:" + strconv.Itoa(f.tcp.port)
		}, judge: judgeNet(func(f *fixture) *listener { return f.tcp })},
		{name: "loader trick under an allowlist of cat", commands: []string{"cat"}, script: func(f *fixture) string {
			return loader() + " /bin/cat " + f.secret
		}, judge: judgeL1},
		{name: "dynamic command name under an allowlist of cat", commands: []string{"cat"}, script: func(f *fixture) string {
			return "x=" + f.attacker + "; $x attack tcp 127.0.0.1:" + strconv.Itoa(f.tcp.port)
		}, judge: judgeL1},
		{name: "read a protected path (.env, .git/config, .awf)", script: func(*fixture) string {
			return "cat .env .git/config; ls -A .awf"
		}, judge: func(f *fixture, r result) verdict {
			if strings.Contains(r.stdout, "TOKEN=") || strings.Contains(r.stdout, secretText) || strings.Contains(r.stdout, "state") {
				return notStopped
			}
			return stoppedBy("mountns (hidden)")
		}},
		{name: "exec allowlist: a program an allowed one starts", exec: true, script: func(f *fixture) string {
			return f.attacker + " attack exec /usr/bin/id"
		}, judge: judgeExec},
		{name: "exec allowlist: the dynamic loader maps a program", exec: true, script: func(f *fixture) string {
			return f.attacker + " attack exec " + loader() + " /usr/bin/id"
		}, judge: judgeExec},
		{name: "exec allowlist: a copy in the workspace, through the loader", exec: true, script: func(f *fixture) string {
			return f.attacker + " attack copyexec /usr/bin/id ./id-copy " + loader()
		}, judge: judgeExec},
		{name: "exec allowlist: a program in a memory file (memfd)", exec: true, script: func(f *fixture) string {
			return f.attacker + " attack memfd /usr/bin/id"
		}, judge: judgeExec},
		{name: "fork bomb (200 processes, pids limit 64)", script: func(*fixture) string {
			return `sh -c 'i=0; while [ $i -lt 200 ]; do sleep 30 & i=$((i+1)); done; echo spawned'`
		}, judge: func(f *fixture, r result) verdict {
			if strings.Contains(r.stderr, "fork") || strings.Contains(r.stderr, "Resource temporarily unavailable") {
				if f.applied.Has(LayerCgroup) {
					return stoppedBy("cgroup (pids.max)")
				}
				return stoppedBy("rlimits (RLIMIT_NPROC)")
			}
			return notStopped
		}},
		{name: "memory hog (2 GiB, memory limit 768 MiB)", script: func(f *fixture) string {
			return f.attacker + " attack hog 32"
		}, judge: func(f *fixture, r result) verdict {
			switch {
			case strings.Contains(r.stdout, "allocated"):
				return notStopped
			case strings.Contains(r.stderr, "out of memory") || strings.Contains(r.stderr, "cannot allocate memory") ||
				strings.Contains(r.stderr, "failed to allocate"): // the race detector's own allocator
				return stoppedBy("rlimits (RLIMIT_DATA)")
			case r.status == 137:
				return stoppedBy("cgroup (memory.max)")
			}
			return byErrno(f, r.stderr)
		}},
		{name: "setsid survivor outliving the tool", script: func(*fixture) string {
			return "setsid -f sleep " + survivorMark
		}, judge: func(f *fixture, r result) verdict {
			if pids := findProcs("sleep\x00" + survivorMark + "\x00"); len(pids) > 0 {
				for _, pid := range pids {
					syscall.Kill(pid, syscall.SIGKILL)
				}
				return notStopped
			}
			if r.status != 0 || !f.applied.Has(LayerPIDNS) {
				return verdict{stopped: true, by: "?: " + firstLine(r.stderr)}
			}
			return stoppedBy("pidns")
		}},
		{name: "legitimate: git status in the workspace", legit: true, script: func(*fixture) string {
			if _, err := exec.LookPath("git"); err != nil {
				return "echo skipped: no git"
			}
			return "git status --short"
		}, judge: judgeOK},
		{name: "legitimate: read ./src/../src/x.go", legit: true, script: func(*fixture) string {
			return "cat ./src/../src/x.go"
		}, judge: func(f *fixture, r result) verdict {
			if r.status == 0 && strings.Contains(r.stdout, "package x") {
				return stoppedBy("")
			}
			return verdict{by: firstLine(r.stderr)}
		}},
		{name: "legitimate: a build writing in the workspace and $TMPDIR", legit: true, script: func(*fixture) string {
			if _, err := exec.LookPath("cc"); err != nil {
				return `mkdir -p out && echo hello > out/hello && cat out/hello && echo t > "$TMPDIR/t" && cat "$TMPDIR/t"`
			}
			return `mkdir -p out && cc -o out/hello hello.c && ./out/hello && echo t > "$TMPDIR/t" && cat "$TMPDIR/t"`
		}, judge: func(f *fixture, r result) verdict {
			if r.status == 0 && strings.Contains(r.stdout, "hello") && strings.Contains(r.stdout, "t\n") {
				return stoppedBy("")
			}
			return verdict{by: firstLine(r.stderr)}
		}},
	}
}

const environMarker = "AWF_ATTACK_MARKER=present"

// survivorMark is a sleep duration no other process on the machine uses.
var survivorMark = fmt.Sprintf("%d.%d", 4000+os.Getpid()%1000, os.Getpid())

func judgeL1(f *fixture, r result) verdict {
	if r.status == 126 && strings.Contains(r.stderr, "(rule ") {
		return stoppedBy("L1 allowlist")
	}
	if f.tcp.received() || strings.Contains(r.stdout, secretText) {
		return notStopped
	}
	return verdict{stopped: true, by: "?: " + firstLine(r.stderr)}
}

// judgeExec judges a program started past the shell under an exec allowlist.
func judgeExec(f *fixture, r result) verdict {
	switch {
	case strings.Contains(r.stdout, "uid="):
		return notStopped
	case strings.HasPrefix(r.stdout, "EACCES"):
		return stoppedBy("landlock (execute)")
	case strings.Contains(r.stderr, "failed to map segment"):
		return stoppedBy("mountns (noexec)")
	case strings.HasPrefix(r.stdout, "EPERM") && f.applied.Has(LayerSeccomp):
		return stoppedBy("seccomp")
	}
	return byErrno(f, r.stdout+r.stderr)
}

func judgeOK(f *fixture, r result) verdict {
	if r.status == 0 {
		return stoppedBy("")
	}
	return verdict{by: firstLine(r.stderr)}
}

// loader is the dynamic loader of this machine.
func loader() string {
	for _, p := range []string{"/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1", "/lib/ld-linux-x86-64.so.2"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "/lib64/ld-linux-x86-64.so.2"
}

// findProcs returns the pids whose command line starts with prefix.
func findProcs(prefix string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if strings.HasPrefix(string(cmdline), prefix) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// copyAttacker copies this test binary where every uid can run it.
func copyAttacker(t *testing.T, base string) string {
	t.Helper()
	dir, err := os.MkdirTemp(base, "bin-")
	must(t, err)
	must(t, os.Chmod(dir, 0o755))
	src, err := os.Open(os.Args[0])
	must(t, err)
	defer src.Close()
	path := filepath.Join(dir, "attacker")
	dst, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o755)
	must(t, err)
	_, err = io.Copy(dst, src)
	must(t, err)
	must(t, dst.Close())
	return path
}

// cell is one outcome of the table.
type cell struct {
	attack, config string
	legit          bool
	v              verdict
	skipped        string
}

func (c cell) String() string {
	switch {
	case c.skipped != "":
		return "n/a"
	case c.legit && c.v.stopped:
		return "ok"
	case c.legit:
		return "**FAILS**: " + c.v.by
	case c.v.stopped:
		return c.v.by
	}
	return "**NOT blocked**"
}

// runMatrix runs every attack under every configuration.
func runMatrix(t *testing.T) []cell {
	base, err := os.MkdirTemp("", "awf-attacks-")
	must(t, err)
	must(t, os.Chmod(base, 0o755))
	t.Cleanup(func() { os.RemoveAll(base) })
	t.Setenv("AWF_ATTACK_MARKER", "present")
	attacker := copyAttacker(t, base)
	helperPath = attacker
	t.Cleanup(func() { helperPath = os.Args[0] })
	tcp, udp := listenTCP(t), listenUDP(t)
	probe := Probe()
	var cells []cell
	for i, cfg := range layerConfigs {
		if raceDetector && i > 0 {
			break
		}
		rep := cfg.report(probe)
		owner := 0
		if cfg.nonRoot {
			if probe.UID != 0 {
				continue // only root can simulate another user
			}
			owner = NobodyUID
		}
		f := newFixture(t, base, owner, tcp, udp, attacker)
		for _, a := range attacks() {
			c := cell{attack: a.name, config: cfg.name, legit: a.legit}
			tcp.reset()
			udp.reset()
			spec, err := Compile(nil, nil, Context{Dir: f.ws})
			must(t, err)
			spec.Read = append(spec.Read, filepath.Dir(attacker))
			spec.Limits.Memory, spec.Limits.PIDs = 768<<20, 64
			if a.commands != nil {
				spec.Commands, spec.RestrictCommands = a.commands, true
			}
			if a.exec {
				spec.Commands, spec.RestrictCommands, spec.ExecAllowlist = []string{"ls", attacker}, true, true
			}
			began := time.Now()
			res := runSandboxed(t, spec, rep, a.script(f), []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C", "GORACE=atexit_sleep_ms=0"}, 30*time.Second)
			var missing *MissingError
			switch {
			case a.exec && (errors.As(res.prepareErr, &missing) || strings.Contains(res.setupErr, "required layer")):
				c.v = stoppedBy("fail closed (refused to run)")
			case res.prepareErr != nil:
				c.skipped = res.prepareErr.Error()
			case res.setupErr != "":
				c.v = verdict{by: "setup failed: " + res.setupErr}
			default:
				f.applied = res.applied
				c.v = a.judge(f, res)
			}
			if testing.Verbose() {
				t.Logf("[%s] %s: %s (status %d, %v)\nstdout: %s\nstderr: %s", cfg.name, a.name, c, res.status, time.Since(began).Round(time.Millisecond), res.stdout, res.stderr)
			}
			cells = append(cells, c)
			if !c.legit && !c.v.stopped {
				f = newFixture(t, base, owner, tcp, udp, attacker) // the attack may have changed it
			}
		}
	}
	return cells
}
