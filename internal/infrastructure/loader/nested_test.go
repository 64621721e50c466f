package loader

import (
	"strings"
	"testing"
)

// renderNested is render with the steps inside a parallel step, between two top-level steps,
// at indent within it.
func renderNested(head string, steps []string, indent int, tail string) string {
	block := "- {name: pre, command: echo pre}\n- name: block\n  type: parallel\n  max_concurrency: 2\n  steps:\n" +
		indentAll(steps, strings.Repeat(" ", indent))
	return render(head, []string{block, "- {name: post, command: echo post}"}, 2, tail)
}

// nestedCases are files whose bulk is one parallel step's children: each read in parts at
// the block's list (split) or, where that cannot hold, at the top-level list or whole.
func nestedCases() []splitCase {
	cases := []splitCase{
		{name: "valid", doc: renderNested(head, baseSteps(), 4, "output: done\n"), split: true},
		{name: "children at the key's indentation", doc: renderNested(head, baseSteps(), 2, ""), split: true},
		{name: "children indented by 6", doc: renderNested(head, baseSteps(), 6, ""), split: true},
		{name: "flow-style children", doc: renderNested(head, flowSteps(40), 4, ""), split: true},
		{name: "CRLF", doc: strings.ReplaceAll(renderNested(head, flowSteps(30), 4, "output: done\n"), "\n", "\r\n"), split: true},
		{name: "a comment after the key", doc: strings.Replace(renderNested(head, baseSteps(), 4, ""), "  steps:\n", "  steps:   # children\n\n", 1), split: true},
		// With an alias anywhere the file is read whole or split at the top: there is no
		// counting of aliases across a nested split.
		{name: "an alias", doc: renderNested("x-t: &t 10s\n"+head, append(baseSteps(), "- {name: late, command: x, timeout: *t}"), 4, "")},
		{name: "not a parallel step", doc: strings.Replace(renderNested(head, baseSteps(), 4, ""), "type: parallel", "type: paralel", 1), errs: true},
		{name: "a duplicate steps key in the block", doc: strings.Replace(renderNested(head, flowSteps(30), 4, ""), "  max_concurrency: 2\n", "  steps: [{name: z, command: z}]\n", 1), errs: true},
		{name: "steps inside a block scalar", doc: renderNested(head, append(baseSteps(), "- name: script\n  command: |\n    steps:\n      - a\n      - b\n      - c\n      - d\n      - e\n      - f\n      - g\n      - h\n      - i\n      - j\n      - k"), 4, ""), split: true},
		{name: "a block inside the block", doc: renderNested(head, []string{"- name: inner\n  type: parallel\n  steps:\n" +
			indentAll(baseSteps(), "    ")}, 4, ""), split: true},
		{name: "work budget", doc: renderNested(head, with(6, "- name: s6\n  type: agent\n  prompt: p\n  provider: p\n  options: {x: ["+strings.Repeat("1,", maxWork)+"1]}"), 4, ""), split: true, errs: true},
	}
	return append(cases, mutated("child", func(steps []string) string {
		return renderNested(head, steps, 4, "output: \"{{steps.pre.output}}\"\n")
	})...)
}

// A parallel step's long list of children is read in parts as a workflow's long list is,
// and gives what one parse gives: the same workflow, the same problems at the same places.
func TestNestedSplitMatchesWhole(t *testing.T) {
	for _, tc := range nestedCases() {
		t.Run(tc.name, func(t *testing.T) { checkSplitMatchesWhole(t, tc, readNested) })
	}
}
