package manifest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/infrastructure/manifest"
)

const layout = "../../../testdata/tools/layout"

func names(set tool.Set) []string {
	var out []string
	for _, m := range set.Manifests {
		out = append(out, m.Ref()+"@"+m.Version)
	}
	for _, a := range set.Aliases {
		out = append(out, "alias:"+a.Name+"->"+a.Target)
	}
	for _, w := range set.Wrapped {
		out = append(out, "wrapped:"+w.Name)
	}
	return out
}

func TestProjectDir(t *testing.T) {
	d := manifest.Project(filepath.Join(layout, "project"))
	if d.Level() != tool.LevelProject {
		t.Errorf("Level() = %v", d.Level())
	}
	set, err := d.Load()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(layout, "project", ".awf")
	want := []string{"hello@0.1.0", "alias:Sh->run_command", "wrapped:list"}
	if diff := cmp.Diff(want, names(set)); diff != "" {
		t.Errorf("Load (-want +got):\n%s", diff)
	}
	wantProbs := []string{
		root + "/tools/broken/config.yaml:6:1: output: unknown variable {oops} (known here: input, o)",
		root + `/tools/mismatch/config.yaml:1:1: name "other" does not match its directory "mismatch" (tools/<name>/config.yaml)`,
		root + `/wrapped-tools/b-list-again.tool:1:1: warning: tool "list" is already defined by ` + root + `/wrapped-tools/a-list.tool; this definition is ignored`,
		root + `/wrapped-tools/c-malformed.tool:6:1: unknown annotation @comand (known: @title, @name, @wrapped, @command, @param) (did you mean "command"?)`,
	}
	if diff := cmp.Diff(wantProbs, texts(set.Problems)); diff != "" {
		t.Errorf("Load problems (-want +got):\n%s", diff)
	}
}

func TestUserAndInstalled(t *testing.T) {
	abs, _ := filepath.Abs(layout)
	env := map[string]string{"XDG_CONFIG_HOME": filepath.Join(abs, "user"), "HOME": "/home/someone"}
	user := manifest.User(func(k string) string { return env[k] })
	if user.Root != filepath.Join(abs, "user", "awf") || user.Level() != tool.LevelUser {
		t.Errorf("User = %+v", user)
	}
	set, err := user.Load()
	if err != nil || !cmp.Equal(names(set), []string{"hello@", "alias:Bash->shell"}) {
		t.Errorf("User.Load = %v, %v", names(set), err)
	}
	env = map[string]string{"HOME": "/home/someone", "XDG_CONFIG_HOME": "relative/ignored"}
	if got := manifest.User(func(k string) string { return env[k] }).Root; got != "/home/someone/.config/awf" {
		t.Errorf("User root without XDG_CONFIG_HOME = %q", got)
	}
	if got := manifest.DefaultInstallDir(func(k string) string { return env[k] }); got != "/home/someone/.local/share/awf/tools" {
		t.Errorf("DefaultInstallDir = %q", got)
	}
	if got := manifest.DefaultInstallDir(func(k string) string { return map[string]string{"XDG_DATA_HOME": "/data"}[k] }); got != "/data/awf/tools" {
		t.Errorf("DefaultInstallDir(XDG_DATA_HOME) = %q", got)
	}

	inst := manifest.Installed{Dir: filepath.Join(layout, "installed")}
	set, err = inst.Load()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"acme/fmt@1.0.0", "acme/fmt@1.2.0", "acme/lint@2.0.0"}, names(set)); diff != "" {
		t.Errorf("Installed.Load (-want +got):\n%s", diff)
	}
	dir := filepath.Join(layout, "installed", "acme")
	wantProbs := []string{
		dir + `/fmt/latest/config.yaml:1:1: installed version directory "latest" is not a semantic version`,
		dir + "/wrongver/2.0.0/config.yaml:1:1: version 2.0.1 does not match the installed path's version 2.0.0",
	}
	if diff := cmp.Diff(wantProbs, texts(set.Problems)); diff != "" {
		t.Errorf("Installed.Load problems (-want +got):\n%s", diff)
	}
}

func TestMissingAndUnreadable(t *testing.T) {
	for _, src := range []interface{ Load() (tool.Set, error) }{
		manifest.Dir{Root: filepath.Join(t.TempDir(), "nope"), At: tool.LevelProject},
		manifest.Dir{},
		manifest.Installed{Dir: filepath.Join(t.TempDir(), "nope")},
	} {
		if set, err := src.Load(); err != nil || len(names(set)) > 0 {
			t.Errorf("Load of a missing dir = %v, %v; want nothing", names(set), err)
		}
	}
	root := t.TempDir()
	big := filepath.Join(root, "wrapped-tools")
	if err := os.MkdirAll(big, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(big, "huge.tool"), []byte(strings.Repeat("x", manifest.MaxFileSize+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := manifest.Dir{Root: root, At: tool.LevelUser}.Load()
	if err != nil || len(set.Problems) != 1 || !strings.Contains(set.Problems[0].Msg, "larger than 1048576 bytes") {
		t.Errorf("Load with a huge file = %v, %v", set.Problems, err)
	}
	if os.Geteuid() != 0 {
		locked := filepath.Join(root, "tools")
		if err := os.Mkdir(locked, 0o000); err != nil {
			t.Fatal(err)
		}
		if _, err := (manifest.Dir{Root: root, At: tool.LevelUser}).Load(); err == nil {
			t.Error("Load of an unreadable tools dir = nil error")
		}
	}
}
