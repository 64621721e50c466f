package manifest_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/manifest"
)

func texts(ps workflow.Problems) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}

// seed000 is the seed's example manifest, unchanged but for a version constraint.
const seed000 = `name: summarize-and-translate
description: Summarize text then translate the summary
version: 1.0.0
category: Text

steps:
  - type: tool
    tool: official/summarize # Tool to call (owner/name or just name for local)
    input: "{input}"         # What to pass as input (supports variable substitution)
    args:                    # Optional arguments to pass to the tool
      max_words: "100"
    output_var: summary      # Variable to store the output

  - type: tool
    tool: official/translate
    input: "{summary}"       # Use output from previous step
    args:
      target_language: "{language}" # Can use tool's own arguments
    output_var: translated

output: "{translated}"

arguments:
  - flag: "--language"
    variable: language
    default: "Spanish"
    description: "Target language for translation"

dependencies:
  - official/summarize
  - official/translate@^1.0.0
`

func TestDecodeSeedManifest(t *testing.T) {
	m, probs := manifest.Decode("config.yaml", []byte(seed000))
	if len(probs) > 0 {
		t.Fatalf("Decode: %v", probs)
	}
	at := func(line, col int) workflow.Pos { return workflow.Pos{File: "config.yaml", Line: line, Col: col} }
	want := &tool.Manifest{
		Name: "summarize-and-translate", Description: "Summarize text then translate the summary", Version: "1.0.0",
		Category: "Text",
		Steps: []tool.MetaStep{
			{Tool: "official/summarize", Input: "{input}", Args: map[string]tool.StepArg{"max_words": tool.TextArg("100")},
				OutputVar: "summary", Pos: at(7, 5)},
			{Tool: "official/translate", Input: "{summary}", Args: map[string]tool.StepArg{"target_language": tool.TextArg("{language}")},
				OutputVar: "translated", Pos: at(14, 5)},
		},
		Output: "{translated}", OutputPos: at(21, 1),
		Arguments: []tool.Argument{{Flag: "--language", Variable: "language", Default: "Spanish", HasDefault: true,
			Description: "Target language for translation", Pos: at(24, 5)}},
		Dependencies: []tool.Dependency{{Ref: "official/summarize", Pos: at(30, 5)},
			{Ref: "official/translate", Constraint: "^1.0.0", Pos: at(31, 5)}},
		Path: "config.yaml", Pos: at(1, 1),
	}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("Decode (-want +got):\n%s", diff)
	}
}

func TestDecodeChainAndExtras(t *testing.T) {
	src := `name: rate
cache: true
tags: [a, b]
arguments:
  - flag: --user-id
    type: integer
    required: true
    enum: [1, 2]
chain:
  stop_on_failure: false
  steps:
    - tool: fetch
      input_mapping: {id: user_id}
      output_key: user
    - tool: score
      merge: true
output: "{score}"
`
	m, probs := manifest.Decode("c.yaml", []byte(src))
	if len(probs) > 0 {
		t.Fatalf("Decode: %v", probs)
	}
	if !m.Cache || !cmp.Equal(m.Tags, []string{"a", "b"}) || m.Arguments[0].Variable != "user_id" ||
		m.Arguments[0].Type != "integer" || !m.Arguments[0].Required || len(m.Arguments[0].Enum) != 2 {
		t.Errorf("header = %+v", m)
	}
	want := &tool.Chain{ContinueOnFailure: true, Steps: []tool.ChainStep{
		{Tool: "fetch", InputMapping: map[string]string{"id": "user_id"}, OutputKey: "user", Pos: workflow.Pos{File: "c.yaml", Line: 12, Col: 7}},
		{Tool: "score", Merge: true, Pos: workflow.Pos{File: "c.yaml", Line: 15, Col: 7}},
	}}
	if diff := cmp.Diff(want, m.Chain); diff != "" {
		t.Errorf("chain (-want +got):\n%s", diff)
	}
}

func TestDecodeProblems(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"empty", ``, []string{"m.yaml:1:1: the file is empty: a tool manifest needs at least a name and steps"}},
		{"not a mapping", `- a`, []string{"m.yaml:1:1: a tool manifest must be a mapping, got a list"}},
		{"bad yaml", "name: [", []string{"m.yaml:1:7: invalid YAML: sequence end token ']' not found"}},
		{"unknown key", "name: x\nstpes: []\n", []string{
			"m.yaml:1:1: a manifest needs steps (a list of type: tool steps) or a chain",
			`m.yaml:2:1: unknown key "stpes" in the manifest (did you mean "steps"?)`,
		}},
		{"alias refused", "name: &n x\ndescription: *n\nsteps: [{type: tool, tool: a, output_var: o}]\n", []string{
			"m.yaml:2:14: YAML aliases (*name) are not supported in tool manifests",
		}},
		{"step problems", `name: x
steps:
  - type: prompt
    tool: a
    output_var: o
  - type: tool
    tool: b
    args: {n: "{nope}"}
    output_var: o
  - type: tool
    tool: "bad name"
    outptu_var: z
output: "{o} {missing}"
`, []string{
			`m.yaml:3:5: steps[0]: type must be "tool" (the only step type of a tool manifest), got "prompt"`,
			`m.yaml:6:5: steps[1].args.n: unknown variable {nope} (known here: input, o)`,
			`m.yaml:6:5: steps[1]: output_var "o" is already a variable`,
			`m.yaml:10:5: steps[2]: tool reference "bad name": bad name "bad name" (letters, digits, _ and -)`,
			`m.yaml:10:5: steps[2]: output_var is required`,
			`m.yaml:12:5: unknown key "outptu_var" in steps[2] (did you mean "output_var"?)`,
			`m.yaml:13:1: output: unknown variable {missing} (known here: input, o)`,
		}},
		{"argument problems", `name: x
arguments:
  - variable: "1bad"
  - variable: lang
    type: strng
  - variable: lang
  - flag: nodash
steps: [{type: tool, tool: a, output_var: o}]
`, []string{
			`m.yaml:3:5: arguments[0]: variable "1bad": use letters, digits, _ and -, starting with a letter or _`,
			`m.yaml:4:5: arguments[1]: unknown type "strng" (want one of string, integer, number, boolean, array, object, or array<T>)`,
			`m.yaml:6:5: arguments[2]: variable "lang" is declared twice`,
			`m.yaml:7:5: arguments[3]: flag "nodash" must start with - or --`,
		}},
		{"dependencies and version", `name: x
version: one
dependencies: ["a/b@banana", "/b", [x]]
steps: [{type: tool, tool: a, output_var: o}]
`, []string{
			`m.yaml:1:1: version "one" is not a semantic version (such as 1.2.0)`,
			`m.yaml:3:16: dependencies[0]: bad version constraint "banana": improper constraint: "banana"`,
			`m.yaml:3:30: dependencies[1]: tool reference "/b": bad owner ""`,
			`m.yaml:3:36: dependencies[2] must be a string, got a list`,
			`m.yaml:3:36: dependencies[2]: tool reference "": bad name "" (letters, digits, _ and -)`,
		}},
		{"chain problems", `name: x
chain:
  steps:
    - tool: a
    - tool: b
      output_key: k
      merge: true
    - input_mapping: {a: ""}
      output_key: z
`, []string{
			"m.yaml:1:1: chain: step 1 (a): set output_key to keep the result, or merge: true to merge an object result into the context",
			"m.yaml:1:1: chain: step 2 (b): output_key and merge exclude each other",
			"m.yaml:1:1: chain: step 3: tool is required",
			"m.yaml:1:1: chain: step 3: input_mapping.a: empty path",
		}},
		{"steps and chain", "name: x\nsteps: [{type: tool, tool: a, output_var: o}]\nchain: {steps: [{tool: a, output_key: k}]}\n", []string{
			"m.yaml:1:1: a manifest has either steps or a chain, not both",
		}},
		{"wrong kinds", "name: [x]\ncache: yes please\ntags: a\nsteps: {}\n", []string{
			"m.yaml:1:1: name must be a string, got a list",
			"m.yaml:1:1: name is required",
			"m.yaml:1:1: a manifest needs steps (a list of type: tool steps) or a chain",
			"m.yaml:2:1: cache must be true or false, got a string",
			"m.yaml:3:1: tags must be a list, got a string",
			"m.yaml:4:1: steps must be a list, got a mapping",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, probs := manifest.Decode("m.yaml", []byte(tc.src))
			got := texts(probs)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Decode problems (-want +got):\n%s", diff)
			}
		})
	}
}
