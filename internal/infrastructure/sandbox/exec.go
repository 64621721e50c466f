package sandbox

import (
	"bufio"
	"debug/elf"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ExecMode values of a policy's and a restriction's `exec:`.
const (
	// ExecAny is the default: any program the read paths hold may be executed by the
	// processes of a tool; the command allowlist is checked on the shell line (L1).
	ExecAny = "any"
	// ExecAllowlist makes the kernel enforce the command allowlist for every process of the
	// tool: only the allowed programs, the interpreters they start with and their shared
	// libraries can be executed or mapped executable.
	ExecAllowlist = "allowlist"
)

// ExecSet is what a process may execute under an exec allowlist, resolved in the helper from
// the spec's commands and the script's PATH (ResolveExec).
type ExecSet struct {
	// Programs are files and directories (everything beneath) processes may execute: the
	// allowed commands, and the interpreters (ELF PT_INTERP, #! lines) they start with.
	Programs []string
	// Libraries are the shared libraries the programs need (DT_NEEDED, recursively): they
	// are mapped executable by the dynamic loader, which needs no execute right but an exec
	// mount.
	Libraries []string
}

// ResolveExec works out the ExecSet of s for a script whose PATH is path: a command name is
// every regular file of that name in PATH's absolute directories; an absolute command is that
// file, or that directory and everything beneath it. Nothing inside a writable path (or the
// private temporary directory), nor a directory holding one, is ever executable: a process
// could replace it. Symbolic links
// are resolved; missing commands are left out (running them fails as if they were refused).
func ResolveExec(s *Spec, path string) ExecSet {
	untrusted := slices.Clone(s.Write)
	if s.Plan != nil && s.Plan.TempDir != "" {
		untrusted = append(untrusted, s.Plan.TempDir)
	}
	r := execResolver{untrusted: untrusted, seen: map[string]bool{}}
	for _, c := range s.Commands {
		if filepath.IsAbs(c) {
			r.program(c)
			continue
		}
		for _, dir := range filepath.SplitList(path) {
			if filepath.IsAbs(dir) {
				r.program(filepath.Join(dir, c))
			}
		}
	}
	slices.Sort(r.set.Programs)
	slices.Sort(r.set.Libraries)
	return r.set
}

type execResolver struct {
	untrusted []string
	seen      map[string]bool
	set       ExecSet
	libDirs   []string
}

// real resolves p, and reports whether it may be made executable.
func (r *execResolver) real(p string) (string, os.FileInfo, bool) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil || r.seen[real] || slices.ContainsFunc(r.untrusted, func(u string) bool {
		return within(real, u) || within(p, u) || within(u, real)
	}) {
		return "", nil, false
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", nil, false
	}
	r.seen[real] = true
	return real, fi, true
}

// program adds the file or directory p, and what a file needs to start.
func (r *execResolver) program(p string) {
	real, fi, ok := r.real(p)
	if !ok {
		return
	}
	r.set.Programs = append(r.set.Programs, real)
	if fi.IsDir() {
		r.dir(real)
		return
	}
	if !fi.Mode().IsRegular() {
		return
	}
	if interp := shebang(real); interp != "" {
		r.program(interp)
		return
	}
	r.elf(real)
}

// maxExecDirWalk bounds the files of an allowed directory whose loader and libraries are
// looked up.
const maxExecDirWalk = 5000

// dir adds the loader and libraries of the executable files beneath an allowed directory.
func (r *execResolver) dir(root string) {
	seen := 0
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if seen++; seen > maxExecDirWalk {
			return filepath.SkipAll
		}
		if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			r.elf(p)
		}
		return nil
	})
}

// elf adds the dynamic loader and the shared libraries of an ELF file.
func (r *execResolver) elf(p string) {
	f, err := elf.Open(p)
	if err != nil {
		return
	}
	defer f.Close()
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			data := make([]byte, prog.Filesz)
			if _, err := prog.ReadAt(data, 0); err == nil {
				r.program(strings.TrimRight(string(data), "\x00"))
			}
		}
	}
	needed, _ := f.ImportedLibraries()
	var search []string
	for _, tag := range []elf.DynTag{elf.DT_RPATH, elf.DT_RUNPATH} {
		paths, _ := f.DynString(tag)
		for _, list := range paths {
			for _, d := range strings.Split(list, ":") {
				search = append(search, strings.ReplaceAll(d, "$ORIGIN", filepath.Dir(p)))
			}
		}
	}
	for _, name := range needed {
		r.library(name, search, f.Machine)
	}
}

// library finds a shared library as the dynamic loader would (RPATH/RUNPATH, then the
// system's library directories) and adds it with its own dependencies.
func (r *execResolver) library(name string, search []string, machine elf.Machine) {
	candidates := []string{name}
	if !strings.Contains(name, "/") {
		candidates = nil
		for _, d := range append(search, r.systemLibDirs()...) {
			candidates = append(candidates, filepath.Join(d, name))
		}
	}
	for _, c := range candidates {
		f, err := elf.Open(c)
		if err != nil {
			continue
		}
		match := f.Machine == machine
		f.Close()
		if !match {
			continue
		}
		if real, _, ok := r.real(c); ok {
			r.set.Libraries = append(r.set.Libraries, real)
			r.elf(real)
		}
		return
	}
}

// systemLibDirs are the directories of /etc/ld.so.conf (and its includes) and the defaults.
func (r *execResolver) systemLibDirs() []string {
	if r.libDirs == nil {
		r.libDirs = append(ldSoConf("/etc/ld.so.conf", 0),
			"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu",
			"/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib")
	}
	return r.libDirs
}

// ldSoConf reads the library directories of an ld.so.conf file, following includes.
func ldSoConf(path string, depth int) []string {
	f, err := os.Open(path)
	if err != nil || depth > 4 {
		return nil
	}
	defer f.Close()
	var dirs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "include "); ok {
			matches, _ := filepath.Glob(strings.TrimSpace(rest))
			for _, m := range matches {
				dirs = append(dirs, ldSoConf(m, depth+1)...)
			}
		} else if filepath.IsAbs(line) {
			dirs = append(dirs, line)
		}
	}
	return dirs
}

// shebang returns the interpreter of a script ("#!/bin/sh -e" gives /bin/sh), or "".
func shebang(p string) string {
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, _ := bufio.NewReaderSize(f, 256).ReadString('\n')
	rest, ok := strings.CutPrefix(line, "#!")
	if !ok {
		return ""
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 || !filepath.IsAbs(fields[0]) {
		return ""
	}
	return fields[0]
}
