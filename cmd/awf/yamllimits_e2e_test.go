package main

import (
	"fmt"
	"strings"
	"testing"
)

// Every YAML file awf reads is refused, with its position, when it is not UTF-8 (the parser
// replaced bad bytes with U+FFFD), nests deeper than the limit or its aliases expand past theirs, before the parser spends memory on it: a 200 KB
// file of brackets took gigabytes and minutes to refuse, and a "billion laughs" input file
// minutes and 13 GB.
func TestHostileYAMLIsRefusedWithItsPosition(t *testing.T) {
	brackets := strings.Repeat("[", 100_000)
	var laughs strings.Builder
	laughs.WriteString("l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= 8; i++ {
		p := fmt.Sprintf("*l%d", i-1)
		fmt.Fprintf(&laughs, "l%d: &l%d [%s]\n", i, i, strings.Repeat(p+", ", 8)+p)
	}
	laughs.WriteString("name: *l8\n")
	var wide strings.Builder // a mapping one key wider than allowed, each key's value a list at its own column
	for i := range 5001 {
		fmt.Fprintf(&wide, "  k%d:\n  - v\n", i)
	}

	tests := []struct {
		name  string
		files map[string]string
		args  []string
		code  int
		want  string // the file and position the message must name
	}{
		{
			name:  "workflow, in an ignored extension key",
			files: map[string]string{"deep.yaml": "name: deep\nx-note: " + brackets + "\nsteps:\n  - name: a\n    type: shell\n    command: 'true'\n"},
			args:  []string{"validate", "deep.yaml"}, code: 2, want: "deep.yaml:2:",
		},
		{
			name:  "workflow with a mapping of too many keys, in an ignored extension key",
			files: map[string]string{"wide.yaml": helloWorkflow + "x-wide:\n" + wide.String()},
			args:  []string{"validate", "wide.yaml"}, code: 2, want: "wide.yaml:10010:3:",
		},
		{
			name:  "input file with a mapping of too many keys",
			files: map[string]string{"hello.yaml": helloWorkflow, "in.yaml": "name: x\nextra:\n" + wide.String()},
			args:  []string{"run", "hello.yaml", "--input-file", "in.yaml"}, code: 1, want: "in.yaml:10003:3:",
		},
		{
			name:  "workflow with a byte that is not UTF-8",
			files: map[string]string{"latin1.yaml": "name: latin1\nsteps:\n  - name: a\n    type: shell\n    command: echo caf\xe9\n"},
			args:  []string{"validate", "latin1.yaml"}, code: 2, want: "latin1.yaml:5:22:",
		},
		{
			name: "tool manifest",
			files: map[string]string{
				".awf/tools/deep/config.yaml": "name: deep\ndescription: d\nsteps:\n  - type: shell\n    command: " + brackets + "\n",
			},
			args: []string{"tools", "show", "deep"}, want: "config.yaml:5:",
		},
		{
			name:  "input file",
			files: map[string]string{"hello.yaml": helloWorkflow, "in.yaml": "name: " + brackets + "\n"},
			args:  []string{"run", "hello.yaml", "--input-file", "in.yaml"}, code: 1, want: "in.yaml:1:",
		},
		{
			name:  "input file of aliases (billion laughs)",
			files: map[string]string{"hello.yaml": helloWorkflow, "in.yaml": laughs.String()},
			args:  []string{"run", "hello.yaml", "--input-file", "in.yaml"}, code: 1, want: "in.yaml:",
		},
		{
			name:  "cassette",
			files: map[string]string{"hello.yaml": helloWorkflow, "c.yaml": "version: 1\ninteractions: " + brackets + "\n"},
			args:  []string{"run", "hello.yaml", "--replay", "c.yaml"}, code: 1, want: "c.yaml:2:",
		},
		{
			name:  "project configuration",
			files: map[string]string{".awf/config.yaml": "log_level: " + brackets + "\n"},
			args:  []string{"history"}, code: 1, want: "config.yaml:1:",
		},
		{
			name:  "state file",
			files: map[string]string{".awf/runs/r1.yaml": "id: r1\nworkflow: w\ninputs: " + brackets + "\n"},
			args:  []string{"status", "r1"}, want: "line 3, column",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			for name, content := range tt.files {
				e.write(name, content)
			}
			r := e.run(tt.args...)
			if r.code == 0 || (tt.code != 0 && r.code != tt.code) {
				t.Fatalf("awf %v: exit %d, want %d\nstderr:\n%s", tt.args, r.code, tt.code, r.stderr)
			}
			if !strings.Contains(r.stderr, tt.want) {
				t.Errorf("stderr does not name %q:\n%s", tt.want, r.stderr)
			}
			if !strings.Contains(r.stderr, "deeper than 256") && !strings.Contains(r.stderr, "aliases expand") && !strings.Contains(r.stderr, "is not UTF-8") &&
				!strings.Contains(r.stderr, "more than 5000 keys") {
				t.Errorf("stderr does not say which limit:\n%s", r.stderr)
			}
		})
	}
}

const helloWorkflow = `name: hello
inputs:
  - name: name
    default: world
steps:
  - name: greet
    type: shell
    command: echo "hello {{inputs.name}}"
`
