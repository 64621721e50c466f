package awf_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Runnable examples: a fenced code block of README.md or docs/*.md right after the line
//
//	<!-- runnable -->            (or <!-- runnable exit=N --> for a block that must fail with N)
//
// is run by TestRunnableDocs, so that the commands the docs show cannot drift from awf. The
// whole block is one `sh -e` script (its first failing command ends it); it runs offline, in a
// fresh copy of the repository with the working directory at its root, as the docs assume,
// with a HOME of its own, no API keys and no CI variable. `awf`, `bin/awf` and `go run
// ./cmd/awf` are the awf binary the test built. It must exit 0 (or N). The blocks of one file
// run in order, in one copy: a later block sees what an earlier one made. Mark only examples
// that need no network, no account and no terminal.
var runnableMark = regexp.MustCompile(`^<!-- runnable(?: exit=(\d+))? -->$`)

// runnable is one marked block: where it is, its script and the exit code it must end with.
type runnable struct {
	line   int
	script string
	exit   int
}

// runnableBlocks returns the marked blocks of a Markdown document; a mark not followed by a
// fenced block is an error.
func runnableBlocks(doc []byte) ([]runnable, error) {
	var out []runnable
	lines := strings.Split(string(doc), "\n")
	for i := 0; i < len(lines); i++ {
		m := runnableMark.FindStringSubmatch(strings.TrimSpace(lines[i]))
		if m == nil {
			continue
		}
		if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "```") {
			return nil, fmt.Errorf("line %d: a runnable mark must be followed by a fenced code block", i+1)
		}
		b := runnable{line: i + 2}
		if m[1] != "" {
			b.exit, _ = strconv.Atoi(m[1])
		}
		var body []string
		for i += 2; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			body = append(body, lines[i])
		}
		if i == len(lines) {
			return nil, fmt.Errorf("line %d: the runnable block is not closed", b.line)
		}
		b.script = strings.ReplaceAll(strings.Join(body, "\n"), "go run ./cmd/awf", "awf")
		out = append(out, b)
	}
	return out, nil
}

func TestRunnableDocs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the docs' examples, some of which build and test a Go project")
	}
	docs, _ := filepath.Glob("docs/*.md")
	docs = append([]string{"README.md"}, docs...)
	bin := buildAwf(t)
	total := 0
	for _, doc := range docs {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := runnableBlocks(data)
		if err != nil {
			t.Errorf("%s: %v", doc, err)
			continue
		}
		if len(blocks) == 0 {
			continue
		}
		total += len(blocks)
		t.Run(doc, func(t *testing.T) {
			repo := copyRepo(t)
			for _, b := range blocks {
				out, code := runScript(t, repo, bin, b.script)
				if code != b.exit {
					t.Errorf("%s:%d: exit %d, want %d\n%s\noutput:\n%s", doc, b.line, code, b.exit, b.script, out)
				}
			}
		})
	}
	if total < 5 {
		t.Errorf("%d runnable blocks in README.md and docs/, want the quick start and the offline examples", total)
	}
	t.Run("awf run --help", func(t *testing.T) {
		repo := copyRepo(t)
		help, code := runScript(t, repo, bin, "awf run --help")
		if code != 0 {
			t.Fatalf("awf run --help: exit %d\n%s", code, help)
		}
		_, examples, _ := strings.Cut(help, "Examples:\n")
		n := 0
		for line := range strings.Lines(examples) {
			if !strings.HasPrefix(line, "  awf ") {
				break
			}
			n++
			if out, code := runScript(t, repo, bin, strings.TrimSpace(line)); code != 0 {
				t.Errorf("the example %q of awf run --help: exit %d\n%s", strings.TrimSpace(line), code, out)
			}
		}
		if n == 0 {
			t.Errorf("awf run --help shows no examples:\n%s", help)
		}
	})
}

// buildAwf builds awf into a directory of its own, to be put first on PATH.
func buildAwf(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "awf"), "./cmd/awf")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build awf: %v\n%s", err, out)
	}
	return dir
}

// copyRepo copies the repository's files (not .git, .awf or bin) into a temporary directory,
// with bin/awf for the docs that use the binary `make build` leaves there.
func copyRepo(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "awf")
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (path == ".git" || path == ".awf" || path == "bin") {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, path)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, info.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatalf("copy the repository: %v", err)
	}
	return dst
}

// runScript runs script with sh -e in repo, awf from bin first on PATH, and returns its
// combined output and exit code.
func runScript(t *testing.T, repo, bin, script string) (string, int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(repo, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(repo, "bin", "awf")); errors.Is(err, fs.ErrNotExist) {
		if err := os.Symlink(filepath.Join(bin, "awf"), filepath.Join(repo, "bin", "awf")); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.CommandContext(t.Context(), "sh", "-e", "-c", script)
	cmd.Dir = repo
	cmd.Env = scriptEnv(t, filepath.Dir(repo), bin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if exit, ok := errors.AsType[*exec.ExitError](err); ok {
		return out.String(), exit.ExitCode()
	} else if err != nil {
		t.Fatalf("run %q: %v", script, err)
	}
	return out.String(), 0
}

// scriptEnv is the environment of a runnable block: PATH with awf first, a HOME of its own
// under dir, Go's settings and caches as they are (the examples build Go code, offline), and
// nothing else: no API keys, no CI, no AWF_* settings.
func scriptEnv(t *testing.T, dir, bin string) []string {
	t.Helper()
	env := []string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + filepath.Join(dir, "home"),
		"LANG=C.UTF-8",
	}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GO") {
			env = append(env, kv)
		}
	}
	goenv, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(goenv))
	for _, name := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		if sc.Scan() {
			env = append(env, name+"="+sc.Text()) // the caches of $HOME, which the block's HOME is not
		}
	}
	return append(env, "GOTOOLCHAIN=local")
}
