package main

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/bom/bomtest"
)

// bomFiles are a project whose every file a person writes was saved with a UTF-8 byte order
// mark, as Notepad or PowerShell's Out-File save them: the workflow, the project
// configuration, a tool manifest, a .tool file, an --input-file, a prompt file and the
// cassette (whose request holds the prompt as sent: the prompt file's mark must not be in it).
var bomFiles = map[string]string{
	"wf.yaml": `name: bom
inputs:
  - {name: who, default: nobody}
steps:
  - name: work
    type: agent
    provider: openai
    options: {model: test-model}
    prompt_file: prompt.md
    tools: [shout, list]
output: "{{states.work.output}}"
`,
	"prompt.md":        "Shout {{inputs.who}}.",
	"in.yaml":          "who: hi\n",
	".awf/config.yaml": "log_level: warn\n",
	".awf/tools/shout/config.yaml": `name: shout
description: Shout the input
steps:
  - {type: tool, tool: shell, args: {command: "echo {input} | tr a-z A-Z"}, output_var: o}
output: "{o}"
`,
	".awf/wrapped-tools/list.tool": "List files.\n\n@title List\n@name list\n@wrapped run_command\n@command ls {arguments}\n@param arguments {array<string>} [required] Paths\n",
	"c.yaml": `version: 1
interactions:
  - workflow: bom
    step: work
    request:
      model: test-model
      messages:
        - {role: user, content: "Shout hi."}
      tools: [shout, list]
    response:
      content: Done.
`,
}

// TestByteOrderMarkFiles: files saved with a UTF-8 byte order mark validate, lock and run as
// without one (each failed before: unknown key "\ufeffname", unknown field "\ufefflog_level",
// invalid character 'ï' in the lock file, a description that began with the mark).
func TestByteOrderMarkFiles(t *testing.T) {
	e := newEnv(t)
	for name, content := range bomFiles {
		e.write(name, "\ufeff"+content)
	}
	if r := e.mustRun(0, "validate", "wf.yaml"); strings.Contains(r.stdout+r.stderr, "warning") {
		t.Errorf("awf validate warns:\n%s%s", r.stdout, r.stderr)
	}
	if r := e.mustRun(0, "tools", "show", "list"); strings.Contains(r.stdout, `\ufeff`) || !strings.Contains(r.stdout, "  List files.") {
		t.Errorf("awf tools show list: the description is not the file's:\n%s", r.stdout)
	}
	e.mustRun(0, "tools", "lock", "--workflow", "wf.yaml")
	e.write("wf.yaml.lock", "\ufeff"+e.read("wf.yaml.lock")) // as a reviewer's editor saves it
	res := e.runJSON(0, "run", "wf.yaml", "--replay", "c.yaml", "--input-file", "in.yaml")
	if res.Status != "completed" || res.Output != "Done." {
		t.Errorf("run = %s, output %q; want completed with Done.", res.Status, res.Output)
	}
}

// TestUTF16FilesAreRefused: a file saved as UTF-16 (with its byte order mark, as Windows
// tools write "Unicode") is refused naming the file and what to do, not with a message about
// its first byte.
func TestUTF16FilesAreRefused(t *testing.T) {
	tests := []struct {
		name, file string
		args       []string
		code       int
		want       string
	}{
		{"workflow", "wf.yaml", []string{"validate", "wf.yaml"}, 2, "wf.yaml:1:1: the file is UTF-16; save as UTF-8"},
		{"configuration", ".awf/config.yaml", []string{"history"}, 1, ".awf/config.yaml:1:1: the file is UTF-16; save as UTF-8"},
		{"tool manifest", ".awf/tools/shout/config.yaml", []string{"tools", "show", "shout"}, 2, "shout/config.yaml:1:1: the file is UTF-16; save as UTF-8"},
		{".tool file", ".awf/wrapped-tools/list.tool", []string{"tools", "show", "list"}, 2, "list.tool:1:1: the file is UTF-16; save as UTF-8"},
		{"cassette", "c.yaml", []string{"run", "wf.yaml", "--replay", "c.yaml"}, 1, "c.yaml:1:1: the file is UTF-16; save as UTF-8"},
		{"input file", "in.yaml", []string{"run", "wf.yaml", "--replay", "c.yaml", "--input-file", "in.yaml"}, 1, "in.yaml:1:1: the file is UTF-16; save as UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			for name, content := range bomFiles {
				e.write(name, content)
			}
			e.write(tt.file, string(bomtest.UTF16(bomFiles[tt.file], binary.LittleEndian)))
			r := e.mustRun(tt.code, tt.args...)
			if !strings.Contains(r.stderr, tt.want) {
				t.Errorf("stderr does not say %q:\n%s", tt.want, r.stderr)
			}
		})
	}
}
