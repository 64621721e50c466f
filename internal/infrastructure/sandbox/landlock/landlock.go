//go:build linux

// Package landlock applies awf's file system and TCP rules with Landlock
// (github.com/landlock-lsm/go-landlock), on every thread of the calling process, for good:
// the process and everything it starts keep them. It owns the choice of access rights;
// which paths and ports are allowed is the caller's.
//
// The IPC scopes (ABI 6: no signal to, and no connection to an abstract unix socket of, a
// process outside the domain) are not part of Apply: they are a property of a Landlock
// domain, and before ABI 8 (TSYNC) go-landlock enforces a ruleset thread by thread, which
// gives each thread of a Go process a domain of its own. Scoped that way, the programs one
// thread started could neither be signalled from another thread of the helper (kill -1 said
// yes and did nothing: a call's leftovers survived it) nor reach each other's abstract
// sockets. Programs (NewPrograms) is instead one thread, with the scopes stacked on its own
// domain, on which every program is started: they all share that domain, and the helper's
// other threads, unscoped, may still signal them.
package landlock

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Rules are what a sandboxed process may reach.
type Rules struct {
	// Read are directories or files (and everything beneath) the process may read and,
	// unless RestrictExec, execute.
	Read []string
	// Write are directories or files the process may also write, create in, remove from
	// and rename within; never make device nodes in.
	Write []string
	// RestrictExec takes the execute right away from Read and Write: only Exec's files and
	// directories may be executed (and read).
	RestrictExec bool
	Exec         []string
	// RestrictNet denies every TCP bind, and every TCP connect except to ConnectTCP.
	RestrictNet bool
	ConnectTCP  []uint16
}

// Result says what Apply enforced.
type Result struct {
	// ABI is the kernel's Landlock ABI version.
	ABI int
	// Net says the TCP rules are enforced (ABI 4 and later).
	Net bool
	// Missing are the paths of the rules that did not exist and were skipped.
	Missing []string
}

// ErrUnsupported means the kernel has no Landlock.
var ErrUnsupported = errors.New("landlock: not supported by this kernel (or not enabled at boot)")

// Access rights. Write leaves out making character and block devices: a sandbox never
// needs them, and a root that could not drop its uid must not get raw disks.
const (
	readFile  = ll.AccessFSExecute | ll.AccessFSReadFile
	readDir   = readFile | ll.AccessFSReadDir
	writeFile = readFile | ll.AccessFSWriteFile | ll.AccessFSTruncate
	writeDir  = readDir | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSRemoveDir |
		ll.AccessFSRemoveFile | ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock |
		ll.AccessFSMakeFifo | ll.AccessFSMakeSym
)

// ABI returns the kernel's Landlock ABI version, 0 when there is none.
func ABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

// Apply restricts the calling process to r, on every thread. It enforces what the kernel
// supports (best effort within the ABI: older kernels handle fewer rights) and fails with
// ErrUnsupported when there is no Landlock at all, so that the caller decides whether that
// is fatal.
func Apply(r Rules) (Result, error) {
	res := Result{ABI: ABI()}
	if res.ABI < 1 {
		return res, ErrUnsupported
	}
	var rules []landlock.Rule
	add := func(dirRights, fileRights landlock.AccessFSSet, paths []string) error {
		for _, p := range paths {
			fi, err := os.Stat(p)
			switch {
			case errors.Is(err, os.ErrNotExist):
				res.Missing = append(res.Missing, p)
			case err != nil:
				return fmt.Errorf("landlock: rule for %s: %w", p, err)
			case fi.IsDir():
				rule := landlock.PathAccess(dirRights, p)
				if dirRights&ll.AccessFSMakeReg != 0 && res.ABI >= 2 {
					rule = rule.WithRefer() // renames across directories of the tree
				}
				rules = append(rules, rule)
			default:
				rules = append(rules, landlock.PathAccess(fileRights, p))
			}
		}
		return nil
	}
	noExec := landlock.AccessFSSet(0)
	if r.RestrictExec {
		noExec = ll.AccessFSExecute
		if err := add(readDir, readFile, r.Exec); err != nil {
			return res, err
		}
	}
	if err := add(readDir&^noExec, readFile&^noExec, r.Read); err != nil {
		return res, err
	}
	if err := add(writeDir&^noExec, writeFile&^noExec, r.Write); err != nil {
		return res, err
	}
	cfg := landlock.V11.BestEffort()
	if r.RestrictNet {
		for _, port := range r.ConnectTCP {
			rules = append(rules, landlock.ConnectTCP(port))
		}
		res.Net = res.ABI >= 4
	} else {
		cfg.HandledAccessNet = 0
	}
	cfg.Scoped = 0 // per domain: on the thread of Programs only (see the package doc)
	if err := cfg.Restrict(rules...); err != nil {
		return res, fmt.Errorf("landlock: restrict: %w", err)
	}
	return res, nil
}

// scopes are the IPC scopes of the programs' domain: signals and abstract unix sockets.
const scopes = ll.ScopeAbstractUnixSocket | ll.ScopeSignal

// Programs is the thread on which a sandboxed process starts its programs: its Landlock
// domain is the process's (Apply) with the IPC scopes stacked on it, so every program started
// on it (and everything those start) is in one domain: they may signal each other and reach
// each other's abstract unix sockets, nothing outside. A nil *Programs starts on the calling
// thread.
type Programs struct {
	starts chan func()
}

// NewPrograms starts the thread of Programs, after Apply (no_new_privs is set on every
// thread). With a kernel older than ABI 6 (no scopes) it returns nil and no error.
func NewPrograms() (*Programs, error) {
	if ABI() < 6 {
		return nil, nil
	}
	p := &Programs{starts: make(chan func())}
	ready := make(chan error)
	go func() {
		runtime.LockOSThread() // for good: the thread is the domain's, it never runs another goroutine
		ready <- scopeThread()
		for start := range p.starts {
			start()
		}
	}()
	if err := <-ready; err != nil {
		return nil, err
	}
	return p, nil
}

// scopeThread stacks the IPC scopes on the calling thread's domain, on that thread only.
func scopeThread() error {
	fd, err := ll.LandlockCreateRuleset(&ll.RulesetAttr{Scoped: scopes}, 0)
	if err != nil {
		return fmt.Errorf("landlock: scope ruleset: %w", err)
	}
	defer syscall.Close(fd)
	if err := ll.LandlockRestrictSelf(fd, 0); err != nil {
		return fmt.Errorf("landlock: scope the programs' thread: %w", err)
	}
	return nil
}

// Start runs start, which starts a program (exec.Cmd.Start: the child is cloned from the
// calling thread), on the programs' thread, and returns its error.
func (p *Programs) Start(start func() error) error {
	if p == nil {
		return start()
	}
	done := make(chan error, 1)
	p.starts <- func() { done <- start() }
	return <-done
}
