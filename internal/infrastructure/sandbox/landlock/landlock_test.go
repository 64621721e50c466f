//go:build linux

package landlock

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The test binary re-executes itself: the child applies the rules, then runs each probe and
// prints what the kernel said. The parent stays unrestricted.
const childEnv = "AWF_LANDLOCK_TEST_CHILD"

type childRequest struct {
	Rules  Rules
	Probes []probe
}

type probe struct {
	Op   string // write, read, rename, connect
	Path string
	To   string
	Port int
}

func TestMain(m *testing.M) {
	if req := os.Getenv(childEnv); req != "" {
		os.Exit(child(req))
	}
	os.Exit(m.Run())
}

func child(data string) int {
	var req childRequest
	if err := json.Unmarshal([]byte(data), &req); err != nil {
		fmt.Println("decode:", err)
		return 1
	}
	if _, err := Apply(req.Rules); err != nil {
		fmt.Println("apply:", err)
		return 1
	}
	for _, p := range req.Probes {
		fmt.Println(outcome(run(p)))
	}
	return 0
}

func run(p probe) error {
	switch p.Op {
	case "write":
		return os.WriteFile(p.Path, []byte("x"), 0o644)
	case "read":
		_, err := os.ReadFile(p.Path)
		return err
	case "rename":
		return os.Rename(p.Path, p.To)
	case "connect":
		c, err := net.Dial("tcp4", "127.0.0.1:"+strconv.Itoa(p.Port))
		if err == nil {
			c.Close()
		}
		return err
	}
	return fmt.Errorf("unknown probe %q", p.Op)
}

func outcome(err error) string {
	var errno syscall.Errno
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &errno):
		return errno.Error()
	}
	return err.Error()
}

func listen(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

func TestApply(t *testing.T) {
	abi := ABI()
	if abi < 1 {
		t.Skip("no Landlock on this kernel")
	}
	root := t.TempDir()
	allowed, other := filepath.Join(root, "allowed"), filepath.Join(root, "other")
	for _, d := range []string{allowed, filepath.Join(allowed, "a"), filepath.Join(allowed, "b"), other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(other, "secret")
	if err := os.WriteFile(secret, []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(allowed, "a", "f"), []byte("f"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(allowed, "link")); err != nil {
		t.Fatal(err)
	}
	okPort, deniedPort := listen(t), listen(t)

	tests := []struct {
		name string
		p    probe
		want string
		abi  int
	}{
		{"write inside", probe{Op: "write", Path: filepath.Join(allowed, "new")}, "ok", 1},
		{"write outside", probe{Op: "write", Path: filepath.Join(other, "new")}, "permission denied", 1},
		{"read unlisted", probe{Op: "read", Path: secret}, "permission denied", 1},
		{"symlink out", probe{Op: "read", Path: filepath.Join(allowed, "link")}, "permission denied", 1},
		{"proc self root", probe{Op: "read", Path: "/proc/self/root" + secret}, "permission denied", 1},
		{"dotdot out", probe{Op: "read", Path: filepath.Join(allowed, "..", "other", "secret")}, "permission denied", 1},
		{"rename across dirs inside", probe{Op: "rename", Path: filepath.Join(allowed, "a", "f"), To: filepath.Join(allowed, "b", "f")}, "ok", 2},
		{"connect allowed port", probe{Op: "connect", Port: okPort}, "ok", 4},
		{"connect denied port", probe{Op: "connect", Port: deniedPort}, "permission denied", 4},
	}
	req := childRequest{Rules: Rules{
		Read:        []string{"/usr", "/lib", "/lib64", "/etc", filepath.Dir(os.Args[0])},
		Write:       []string{allowed, "/nonexistent-awf-path"},
		RestrictNet: true,
		ConnectTCP:  []uint16{uint16(okPort)},
	}}
	for _, tc := range tests {
		req.Probes = append(req.Probes, tc.p)
	}
	data, _ := json.Marshal(req)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(data))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(got) != len(tests) {
		t.Fatalf("child printed %d outcomes, want %d:\n%s", len(got), len(tests), out)
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if abi < tc.abi {
				t.Skipf("needs Landlock ABI %d, have %d", tc.abi, abi)
			}
			if got[i] != tc.want {
				t.Errorf("%s %s under Landlock = %q, want %q", tc.p.Op, tc.p.Path, got[i], tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(other, "new")); err == nil {
		t.Error("the write outside the allowed directory reached the disk")
	}
}
