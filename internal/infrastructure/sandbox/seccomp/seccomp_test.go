//go:build linux

package seccomp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// eval runs a classic BPF program over one struct seccomp_data, as the kernel would.
func eval(t *testing.T, prog []unix.SockFilter, arch, nr uint32, args ...uint64) uint32 {
	t.Helper()
	data := make([]byte, 64)
	binary.LittleEndian.PutUint32(data[offNr:], nr)
	binary.LittleEndian.PutUint32(data[offArch:], arch)
	for i, a := range args {
		binary.LittleEndian.PutUint64(data[offArg(uint32(i)):], a)
	}
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			acc = binary.LittleEndian.Uint32(data[in.K:])
		case unix.BPF_ALU | unix.BPF_AND | unix.BPF_K:
			acc &= in.K
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			var taken bool
			switch in.Code &^ (unix.BPF_JMP | unix.BPF_K) {
			case unix.BPF_JEQ:
				taken = acc == in.K
			case unix.BPF_JGE:
				taken = acc >= in.K
			case unix.BPF_JSET:
				taken = acc&in.K != 0
			}
			if taken {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		default:
			t.Fatalf("instruction %d: unknown code %#x", pc, in.Code)
		}
	}
	t.Fatal("program fell off its end")
	return 0
}

func TestProgramDecisions(t *testing.T) {
	if !supported {
		t.Skip("no filter for " + runtime.GOARCH)
	}
	allow := uint32(unix.SECCOMP_RET_ALLOW)
	eperm, enosys := errno(unix.EPERM), errno(unix.ENOSYS)
	const stream, dgram, raw = unix.SOCK_STREAM, unix.SOCK_DGRAM, unix.SOCK_RAW
	tests := []struct {
		name  string
		opts  Options
		arch  uint32
		nr    uint32
		args  []uint64
		want  uint32
		extra bool // only where x32 numbers exist
	}{
		{name: "read", nr: unix.SYS_READ, want: allow},
		{name: "tcp", nr: unix.SYS_SOCKET, args: []uint64{unix.AF_INET, stream | unix.SOCK_CLOEXEC, 0}, want: allow},
		{name: "tcp explicit proto", nr: unix.SYS_SOCKET, args: []uint64{unix.AF_INET6, stream | unix.SOCK_NONBLOCK, unix.IPPROTO_TCP}, want: allow},
		{name: "udp", nr: unix.SYS_SOCKET, args: []uint64{unix.AF_INET, dgram, 0}, want: eperm},
		{name: "udp6", nr: unix.SYS_SOCKET, args: []uint64{unix.AF_INET6, dgram | unix.SOCK_CLOEXEC, unix.IPPROTO_UDP}, want: eperm},
		{name: "mptcp", nr: unix.SYS_SOCKET, args: []uint64{unix.AF_INET, stream, unix.IPPROTO_MPTCP}, want: eperm},
		{name: "raw", nr: unix.SYS_SOCKET, args: []uint64{unix.AF_INET, raw, unix.IPPROTO_ICMP}, want: eperm},
		{name: "sctp stream", nr: unix.SYS_SOCKET, args: []uint64{unix.AF_INET, stream, unix.IPPROTO_SCTP}, want: eperm},
		{name: "high bits ignored like the kernel", nr: unix.SYS_SOCKET, args: []uint64{1<<32 | unix.AF_INET, dgram, 0}, want: eperm},
		{name: "packet", nr: unix.SYS_SOCKET, args: []uint64{unix.AF_PACKET, raw, 0}, want: eperm},
		{name: "vsock", nr: unix.SYS_SOCKET, args: []uint64{unix.AF_VSOCK, stream, 0}, want: eperm},
		{name: "unix dgram", nr: unix.SYS_SOCKET, args: []uint64{unix.AF_UNIX, dgram, 0}, want: allow},
		{name: "netlink", nr: unix.SYS_SOCKET, args: []uint64{unix.AF_NETLINK, raw, 0}, want: allow},
		{name: "socketpair unix", nr: unix.SYS_SOCKETPAIR, args: []uint64{unix.AF_UNIX, stream, 0}, want: allow},
		{name: "socketpair inet", nr: unix.SYS_SOCKETPAIR, args: []uint64{unix.AF_INET, stream, 0}, want: eperm},
		{name: "udp on host network", opts: Options{AllowInet: true}, nr: unix.SYS_SOCKET, args: []uint64{unix.AF_INET, dgram, 0}, want: allow},
		{name: "vsock on host network", opts: Options{AllowInet: true}, nr: unix.SYS_SOCKET, args: []uint64{unix.AF_VSOCK, stream, 0}, want: eperm},
		{name: "io_uring_setup", nr: unix.SYS_IO_URING_SETUP, want: eperm},
		{name: "io_uring_enter", nr: unix.SYS_IO_URING_ENTER, want: eperm},
		{name: "ptrace", nr: unix.SYS_PTRACE, want: eperm},
		{name: "unshare", nr: unix.SYS_UNSHARE, args: []uint64{unix.CLONE_NEWUSER}, want: eperm},
		{name: "mount", nr: unix.SYS_MOUNT, want: eperm},
		{name: "clone for fork", nr: unix.SYS_CLONE, args: []uint64{unix.CLONE_VM | unix.CLONE_VFORK | uint64(unix.SIGCHLD)}, want: allow},
		{name: "clone for a thread", nr: unix.SYS_CLONE, args: []uint64{unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_THREAD}, want: allow},
		{name: "clone new user ns", nr: unix.SYS_CLONE, args: []uint64{unix.CLONE_NEWUSER | uint64(unix.SIGCHLD)}, want: eperm},
		{name: "clone new net ns", nr: unix.SYS_CLONE, args: []uint64{unix.CLONE_NEWNET}, want: eperm},
		{name: "clone3", nr: unix.SYS_CLONE3, want: enosys},
		{name: "TIOCSTI", nr: unix.SYS_IOCTL, args: []uint64{0, unix.TIOCSTI}, want: eperm},
		{name: "TIOCLINUX", nr: unix.SYS_IOCTL, args: []uint64{0, unix.TIOCLINUX}, want: eperm},
		{name: "TCGETS", nr: unix.SYS_IOCTL, args: []uint64{0, unix.TCGETS}, want: allow},
		{name: "other arch", arch: unix.AUDIT_ARCH_I386, nr: unix.SYS_READ, want: eperm},
		{name: "x32 numbers", nr: x32Bit | unix.SYS_READ, want: eperm, extra: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.extra && x32Bit == 0 {
				t.Skip("no x32 on " + runtime.GOARCH)
			}
			prog, err := Program(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			arch := tc.arch
			if arch == 0 {
				arch = auditArch
			}
			if got := eval(t, prog, arch, tc.nr, tc.args...); got != tc.want {
				t.Errorf("filter(nr %d, args %v) = %#x, want %#x", tc.nr, tc.args, got, tc.want)
			}
		})
	}
}

func TestAssembleErrors(t *testing.T) {
	a := newAsm()
	a.jeq(1, "nowhere", "")
	if _, err := a.assemble(); err == nil || !strings.Contains(err.Error(), "undefined label") {
		t.Errorf("assemble with an undefined label = %v, want an error", err)
	}
	a = newAsm()
	a.label("back")
	a.ret(0)
	a.jeq(1, "back", "")
	if _, err := a.assemble(); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("assemble with a backward jump = %v, want an error", err)
	}
}

// childEnv selects a probe run in a re-executed test binary after the filter is installed.
const childEnv = "AWF_SECCOMP_TEST_CHILD"

func TestMain(m *testing.M) {
	if probe := os.Getenv(childEnv); probe != "" {
		os.Exit(child(probe))
	}
	os.Exit(m.Run())
}

// child installs the filter and reports the outcome of one probe on stdout.
func child(probe string) int {
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fmt.Println("prctl:", err)
		return 1
	}
	if err := Install(Options{}); err != nil {
		fmt.Println("install:", err)
		return 1
	}
	fmt.Println(describe(probes[probe]()))
	return 0
}

func describe(err error) string {
	if err == nil {
		return "ok"
	}
	var errno unix.Errno
	if errors.As(err, &errno) {
		return unix.ErrnoName(errno)
	}
	return err.Error()
}

func socket(domain, typ, proto int) func() error {
	return func() error {
		fd, err := unix.Socket(domain, typ, proto)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}
}

var probes = map[string]func() error{
	"udp":   socket(unix.AF_INET, unix.SOCK_DGRAM, 0),
	"mptcp": socket(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP),
	"raw":   socket(unix.AF_INET6, unix.SOCK_RAW, unix.IPPROTO_ICMPV6),
	"tcp":   socket(unix.AF_INET, unix.SOCK_STREAM, 0),
	"unix":  socket(unix.AF_UNIX, unix.SOCK_STREAM, 0),
	"io_uring": func() error {
		var params [120]byte
		fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafe.Pointer(&params)), 0)
		if e != 0 {
			return e
		}
		unix.Close(int(fd))
		return nil
	},
	"userns": func() error { return unix.Unshare(unix.CLONE_NEWUSER) },
	"exec": func() error {
		// A thread other than the one that installed the filter forks: TSYNC covered it.
		return exec.Command("/bin/sh", "-c", "exec 3<>/dev/null").Run()
	},
}

func TestInstalledFilter(t *testing.T) {
	if !Supported() {
		t.Skip("seccomp filters not supported here")
	}
	tests := []struct{ probe, want string }{
		{"udp", "EPERM"},
		{"mptcp", "EPERM"},
		{"raw", "EPERM"},
		{"io_uring", "EPERM"},
		{"userns", "EPERM"},
		{"tcp", "ok"},
		{"unix", "ok"},
		{"exec", "ok"},
	}
	for _, tc := range tests {
		t.Run(tc.probe, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), childEnv+"="+tc.probe)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			if got := strings.TrimSpace(string(out)); got != tc.want {
				t.Errorf("%s under the filter = %q, want %q", tc.probe, got, tc.want)
			}
		})
	}
}
