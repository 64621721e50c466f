package manifest_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/manifest"
)

func TestParseToolFile(t *testing.T) {
	glob := "Find files matching glob patterns using find. The working directory is the project directory by default.\n" +
		"Common usage: [\".\", \"-type\", \"f\"].\n\n" +
		"@title Glob Pattern Matching\n@name glob\n@wrapped run_command\n@command find {arguments} -type f\n" +
		"@param arguments {array<string>} [required] Array of strings that will be passed to the command\n"
	pos := func(line int) workflow.Pos { return workflow.Pos{File: "x.tool", Line: line, Col: 1} }
	tests := []struct {
		name string
		src  string
		want manifest.ToolFile
		errs []string
	}{
		{"seed glob", glob, manifest.ToolFile{Wrapped: &tool.WrapSpec{
			Name: "glob", Title: "Glob Pattern Matching", Wraps: "run_command", Command: "find {arguments} -type f",
			Description: "Find files matching glob patterns using find. The working directory is the project directory by default.\nCommon usage: [\".\", \"-type\", \"f\"].",
			Params:      []tool.Param{{Name: "arguments", Type: "array<string>", Required: true, Description: "Array of strings that will be passed to the command"}},
			Source:      "x.tool", Pos: pos(4)}}, nil},
		{"alias", "@name webFetch\n@wrapped web_fetch\n", manifest.ToolFile{Alias: &tool.Alias{
			Name: "webFetch", Target: "web_fetch", Source: "x.tool", Pos: pos(1)}}, nil},
		{"optional params and CRLF", "Greps.\r\n\r\n@title G\r\n@name g\r\n@wrapped run_command\r\n@command grep {pattern} {paths}\r\n" +
			"@param pattern {string} [required] What to find\r\n@param paths {array<string>} Where\r\n",
			manifest.ToolFile{Wrapped: &tool.WrapSpec{Name: "g", Title: "G", Description: "Greps.", Wraps: "run_command",
				Command: "grep {pattern} {paths}", Params: []tool.Param{{Name: "pattern", Type: "string", Required: true, Description: "What to find"},
					{Name: "paths", Type: "array<string>", Description: "Where"}}, Source: "x.tool", Pos: pos(3)}}, nil},
		{"missing name", "@wrapped shell\n", manifest.ToolFile{}, []string{
			"x.tool:1:1: missing @name (a .tool file needs @name and @wrapped)"}},
		{"missing wrapped", "@name a\n", manifest.ToolFile{}, []string{
			"x.tool:1:1: missing @wrapped (a .tool file needs @name and @wrapped)"}},
		{"no annotations", "Just text.\n", manifest.ToolFile{}, []string{
			"x.tool:1:1: no annotations: a .tool file needs at least @name and @wrapped"}},
		{"unknown annotation", "D.\n\n@title T\n@name n\n@wrapped shell\n@comand ls {arguments}\n", manifest.ToolFile{}, []string{
			`x.tool:6:1: unknown annotation @comand (known: @title, @name, @wrapped, @command, @param) (did you mean "command"?)`}},
		{"text after annotations", "@name n\n@wrapped shell\nstray words\n", manifest.ToolFile{}, []string{
			"x.tool:3:1: text after the annotations: the description comes first, then a blank line, then the @lines"}},
		{"duplicate annotation", "@name a\n@name b\n@wrapped shell\n", manifest.ToolFile{}, []string{
			"x.tool:2:1: @name appears twice (first on line 1)"}},
		{"malformed param", "D.\n\n@title T\n@name n\n@wrapped shell\n@command ls {arguments}\n@param arguments array<string> x\n", manifest.ToolFile{}, []string{
			`x.tool:7:1: malformed @param "arguments array<string> x": want @param <name> {<type>} [required] <description>`}},
		{"bad param type", "D.\n\n@title T\n@name n\n@wrapped shell\n@command ls {a}\n@param a {list<string>} x\n", manifest.ToolFile{}, []string{
			`x.tool:7:1: @param a: unknown type "list<string>" (want one of string, integer, number, boolean, array, object, or array<T>)`}},
		{"wrapped without title or description", "@name n\n@wrapped shell\n@command ls {arguments}\n@param arguments {array<string>} x\n", manifest.ToolFile{}, []string{
			"x.tool:3:1: a wrapped tool (with @command) needs @title",
			"x.tool:3:1: a wrapped tool (with @command) needs a description before its annotations"}},
		{"alias with extras", "Described.\n\n@title T\n@name n\n@wrapped shell\n", manifest.ToolFile{}, []string{
			"x.tool:3:1: @title without @command: an alias has only @name and @wrapped; a wrapped tool needs @command",
			"x.tool:1:1: a description without @command: an alias has only @name and @wrapped; a wrapped tool needs @command"}},
		{"type and property", "@name n\n@wrapped shell\n@type Foo {x}\n", manifest.ToolFile{}, []string{
			"x.tool:3:1: @type is not supported in .tool files (use @param with a type such as {array<string>})"}},
		{"bad name", "@name has space\n@wrapped shell\n", manifest.ToolFile{}, []string{
			`x.tool:1:1: @name "has space": use 1 to 64 letters, digits, _ and -`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, probs := manifest.ParseToolFile("x.tool", []byte(tc.src))
			if diff := cmp.Diff(tc.errs, texts(probs)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseToolFile (-want +got):\n%s", diff)
			}
		})
	}
}
