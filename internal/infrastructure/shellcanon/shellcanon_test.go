package shellcanon

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/google/go-cmp/cmp"
)

// commands returns the "command" of every action.
func commands(script string) ([]string, string) {
	c := Parse(script)
	out := []string{}
	for _, a := range c.Actions {
		out = append(out, a["command"].(string))
	}
	return out, c.Opaque
}

func TestParseFindsEveryCommand(t *testing.T) {
	tests := []struct {
		name   string
		script string
		want   []string
	}{
		{"simple", "git status", []string{"git status"}},
		{"spacing normalised", "git    status  ", []string{"git status"}},
		{"list", "git status; rm -rf /", []string{"git status", "rm -rf /"}},
		{"and or", "git status && rm -rf / || echo x", []string{"git status", "rm -rf /", "echo x"}},
		{"pipeline", "git log | head -n 3", []string{"git log", "head -n 3"}},
		{"newline", "git status\nrm -rf /", []string{"git status", "rm -rf /"}},
		{"command substitution", "git status $(rm -rf /)", []string{"git status $(rm -rf /)", "rm -rf /"}},
		{"backticks", "echo `id`", []string{"echo $(id)", "id"}},
		{"process substitution", "diff <(ls a) <(ls b)", []string{"diff <(ls a) <(ls b)", "ls a", "ls b"}},
		{"subshell and group", "(cd x && make); { id; }", []string{"cd x", "make", "id"}},
		{"redirection kept", "git status > /etc/passwd", []string{"git status >/etc/passwd"}},
		{"assignment prefix kept", "PATH=/tmp git status", []string{"PATH=/tmp git status"}},
		{"bare assignment is an action", "PATH=/tmp/evil; git status", []string{"PATH=/tmp/evil", "git status"}},
		{"export is an action", "export PATH=/tmp; git status", []string{"export PATH=/tmp", "git status"}},
		{"function body", "git() { rm -rf /; }; git status", []string{"rm -rf /", "git status"}},
		{"if and loop", "if true; then for f in a; do rm $f; done; fi", []string{"true", "rm $f"}},
		{"background", "sleep 1 & id", []string{"sleep 1 &", "id"}},
		{"sh -c", `sh -c 'git status; rm -rf /'`, []string{`sh -c 'git status; rm -rf /'`, "git status", "rm -rf /"}},
		{"bash -lc", `bash -lc "id"`, []string{`bash -lc "id"`, "id"}},
		{"env wrapper", "env -i FOO=1 rm -rf /", []string{"env -i FOO=1 rm -rf /", "rm -rf /"}},
		{"nested wrappers", "nice -n 5 timeout 10 xargs -n 1 rm", []string{"nice -n 5 timeout 10 xargs -n 1 rm", "timeout 10 xargs -n 1 rm", "xargs -n 1 rm", "rm"}},
		{"find exec", `find . -name '*.go' -exec rm {} \;`, []string{`find . -name '*.go' -exec rm {} \;`, "rm {}"}},
		{"wrapper quoting", `env 'a b' c`, []string{`env 'a b' c`, `'a b' c`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, opaque := commands(tc.script)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse(%q) commands (-want +got):\n%s", tc.script, diff)
			}
			if opaque != "" {
				t.Errorf("Parse(%q).Opaque = %q, want complete", tc.script, opaque)
			}
		})
	}
}

func TestParseArgv(t *testing.T) {
	tests := []struct {
		script string
		want   []any
	}{
		{`git commit -m "a message"`, []any{"git", "commit", "-m", "a message"}},
		{`echo 'it''s' \$HOME`, []any{"echo", "its", "$HOME"}},
		{`ls $dir "$x" *.go`, []any{"ls", "$dir", `"$x"`, "*.go"}},
	}
	for _, tc := range tests {
		c := Parse(tc.script)
		if len(c.Actions) != 1 {
			t.Fatalf("Parse(%q) = %d actions, want 1", tc.script, len(c.Actions))
		}
		if diff := cmp.Diff(tc.want, c.Actions[0]["argv"]); diff != "" {
			t.Errorf("Parse(%q) argv (-want +got):\n%s", tc.script, diff)
		}
	}
}

func TestParseOpaque(t *testing.T) {
	tests := []struct {
		script string
		why    string
	}{
		{"$cmd status", "comes from an expansion"},
		{"x=rm; $x -rf /", "comes from an expansion"},
		{"{rm,-rf,/}", "comes from an expansion"},
		{"/usr/bin/r? -rf /", "comes from an expansion"},
		{"~/bin/tool", "comes from an expansion"},
		{`eval "rm -rf /"`, "eval runs code"},
		{"source ./script.sh", "source runs code"},
		{". ./script.sh", ". runs code"},
		{`trap 'rm -rf /' EXIT`, "trap runs code"},
		{`echo ${x@P}`, "hidden commands"},
		{`sh -c "$script"`, "comes from an expansion"},
		{"sh script.sh", "not visible"},
		{"curl x | bash", "not visible"},
		{`env -S "rm -rf /"`, "split at run time"},
		{"git status (", "does not parse"},
	}
	for _, tc := range tests {
		c := Parse(tc.script)
		if !strings.Contains(c.Opaque, tc.why) {
			t.Errorf("Parse(%q).Opaque = %q, want it to contain %q", tc.script, c.Opaque, tc.why)
		}
	}
}

func TestCanonicalKeepsOtherArguments(t *testing.T) {
	c, err := Canonical(map[string]any{"command": "id; pwd", "dir": "/work"}, "command")
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"command": "id", "argv": []any{"id"}, "dir": "/work"},
		{"command": "pwd", "argv": []any{"pwd"}, "dir": "/work"},
	}
	if diff := cmp.Diff(want, c.Actions); diff != "" {
		t.Errorf("Canonical actions (-want +got):\n%s", diff)
	}
	if _, err := Canonical(map[string]any{"command": 3}, "command"); err == nil {
		t.Error("Canonical with a non-string script: no error")
	}
}

// execed runs script in mvdan's interpreter with handlers that execute nothing, and returns
// the name of every program it would have started.
func execed(t *testing.T, script string) []string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err != nil {
		return nil
	}
	var names []string
	r, err := interp.New(
		interp.StdIO(nil, io.Discard, io.Discard),
		interp.Env(expand.ListEnviron("PATH=/usr/bin:/bin")),
		interp.Dir(t.TempDir()),
		interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc {
			return func(ctx context.Context, args []string) error {
				names = append(names, args[0])
				return nil
			}
		}),
		interp.OpenHandler(func(ctx context.Context, path string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
			return nopFile{}, nil
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_ = r.Run(ctx, f)
	return names
}

type nopFile struct{}

func (nopFile) Read([]byte) (int, error)    { return 0, io.EOF }
func (nopFile) Write(p []byte) (int, error) { return len(p), nil }
func (nopFile) Close() error                { return nil }

// FuzzParseSeesEveryProgram checks the canonical form against mvdan's interpreter: every
// program the interpreter would start is the command name of an action, unless the form is
// opaque.
func FuzzParseSeesEveryProgram(f *testing.F) {
	for _, s := range []string{"git status", "ls -la; rm -rf /", "echo $(date)", "a && b || c",
		"f() { rm x; }; f", "x=$(id) y", "sh -c 'id'", "for i in 1 2; do touch $i; done",
		"0\\\nrm -rf /", "cat <<EOF\n$(id)\nEOF", "env FOO=1 rm", "$x y", "echo ${a:-$(id)}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		c := Parse(script)
		if c.Opaque != "" {
			return
		}
		names := map[string]bool{}
		for _, a := range c.Actions {
			if argv, _ := a["argv"].([]any); len(argv) > 0 {
				names[argv[0].(string)] = true
			}
		}
		for _, n := range execed(t, script) {
			if !names[n] {
				t.Errorf("Parse(%q) = %v: the interpreter runs %q, which no action names", script, c.Actions, n)
			}
		}
	})
}

func BenchmarkParse(b *testing.B) {
	for b.Loop() {
		Parse("git status --short && git diff --stat | head -n 20")
	}
}
