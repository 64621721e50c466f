//go:build linux

// Package landlock applies awf's file system and TCP rules with Landlock
// (github.com/landlock-lsm/go-landlock), on every thread of the calling process, for good:
// the process and everything it starts keep them. It owns the choice of access rights;
// which paths and ports are allowed is the caller's.
package landlock

import (
	"errors"
	"fmt"
	"os"

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
	// Scoped says signals and abstract unix sockets are confined to the sandbox (ABI 6).
	Scoped bool
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
	res.Scoped = res.ABI >= 6
	if err := cfg.Restrict(rules...); err != nil {
		return res, fmt.Errorf("landlock: restrict: %w", err)
	}
	return res, nil
}
