//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// attackMain is the attacker program scripts run inside the sandbox: each attack makes one
// system call a shell cannot, and prints "ok" or the errno's name.
func attackMain(name string, args []string) int {
	attacks := map[string]func([]string) error{
		"udp":   func(a []string) error { return sendUDP(a[0]) },
		"mptcp": func(a []string) error { return connect(a[0], unix.IPPROTO_MPTCP) },
		"tcp":   func(a []string) error { return connect(a[0], 0) },
		"raw":   func([]string) error { return closeFD(unix.Socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP)) },
		"iouring": func([]string) error {
			var params [120]byte
			fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafe.Pointer(&params)), 0)
			if e != 0 {
				return e
			}
			return unix.Close(int(fd))
		},
		"userns": func([]string) error {
			_, err := syscall.ForkExec("/nonexistent", nil, &syscall.ProcAttr{Sys: &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}})
			if errors.Is(err, syscall.ENOENT) {
				return nil // the clone worked
			}
			return err
		},
		"remount": func([]string) error { return unix.Mount("", "/", "", unix.MS_REMOUNT|unix.MS_BIND, "") },
		// exec runs a program directly, as a build tool or a test runner would: past the
		// shell, so only the kernel can refuse it.
		"exec": func(a []string) error { return runProgram(a[0], a[1:]) },
		// copyexec copies a program to a[1] (a writable place) and runs the copy, through the
		// dynamic loader when a[2] names it.
		"copyexec": func(a []string) error {
			data, err := os.ReadFile(a[0])
			if err != nil {
				return err
			}
			if err := os.WriteFile(a[1], data, 0o755); err != nil {
				return err
			}
			if len(a) > 2 {
				return runProgram(a[2], []string{a[1]})
			}
			return runProgram(a[1], nil)
		},
		// memfd runs a program from an anonymous memory file.
		"memfd": func(a []string) error {
			data, err := os.ReadFile(a[0])
			if err != nil {
				return err
			}
			fd, err := unix.MemfdCreate("x", 0)
			if err != nil {
				return err
			}
			if _, err := unix.Write(fd, data); err != nil {
				return err
			}
			return runProgram("/proc/self/fd/"+strconv.Itoa(fd), nil)
		},
		"hog": func(a []string) error {
			n, _ := strconv.Atoi(a[0])
			var keep [][]byte
			for i := 0; i < n; i++ {
				b := make([]byte, 64<<20)
				for j := 0; j < len(b); j += 4096 {
					b[j] = 1
				}
				keep = append(keep, b)
			}
			fmt.Println("allocated", len(keep)*64, "MiB")
			return nil
		},
	}
	attack, ok := attacks[name]
	if !ok {
		fmt.Println("unknown attack", name)
		return 2
	}
	fmt.Println(describe(attack(args)))
	return 0
}

func describe(err error) string {
	var errno syscall.Errno
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &errno):
		return unix.ErrnoName(errno)
	}
	return err.Error()
}

// runProgram runs a program with this process's output; its failure to start is the error.
func runProgram(name string, args []string) error {
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.ExtraFiles = nil
	err := cmd.Run()
	if exit, ok := errors.AsType[*exec.ExitError](err); ok {
		return fmt.Errorf("exit status %d", exit.ExitCode())
	}
	if pe, ok := errors.AsType[*os.PathError](err); ok {
		return pe.Err
	}
	return err
}

func closeFD(fd int, err error) error {
	if err == nil {
		unix.Close(fd)
	}
	return err
}

func sendUDP(addr string) error {
	ua, err := net.ResolveUDPAddr("udp4", addr)
	if err != nil {
		return err
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	sa := &unix.SockaddrInet4{Port: ua.Port}
	copy(sa.Addr[:], ua.IP.To4())
	return unix.Sendto(fd, []byte("exfiltrated"), 0, sa)
}

func connect(addr string, proto int) error {
	ta, err := net.ResolveTCPAddr("tcp4", addr)
	if err != nil {
		return err
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, proto)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	sa := &unix.SockaddrInet4{Port: ta.Port}
	copy(sa.Addr[:], ta.IP.To4())
	if err := unix.Connect(fd, sa); err != nil {
		return err
	}
	_, err = unix.Write(fd, []byte("exfiltrated"))
	return err
}
