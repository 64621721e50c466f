//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// floors builds, from the repository in the current directory, the two programs that bound
// what awf's start-up can cost: an empty Go program (the Go runtime alone) and one that links
// every package awf links except awf's own and does nothing (the runtime, plus the package
// initialization and the size of awf's dependencies). Both are built as bin/awf is (static,
// stripped) in dir, inside a copy of awf's go.mod so that the dependencies are the same
// versions. It returns their paths.
func floors(dir string) (empty, deps string, err error) {
	list := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./cmd/awf")
	list.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := list.Output()
	if err != nil {
		return "", "", fmt.Errorf("go list the packages of ./cmd/awf: %w", err)
	}
	var imports strings.Builder
	for _, p := range strings.Fields(string(out)) {
		if importable(p) {
			fmt.Fprintf(&imports, "\t_ %q\n", p)
		}
	}
	src := filepath.Join(dir, "floor")
	for _, f := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", "", err
		}
		if err := writeFile(filepath.Join(src, f), string(data)); err != nil {
			return "", "", err
		}
	}
	progs := map[string]string{
		"empty": "package main\n\nfunc main() {}\n",
		"deps":  "package main\n\nimport (\n" + imports.String() + ")\n\nfunc main() {}\n",
	}
	for name, code := range progs {
		if err := writeFile(filepath.Join(src, name, "main.go"), code); err != nil {
			return "", "", err
		}
		build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join(dir, name), "./"+name)
		build.Dir = src
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("build the %s floor: %w\n%s", name, err, out)
		}
	}
	return filepath.Join(dir, "empty"), filepath.Join(dir, "deps"), nil
}

// importable reports whether a package awf links can be imported from another module: not
// awf's own, not internal to the standard library or a dependency, not the runtime's.
func importable(p string) bool {
	switch {
	case strings.HasPrefix(p, "github.com/awf-dev/awf"), p == "unsafe", p == "C",
		strings.HasPrefix(p, "vendor/"), strings.HasPrefix(p, "internal/"),
		strings.Contains(p, "/internal/"), strings.HasSuffix(p, "/internal"):
		return false
	}
	return true
}

func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}
