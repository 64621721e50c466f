package config

import (
	"fmt"
	"os"
	"path/filepath"
)

// DirName is the name of a project's awf directory: config.yaml, runs/, audit.jsonl, tools.
const DirName = ".awf"

// DirEnv names the environment variable that sets the project's awf directory outright, as
// GIT_DIR does for git; the --awf-dir flag wins over it.
const DirEnv = "AWF_DIR"

// Project is where a project keeps its awf directory. Every awf command run anywhere in the
// project uses the same one, so that a run started in a subdirectory shows in `awf history`
// at the root.
type Project struct {
	// Dir is the absolute path of the awf directory; it need not exist yet (it is created
	// when something is first written there).
	Dir string
	// Root is the directory that holds Dir (for an override, Dir's parent): relative paths in
	// the project config file resolve against it.
	Root string
	// Found says how Dir was chosen: "--awf-dir", "AWF_DIR", "found", "git work tree" or
	// "working directory".
	Found string
	// Refused says why the .awf at Dir, which exists, must not be used ("" when it may or
	// does not exist): see FindProject. Commands that read or write the project refuse to run.
	Refused string
}

// FindProject finds the project of a command run in cwd (absolute), as git finds its
// repository. An override (the --awf-dir flag, else AWF_DIR; relative to cwd) is used as
// given. Otherwise each directory from cwd upwards is tried in turn: the first one holding a
// .awf directory of the current user is the project root; the top of a git work tree (a
// directory holding .git) ends the search and is the root, so that a first run anywhere in a
// repository creates .awf there. The search also ends at the filesystem root, before the home
// directory (a ~/.awf is used only by commands run in home itself: a stray one must not
// collect the runs of every project below it) and before a directory anyone may write to
// (/tmp): there anyone could plant a .awf, and its config.yaml can name commands awf runs
// (agent CLIs). For the same reason a .awf that another user could have put there or could
// change is passed over (see refusal), as git refuses a repository of "dubious ownership".
// When nothing is found, the project is cwd, as `git init` would make it; there, or at the
// top of a git work tree, a .awf that exists but is passed over sets Refused.
func FindProject(cwd, home, flag, env string) Project {
	for _, o := range []struct{ value, source string }{{flag, "--awf-dir"}, {env, DirEnv}} {
		if o.value != "" {
			dir := o.value
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(cwd, dir)
			}
			dir = filepath.Clean(dir)
			return Project{Dir: dir, Root: filepath.Dir(dir), Found: o.source}
		}
	}
	home = filepath.Clean(home)
	for d := cwd; ; {
		if d != cwd && (d == home || sharedDir(d)) {
			break
		}
		exists, why := refusal(d)
		if exists && why == "" {
			return Project{Dir: filepath.Join(d, DirName), Root: d, Found: "found"}
		}
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return Project{Dir: filepath.Join(d, DirName), Root: d, Found: "git work tree", Refused: why}
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	_, why := refusal(cwd)
	return Project{Dir: filepath.Join(cwd, DirName), Root: cwd, Found: "working directory", Refused: why}
}

// refusal reports whether dir holds a .awf and why awf must not use it ("" when it may): it
// is not a directory, or someone but the current user could have made it or could change
// what it holds. The .awf itself (a symbolic link's own owner as well as its target's) must
// be the user's and not writable by anyone, and dir must be the user's or root's, or its
// owner could put another .awf in its place at any time.
func refusal(dir string) (exists bool, why string) {
	p := filepath.Join(dir, DirName)
	li, err := os.Lstat(p)
	if err != nil {
		return false, ""
	}
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return true, fmt.Sprintf("%s: %v", p, err)
	case !fi.IsDir():
		return true, p + " is not a directory"
	case !ownedByUser(li) || !ownedByUser(fi):
		return true, p + " belongs to another user"
	case fi.Mode().Perm()&0o002 != 0:
		return true, p + " is writable by anyone"
	}
	if hi, err := os.Stat(dir); err != nil || !heldByUser(hi) {
		return true, p + " is in " + dir + ", a directory of another user, who could replace it"
	}
	return true, ""
}

// Path returns p joined to a path inside the project: as written relative to cwd when the
// project is cwd itself (".awf/runs", as awf has always shown it), absolute otherwise.
func (p Project) Path(cwd string, elem ...string) string {
	full := filepath.Join(append([]string{p.Dir}, elem...)...)
	if p.Root == cwd && p.Dir == filepath.Join(cwd, DirName) {
		if rel, err := filepath.Rel(cwd, full); err == nil {
			return rel
		}
	}
	return full
}

// sharedDir reports whether anyone may create entries in dir (the sticky /tmp, /var/tmp).
func sharedDir(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.Mode().Perm()&0o002 != 0
}
