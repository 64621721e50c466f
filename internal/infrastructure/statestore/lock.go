package statestore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/infrastructure/regfile"
)

// A run's lock is <dir>/<run-id>.lock, locked exclusively (flock on Unix) by the process that
// runs or resumes the run, for as long as it does. The kernel drops the lock when that process
// ends however it ends (kill -9 included), so a run cut off can be resumed at once: there is
// no stale lock to clean up. The file holds the owner's pid, host and start time, for the
// error a second owner gets; the lock, not the file, says whether the run is owned.
//
// The owner deletes the file before unlocking it. A process that locked the file meanwhile
// holds the lock of a name that no longer exists; it sees that (the path no longer leads to
// the file it locked) and tries again with a new file, so two owners can never both believe
// they hold the run.
const lockExt = ".lock"

// lockAttempts bounds the tries of Lock: a try fails for a moment when the owner deletes the
// file, or when Owner briefly holds a shared lock on it to learn whether anyone owns the run.
const lockAttempts = 20

// lockRetryDelay is the pause between two tries of Lock.
const lockRetryDelay = 5 * time.Millisecond

// lockPath returns the lock file of run id.
func (s *Store) lockPath(id string) string { return filepath.Join(s.dir, id+lockExt) }

// Lock makes this process the owner of run id until unlock is called or the process ends;
// see ports.StateStore. A run owned by another process, or by another Lock of this one, is a
// *ports.RunBusyError naming the owner's pid and host.
func (s *Store) Lock(ctx context.Context, id string) (unlock func(), err error) {
	if err := CheckID(id); err != nil {
		return nil, fmt.Errorf("lock run: %w", err)
	}
	if err := ensureDir(s.dir); err != nil {
		return nil, fmt.Errorf("lock run %s: %w", id, err)
	}
	p := s.lockPath(id)
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f, err := tryLock(p)
		if err == nil {
			writeOwner(f)
			var once sync.Once
			return func() { once.Do(func() { unlockFile(f, p) }) }, nil
		}
		if !errors.Is(err, errLocked) && !errors.Is(err, errLockMoved) {
			return nil, fmt.Errorf("lock run %s: %w", id, err)
		}
		if attempt == lockAttempts {
			o, _ := readOwner(p)
			return nil, &ports.RunBusyError{ID: id, Owner: o}
		}
		time.Sleep(lockRetryDelay)
	}
}

// Owner reports the process that owns run id; see ports.StateStore. A run without a lock
// file, or whose lock file nobody holds, has no owner.
func (s *Store) Owner(id string) (ports.RunOwner, bool) {
	if CheckID(id) != nil {
		return ports.RunOwner{}, false
	}
	p := s.lockPath(id)
	if !heldByAnyone(p) {
		return ports.RunOwner{}, false
	}
	o, _ := readOwner(p)
	return o, true
}

var (
	// errLocked says that another owner holds the lock.
	errLocked = errors.New("the run is locked")
	// errLockMoved says that the file locked was deleted or replaced meanwhile.
	errLockMoved = errors.New("the lock file changed while it was locked")
)

// tryLock opens the lock file at p, creating it, and locks it exclusively without waiting.
// It returns errLocked when another owner holds it and errLockMoved when the file locked is
// no longer the one at p.
func tryLock(p string) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, fileMode)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	locked, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	if now, err := os.Stat(p); err != nil || !os.SameFile(locked, now) {
		_ = f.Close()
		return nil, errLockMoved
	}
	return f, nil
}

// unlockFile deletes the lock file at p, then releases the lock by closing f.
func unlockFile(f *os.File, p string) {
	_ = os.Remove(p)
	_ = f.Close()
}

// writeOwner records this process in the locked file f. A failure only leaves the owner
// unnamed in the error a second owner gets.
func writeOwner(f *os.File) {
	host, _ := os.Hostname()
	text := fmt.Sprintf("pid: %d\nhost: %s\nsince: %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	// Cut to length only when a killed owner left more: a truncation costs milliseconds on
	// ext4 (it commits its journal), and the file is nearly always new.
	if _, err := f.WriteAt([]byte(text), 0); err == nil {
		if fi, err := f.Stat(); err == nil && fi.Size() > int64(len(text)) {
			_ = f.Truncate(int64(len(text)))
		}
	}
}

// readOwner reads what writeOwner wrote in the lock file at p; the fields it cannot read
// stay zero.
func readOwner(p string) (ports.RunOwner, error) {
	var o ports.RunOwner
	f, err := regfile.Open(p)
	if err != nil {
		return o, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ": ")
		switch k {
		case "pid":
			o.PID, _ = strconv.Atoi(v)
		case "host":
			o.Host = v
		case "since":
			o.Since, _ = time.Parse(time.RFC3339, v)
		}
	}
	return o, sc.Err()
}
