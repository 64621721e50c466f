package loader

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// FuzzLoad checks that loading never panics, that a failure is always workflow.Problems of kind
// Invalid, and that every problem points inside the file.
func FuzzLoad(f *testing.F) {
	files, err := filepath.Glob(filepath.Join(root, "testdata", "load", "*.yaml"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed files: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		wf, err := New().LoadBytes("fuzz.yaml", data)
		var probs workflow.Problems
		switch {
		case err != nil:
			if !errors.As(err, &probs) || len(probs) == 0 {
				t.Fatalf("LoadBytes error %T %v, want non-empty workflow.Problems", err, err)
			}
			if k := fault.KindOf(err); k != fault.Invalid {
				t.Errorf("LoadBytes error kind %v, want invalid", k)
			}
		case wf == nil:
			t.Fatal("LoadBytes = nil, nil")
		default:
			probs = wf.Warnings
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		for _, p := range probs {
			if p.Pos.File != "fuzz.yaml" || p.Pos.Line < 1 || p.Pos.Line > lines || p.Pos.Col < 1 {
				t.Errorf("problem %q at %+v, outside the file's %d lines", p.Msg, p.Pos, lines)
			}
		}
	})
}

// bigWorkflow returns a workflow of n steps of every type, with tools and inputs.
func bigWorkflow(n int) []byte {
	var b strings.Builder
	b.WriteString("name: big\nversion: \"1.0\"\ninputs:\n  - {name: feature, required: true}\n  - {name: count, type: integer, default: 3}\n")
	b.WriteString("tools:\n  - {name: read_file, builtin: true, approval: auto}\n")
	b.WriteString("  - name: search\n    command: \"rg '{{args.pattern}}' .\"\n    parameters: [{name: pattern, type: string, required: true}]\n")
	b.WriteString("steps:\n")
	for i := range n {
		switch i % 5 {
		case 0:
			fmt.Fprintf(&b, "  - name: shell_%d\n    type: shell\n    command: echo {{inputs.feature}} %d\n    timeout: 30s\n    retry: {max_attempts: 3, backoff: exponential, initial: 1s}\n", i, i)
		case 1:
			fmt.Fprintf(&b, "  - name: agent_%d\n    type: agent\n    provider: claude\n    prompt: |\n      Step %d: {{inputs.feature}}\n      Keep going.\n    tools: [read_file, search]\n    tool_options: {max_calls: 50, timeout_per_call: 30s}\n", i, i)
		case 2:
			fmt.Fprintf(&b, "  - name: tool_%d\n    type: tool\n    tool: search\n    args: {pattern: \"x%d\"}\n    output_var: out_%d\n", i, i, i)
		case 3:
			fmt.Fprintf(&b, "  - name: par_%d\n    type: parallel\n    steps:\n      - {name: a_%d, command: echo a}\n      - {name: b_%d, command: echo b}\n", i, i, i)
		default:
			fmt.Fprintf(&b, "  - name: sub_%d\n    type: workflow\n    workflow: sub.yaml\n    inputs: {x: \"{{inputs.count}}\"}\n", i)
		}
	}
	return []byte(b.String())
}

func TestBigWorkflow(t *testing.T) {
	wf, err := New().LoadBytes("big.yaml", bigWorkflow(50))
	if err != nil {
		t.Fatalf("LoadBytes(big) = %v", err)
	}
	if len(wf.Steps) != 50 || len(wf.Warnings) != 0 {
		t.Errorf("LoadBytes(big) = %d steps, warnings %v; want 50, none", len(wf.Steps), wf.Warnings)
	}
}

func BenchmarkLoad(b *testing.B) {
	data := bigWorkflow(50)
	l := New()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.LoadBytes("big.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}
