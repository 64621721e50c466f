package cli

import (
	"slices"
	"testing"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
)

func testFactory() *cmdutil.Factory {
	ios, _, _, _ := iostreams.Test()
	return &cmdutil.Factory{IO: ios, Getenv: func(string) string { return "" }, Flags: &cmdutil.GlobalFlags{}}
}

func names(cs []*cobra.Command) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name())
	}
	return out
}

// TestCommandNames keeps the table of top-level commands in step with what each constructor
// builds: a name that differs would make that command unreachable by its own name's fast path.
func TestCommandNames(t *testing.T) {
	f := testFactory()
	for _, c := range commands {
		if got := c.build(f).Name(); got != c.name {
			t.Errorf("commands entry %q builds a command named %q", c.name, got)
		}
	}
}

// TestCommandsFor checks which top-level commands are built for a command line: only the one
// it names (found past global flags and their values), with help and without completion; none
// for --version alone; all otherwise, completion among them.
func TestCommandsFor(t *testing.T) {
	all := names(NewCmdRoot(testFactory()).Commands())
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"validate", "wf.yaml"}, []string{"help", "validate"}},
		{[]string{"run", "validate"}, []string{"help", "run"}}, // the first word names it
		{[]string{"tools", "run", "--state-dir", "history"}, []string{"help", "tools"}},
		{[]string{"--state-dir", "run", "tools", "list"}, []string{"help", "tools"}},
		{[]string{"-q", "run", "--help"}, []string{"help", "run"}},
		{[]string{"completion", "bash"}, all},
		{[]string{"--version"}, nil},
		{[]string{"-v", "--state-dir", "x"}, nil},
		{[]string{"--version", "--help"}, all},
		{[]string{}, all},
		{[]string{"help", "run"}, all},
		{[]string{"valdate"}, all},
		{[]string{"__complete", "run", ""}, all},
		{[]string{"--", "--version"}, all},
	}
	for _, tc := range tests {
		got := names(newCmdRoot(testFactory(), tc.args).Commands())
		if !slices.Equal(got, tc.want) {
			t.Errorf("newCmdRoot(%q) commands = %v, want %v", tc.args, got, tc.want)
		}
	}
}
