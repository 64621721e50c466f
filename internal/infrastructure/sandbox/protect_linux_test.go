//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/sys/unix"
)

// TestProtectIndexWatchedChanges: with inotify, changes that leave no trace an lstat of the
// changed directory's parent would see are found by the next walk: a directory made readable
// again, a tree renamed into the workspace, a change consumed by a walk with other patterns,
// an overflowed event queue, and a closed watch (the lstat comparison takes over).
func TestProtectIndexWatchedChanges(t *testing.T) {
	ws := t.TempDir()
	p := func(rel string) string { return filepath.Join(ws, rel) }
	must(t, os.MkdirAll(p("a/b"), 0o755))
	must(t, os.MkdirAll(p("locked/in"), 0o755))
	must(t, os.WriteFile(p("locked/in/.env"), nil, 0o644))
	must(t, os.Chmod(p("locked"), 0))
	defer os.Chmod(p("locked"), 0o755)
	env := []string{p("**/.env")}
	pem := []string{p("**/*.pem")}
	idx := ProtectIndex{eager: true, now: func() time.Time { return time.Now().Add(2 * racyWindow) }}
	defer idx.Close()
	find := func(pats []string, want ...string) {
		t.Helper()
		got, _ := idx.Matches(ws, pats)
		for i := range got {
			got[i] = strings.TrimPrefix(got[i], ws+"/")
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Matches(%s) (-want +got):\n%s", filepath.Base(pats[0]), diff)
		}
	}
	if os.Getuid() == 0 {
		find(env, "locked/in/.env") // root reads the locked directory anyway
	} else {
		find(env) // unreadable: nothing found there
	}
	find(pem)
	must(t, os.Chmod(p("locked"), 0o755)) // IN_ATTRIB only: no entry was created
	find(env, "locked/in/.env")

	outside := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(outside, "tree/deep"), 0o755))
	must(t, os.WriteFile(filepath.Join(outside, "tree/deep/.env"), nil, 0o644))
	must(t, os.WriteFile(filepath.Join(outside, "tree/key.pem"), nil, 0o644))
	must(t, os.Rename(filepath.Join(outside, "tree"), p("a/b/tree")))
	find(env, "a/b/tree/deep/.env", "locked/in/.env")
	// The event for a/b was consumed by the walk with the other patterns: the records of
	// these must still see that a/b changed.
	find(pem, "a/b/tree/key.pem")

	if idx.watch == nil {
		t.Fatal("no inotify instance: too many open (fs.inotify.max_user_instances), or a leak")
	}
	must(t, os.WriteFile(p("a/.env"), nil, 0o644))
	idx.watch.event(0, unix.IN_Q_OVERFLOW)
	stats := idx.stats
	find(env, "a/.env", "a/b/tree/deep/.env", "locked/in/.env")
	if idx.stats == stats {
		t.Error("after an overflow the walk trusted its records without lstat")
	}

	idx.Close()
	must(t, os.WriteFile(p("a/b/.env"), nil, 0o644))
	old := time.Now().Add(-time.Hour)
	must(t, os.Chtimes(p("a/b"), old, old)) // ctime still moves: lstat sees it
	find(env, "a/.env", "a/b/.env", "a/b/tree/deep/.env", "locked/in/.env")
}

// TestProtectIndexSeesMounts: a file system mounted inside the workspace between two walks
// makes no inotify event in the directory it covers; the mount table's change makes the next
// walk check every directory with lstat, which sees the mount, and find what it holds.
func TestProtectIndexSeesMounts(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("mounting needs root")
	}
	// The mount, the walks and /proc/self/mountinfo must all be in one mount namespace: the
	// process's, on this thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if self, _ := os.Readlink("/proc/self/ns/mnt"); self != func() string { s, _ := os.Readlink("/proc/thread-self/ns/mnt"); return s }() {
		t.Skip("this thread is in a mount namespace of its own (another test unshared it)")
	}
	ws := t.TempDir()
	m := filepath.Join(ws, "a", "m")
	must(t, os.MkdirAll(m, 0o755))
	idx := ProtectIndex{eager: true, now: func() time.Time { return time.Now().Add(2 * racyWindow) }}
	defer idx.Close()
	pats := []string{filepath.Join(ws, "**/.env")}
	idx.Matches(ws, pats)
	if err := unix.Mount("tmpfs", m, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("mount tmpfs: %v", err)
	}
	defer unix.Unmount(m, unix.MNT_DETACH)
	must(t, os.WriteFile(filepath.Join(m, ".env"), nil, 0o644))
	epoch := idx.watch.epoch
	got, _ := idx.Matches(ws, pats)
	if want := []string{filepath.Join(m, ".env")}; !cmp.Equal(got, want) {
		var st unix.Stat_t
		unix.Lstat(m, &st)
		ents, _ := os.ReadDir(m)
		t.Errorf("after a mount inside the workspace: matches %q, want %q (epoch %d -> %d, m dev %d, %d entries, self %s)", got, want, epoch, idx.watch.epoch, st.Dev, len(ents), func() string { s, _ := os.Readlink("/proc/thread-self/ns/mnt"); return s }())
	}
}

// TestProtectIndexRootCreatedLater: a pattern's root that did not exist (or was no directory)
// at a walk has no watch, so its creation is no event: the walk's result is not kept, and the
// next walk finds what the new root holds.
func TestProtectIndexRootCreatedLater(t *testing.T) {
	ws := t.TempDir()
	idx := ProtectIndex{eager: true, now: func() time.Time { return time.Now().Add(2 * racyWindow) }}
	defer idx.Close()
	pats := []string{filepath.Join(ws, "secrets/**/*.pem")}
	if got, _ := idx.Matches(ws, pats); len(got) != 0 {
		t.Fatalf("matches before = %q", got)
	}
	must(t, os.MkdirAll(filepath.Join(ws, "secrets", "prod"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "secrets", "prod", "k.pem"), nil, 0o600))
	got, _ := idx.Matches(ws, pats)
	if want := []string{filepath.Join(ws, "secrets/prod/k.pem")}; !cmp.Equal(got, want) {
		t.Errorf("after the root was created: matches %q, want %q", got, want)
	}
	skips := idx.skips
	idx.Matches(ws, pats)
	if idx.skips == skips {
		t.Error("once the root exists and nothing changes, the walk is not spared")
	}
}

// TestProtectIndexWatchLimit: past awf's share of the user's inotify watches, directories are
// compared with lstat: changes in them are still found, and the walk is never spared.
func TestProtectIndexWatchLimit(t *testing.T) {
	ws := t.TempDir()
	for _, d := range []string{"a/b", "c/d", "e/f"} {
		must(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	idx := ProtectIndex{eager: true, now: func() time.Time { return time.Now().Add(2 * racyWindow) }}
	defer idx.Close()
	pats := []string{filepath.Join(ws, "**/.env")}
	idx.Matches(ws, pats)
	if idx.watch == nil {
		t.Fatal("no inotify instance")
	}
	idx.Close()
	idx.watch, idx.last = newDirWatch(), nil
	idx.watch.limit = 3 // of the 7 directories
	idx.Matches(ws, pats)
	if n := len(idx.watch.watching); n != 3 {
		t.Errorf("%d directories watched, want the limit, 3", n)
	}
	for _, d := range []string{"a/b", "c/d", "e/f"} {
		must(t, os.WriteFile(filepath.Join(ws, d, ".env"), nil, 0o600))
	}
	old := time.Now().Add(-time.Hour)
	for _, d := range []string{"a/b", "c/d", "e/f"} {
		must(t, os.Chtimes(filepath.Join(ws, d), old, old)) // ctime still moves
	}
	skips := idx.skips
	got, _ := idx.Matches(ws, pats)
	want := []string{filepath.Join(ws, "a/b/.env"), filepath.Join(ws, "c/d/.env"), filepath.Join(ws, "e/f/.env")}
	if !cmp.Equal(got, want) {
		t.Errorf("matches %q, want %q", got, want)
	}
	idx.Matches(ws, pats)
	if idx.skips != skips {
		t.Error("a walk through unwatched directories was spared")
	}
}

// TestProtectIndexWatchesOnceWalksCost: an index does not watch a small workspace, whose
// walks cost less than freeing an inotify instance that had watches; once its walks have
// cost watchFrom (directories compared plus entries read) it watches them, finds what
// changes, and spares the walks while nothing does. A large directory that changed less than
// racyWindow before each walk, read again at each, counts its entries.
func TestProtectIndexWatchesOnceWalksCost(t *testing.T) {
	ws := t.TempDir()
	for i := range 4 {
		must(t, os.MkdirAll(filepath.Join(ws, "small", strconv.Itoa(i)), 0o755))
	}
	idx := ProtectIndex{now: func() time.Time { return time.Now().Add(2 * racyWindow) }}
	defer idx.Close()
	cost := func(x *ProtectIndex) int { return x.stats + x.entries }
	small := []string{filepath.Join(ws, "small/**/.env")}
	for range 20 {
		idx.Matches(ws, small)
	}
	if idx.watch != nil || idx.skips != 0 {
		t.Fatalf("after 20 walks of 5 directories (cost %d): watch %v, %d walks spared; want no watch", cost(&idx), idx.watch != nil, idx.skips)
	}
	watchBy := func(x *ProtectIndex, pats []string, maxWalks int) {
		t.Helper()
		for walks := 1; x.watch == nil; walks++ {
			before := cost(x)
			x.Matches(ws, pats)
			switch {
			case x.watch != nil && before < watchFrom:
				t.Fatalf("watching began at cost %d, want %d", before, watchFrom)
			case x.watch == nil && before >= watchFrom:
				t.Fatalf("no watch at a walk that began at cost %d", before)
			case walks > maxWalks:
				t.Fatalf("no watch after %d walks (cost %d)", walks, cost(x))
			}
		}
		skips := x.skips
		x.Matches(ws, pats)
		if x.skips != skips+1 {
			t.Error("once watched and unchanged, the walk is not spared")
		}
	}

	for i := range 2_599 { // with the root, 2,600 directories: four walks cost watchFrom
		must(t, os.MkdirAll(filepath.Join(ws, "big", strconv.Itoa(i)), 0o755))
	}
	big := []string{filepath.Join(ws, "big/**/.env")}
	watchBy(&idx, big, 5)
	must(t, os.WriteFile(filepath.Join(ws, "big", "17", ".env"), nil, 0o600))
	if got, _ := idx.Matches(ws, big); !cmp.Equal(got, []string{filepath.Join(ws, "big/17/.env")}) {
		t.Errorf("a file created in a watched directory: matches %q", got)
	}

	churn := filepath.Join(ws, "churn")
	must(t, os.MkdirAll(churn, 0o755))
	for i := range 4_000 {
		must(t, os.WriteFile(filepath.Join(churn, strconv.Itoa(i)), nil, 0o644))
	}
	fresh := ProtectIndex{} // the real clock: churn changed just now, so it is read at each walk
	defer fresh.Close()
	watchBy(&fresh, []string{filepath.Join(churn, "**/.env")}, 4)
}
