package loader

import (
	"fmt"
	"reflect"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/yamlnode"
)

// whole reads every file in one parse: the reference a split read must match.
var whole = &Loader{}

// baseSteps are steps of every style a chunk boundary may fall between: flow and block
// mappings, literal and folded block scalars, multi-line quoted and plain scalars, comments,
// nested parallel steps, an entry whose mapping starts on the next line.
func baseSteps() []string {
	return []string{
		"- {name: s0, command: echo 0}",
		"- name: s1\n  command: echo 1\n  timeout: 30s\n  retry: {max_attempts: 3, backoff: exponential}",
		"- name: s2\n  command: |\n    echo a\n    echo b\n\n    echo c",
		"- name: s3\n  command: \"echo\n    more\"\n  continue_on_error: true",
		"# a comment between steps\n- name: s4\n  type: agent\n  provider: p\n  prompt: >\n    Say\n    hello.\n  tools: [t]",
		"- name: s5\n  command: echo five\n    and more plain text",
		"-\n  name: s6\n  command: echo 6",
		"- name: s7\n  steps:\n    - {name: s7a, command: echo a}\n    - name: s7b\n      command: echo b",
		"- name: s8\n  tool: t\n  args: {pattern: '{{steps.s1.output}}'}",
		"- name: s9\n  command: 'echo ''9'''\n  when: steps.s1.exit_code == 0",
		"- name: s10\n  workflow: sub.yaml\n  inputs: {x: \"{{inputs.feature}}\"}",
		"- {name: s11, type: shell, command: \"echo 11\", env: {A: \"1\"}}",
	}
}

const head = "name: split\ninputs:\n  - {name: feature, default: x}\nproviders:\n  p: {type: ollama, model: m}\n" +
	"tools:\n  - {name: t, command: \"echo {{args.pattern}}\", parameters: [{name: pattern, type: string}]}\n"

// render joins steps into a workflow: head, then steps: with its entries indented by indent,
// then tail.
func render(head string, steps []string, indent int, tail string) string {
	var b strings.Builder
	b.WriteString(head)
	b.WriteString("steps:\n")
	if len(steps) > 0 {
		b.WriteString(indentAll(steps, strings.Repeat(" ", indent)) + "\n")
	}
	b.WriteString(tail)
	return b.String()
}

// indentAll joins steps, every line but blank ones indented by pad.
func indentAll(steps []string, pad string) string {
	var b strings.Builder
	for _, st := range steps {
		for line := range strings.Lines(st + "\n") {
			if strings.TrimSpace(line) != "" {
				line = pad + line
			}
			b.WriteString(line)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// with returns the base steps with step i replaced.
func with(i int, step string) []string {
	s := baseSteps()
	s[i] = step
	return s
}

type splitCase struct {
	name string
	doc  string
	// split tells whether the split loader must read it in parts (the point); otherwise it may
	// decline or fall back to the whole parse (a part that does not parse on its own).
	split bool
	// errs tells whether loading fails.
	errs bool
}

func splitCases() []splitCase {
	cases := []splitCase{
		{name: "valid", doc: render(head, baseSteps(), 2, "output: done\n"), split: true},
		{name: "valid at column 0", doc: render(head, baseSteps(), 0, "output: done\n"), split: true},
		{name: "valid indented by 4", doc: render(head, baseSteps(), 4, ""), split: true},
		{name: "steps key with a comment", doc: strings.Replace(render(head, baseSteps(), 2, ""), "steps:\n", "steps:   # the list\n# more\n\n", 1), split: true},
		{name: "comments at column 0 between and after steps", doc: strings.ReplaceAll(render(head, baseSteps(), 2, "# end\n\noutput: x\n"), "  - name: s6", "# gone:\n#  - name: old\n  - name: s6"), split: true},
		{name: "CRLF", doc: strings.ReplaceAll(render(head, append(flowSteps(10), baseSteps()[1:3]...), 2, "output: done\n"), "\n", "\r\n"), split: true},
		// The parser counts a comment's line break twice when it is "\r\n", and one inside a
		// multi-line quoted scalar: the lines it gives what follows are not the file's, which
		// the split's checks see (it falls back to the whole parse, whose lines are the same).
		{name: "CRLF with comments and multi-line quoted scalars", doc: strings.ReplaceAll(render(head, baseSteps(), 2, "output: done\n"), "\n", "\r\n")},
		{name: "BOM", doc: "\ufeff" + render(head, baseSteps(), 2, ""), split: true},
		{name: "BOM and an error on line 1", doc: "\ufeffnme: split\n" + render(head[len("name: split\n"):], baseSteps(), 2, ""), split: true, errs: true},
		{name: "flow-style steps only", doc: render(head, flowSteps(40), 2, ""), split: true},
		{name: "anchor in one chunk used in later ones", doc: render(head, append(with(1, "- name: s1\n  command: &cmd echo shared\n  retry: &retry {max_attempts: 2}"), "- name: late\n  command: *cmd\n  retry: *retry", "- {name: late2, <<: *retry, command: x}"), 2, ""), split: true, errs: true},
		{name: "merge keys from an x- key", doc: render("x-base: &base {type: shell, timeout: 10s}\n"+head, append(baseSteps(), "- {<<: *base, name: m1, command: echo}", "- name: m2\n  <<: *base\n  command: echo"), 2, ""), split: true},
		{name: "anchor redefined across chunks", doc: render(head, append(with(0, "- {name: s0, command: &c first}"), "- {name: a1, command: *c}", "- {name: a2, command: &c second}", "- {name: a3, command: *c}"), 2, ""), split: true},
		{name: "x- key after the steps", doc: render(head, baseSteps(), 2, "x-later: &later {a: 1}\noutput: done\n"), split: true},
		{name: "alias after the steps", doc: render(head, with(3, "- name: s3\n  command: &out echo"), 2, "output: *out\n")},
		{name: "unknown alias", doc: render(head, with(7, "- name: s7\n  command: *nope"), 2, "x-a: &nope 1\n"), errs: true},
		{name: "unknown alias, no alias after", doc: render("x-a: &nop 1\n"+head, with(7, "- name: s7\n  command: *nope"), 2, ""), errs: true},
		{name: "duplicate steps key", doc: render(head, baseSteps(), 2, "steps:\n  - {name: z, command: z}\n"), split: true, errs: true},
		{name: "duplicate steps key, flow first", doc: "steps: [{name: z, command: z}]\n" + render(head, baseSteps(), 2, ""), errs: true},
		{name: "steps inside a quoted scalar", doc: "name: q\ndescription: \"text\nsteps:\n  - name: x\n  - name: y\"\nsteps:\n  - {name: a, command: a}\n  - {name: b, command: b}\n"},
		{name: "second document", doc: render(head, baseSteps(), 2, "---\nname: other\n"), errs: true},
		{name: "lone CR", doc: strings.Replace(render(head, baseSteps(), 2, ""), "echo 0", "echo\r0", 1), errs: true},
		{name: "document end marker", doc: render(head, baseSteps(), 2, "...\n"), split: true},
		{name: "work budget", doc: render(head, with(6, "- name: s6\n  type: agent\n  prompt: p\n  provider: p\n  options: {x: ["+strings.Repeat("1,", maxWork)+"1]}"), 2, ""), split: true, errs: true},
		{name: "work budget, then an unknown alias", doc: render(head, append(with(6, "- name: s6\n  type: agent\n  prompt: p\n  provider: p\n  options: {x: ["+strings.Repeat("1,", maxWork)+"1]}"), "- {name: late, command: *nope}"), 2, ""), errs: true},
	}
	return append(cases, mutated("step", func(steps []string) string {
		return render(head, steps, 2, "output: \"{{steps.s0.output}}\"\n")
	})...)
}

// mutated are the files doc makes of the base steps with each mutation in steps 0, 5 and 11.
func mutated(what string, doc func(steps []string) string) []splitCase {
	var cases []splitCase
	for _, at := range []int{0, 5, 11} {
		for _, m := range mutations() {
			cases = append(cases, splitCase{
				name: fmt.Sprintf("%s in %s %d", m.name, what, at), doc: doc(with(at, m.step)), split: m.split, errs: true,
			})
		}
	}
	return cases
}

// mutation is a step with a problem; split tells whether a file holding it is still read in
// parts (a step that does not parse on its own is not).
type mutation struct {
	name  string
	step  string
	split bool
}

func mutations() []mutation {
	return []mutation{
		{"unknown key", "- name: e\n  command: x\n  promt: y", true},
		{"wrong kind", "- name: e\n  command: [1, 2]\n  timeout: {a: 1}", true},
		{"bad duration", "- {name: e, command: x, timeout: 3 parsecs}", true},
		{"duplicate key", "- name: e\n  command: x\n  command: y", true},
		{"duplicate step name", "- {name: s1, command: x}", true},
		{"missing name", "- command: x", true},
		{"bad retry", "- {name: e, command: x, retry: {max_attempts: x, backoff: sideways}}", true},
		{"keys of two types", "- {name: e, command: x, prompt: y}", true},
		{"bad parallel child", "- name: e\n  steps:\n    - {name: c, command: x, tool: t}", true},
		{"not a mapping", "- just text", true},
		{"empty entry", "-", true},
		{"unclosed double quote", "- name: e\n  command: \"echo", false},
		{"unclosed single quote", "- {name: e, command: 'echo}", false},
		{"unclosed flow mapping", "- {name: e, command: echo", false},
		{"unclosed flow list", "- name: e\n  command: x\n  env: [a,", false},
		{"tab indentation", "- name: e\n\tcommand: x", false},
		{"tab after indentation", "- name: e\n  \tcommand: x", false},
		{"key less indented", "- name: e\n command: x", false},
		{"key at the entries' column", "- name: e\ncommand: x", false},
		{"bad indentation deeper", "- name: e\n  command: x\n     timeout: 1s", false},
		{"nested too deep", "- {name: e, command: x, env: " + strings.Repeat("[", yamlnode.MaxDepth+1) + "}", false},
		{"unknown alias", "- {name: e, command: *nope}", false},
		{"document marker inside", "- {name: e, command: x}\n---", false},
		{"stray dash", "- name: e\n  command: x\n  -", false},
		{"mapping then list", "- name: e\n  command: x\n  - y", false},
		{"block scalar swallowing", "- name: e\n  command: |\n  - {name: f, command: x}", false},
	}
}

func flowSteps(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("- {name: f%03d, type: shell, command: \"echo %d\"}", i, i)
	}
	return out
}

// Reading a file in parts gives what one parse gives: the same workflow, the same problems
// at the same file:line:col, whatever the chunk size (one step per chunk puts a boundary
// between every two steps), and it really reads in parts where it should.
func TestSplitMatchesWhole(t *testing.T) {
	for _, tc := range splitCases() {
		t.Run(tc.name, func(t *testing.T) { checkSplitMatchesWhole(t, tc, readSplit) })
	}
}

// checkSplitMatchesWhole reads tc's file whole and in parts of three sizes: the same
// workflow, the same errors, and where tc.split says so, read in parts in mode.
func checkSplitMatchesWhole(t *testing.T, tc splitCase, mode readMode) {
	t.Helper()
	want, _, wantErr := whole.loadBytes("wf.yaml", []byte(tc.doc))
	if (wantErr != nil) != tc.errs {
		t.Fatalf("whole parse: err = %v, want errors %v", wantErr, tc.errs)
	}
	for _, size := range []int{1, 120, 400} {
		l := &Loader{splitFrom: 1, splitChunk: size}
		got, gotMode, gotErr := l.loadBytes("wf.yaml", []byte(tc.doc))
		if tc.split && gotMode != mode {
			t.Errorf("chunk %d: read mode %d, want %d", size, gotMode, mode)
		}
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Errorf("chunk %d: errors differ\nsplit:\n%v\nwhole:\n%v", size, gotErr, wantErr)
		}
		if !reflect.DeepEqual(problemsOf(gotErr), problemsOf(wantErr)) {
			t.Errorf("chunk %d: problems differ\nsplit: %#v\nwhole: %#v", size, gotErr, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("chunk %d: workflows differ\nsplit: %+v\nwhole: %+v", size, got, want)
		}
	}
}

func problemsOf(err error) workflow.Problems {
	ps, _ := err.(workflow.Problems)
	return ps
}

// The default sizes read a big workflow in parts, and a small one whole.
func TestSplitDefaults(t *testing.T) {
	big := []byte(render("name: big\n", flowSteps(2000), 2, ""))
	if _, mode, err := New().loadBytes("big.yaml", big); err != nil || mode != readSplit {
		t.Fatalf("2,000 steps: mode %d, err %v; want read in parts", mode, err)
	}
	small := []byte(render("name: small\n", flowSteps(20), 2, ""))
	if _, mode, err := New().loadBytes("small.yaml", small); err != nil || mode != readWhole {
		t.Fatalf("20 steps: mode %d, err %v; want read whole", mode, err)
	}
}

// Hostile input in a big file is refused as in a small one, at its place: deep nesting, a
// mapping past the key limit, aliases that expand past the budget, a huge flow list.
func TestSplitRefusesHostileInput(t *testing.T) {
	steps := flowSteps(3000)
	wide := "- name: wide\n  command: x\n  env:\n" + keysBlock(yamlnode.MaxMappingKeys+1, 4)
	bomb := "- name: bomb\n  command: x\n  env: {a: &a [l, l, l, l, l, l, l, l, l, l], " +
		"b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a], c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b], " +
		"d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c], e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]}"
	for name, tc := range map[string]struct {
		step, msg string
	}{
		"deep":       {"- {name: deep, command: x, env: " + strings.Repeat("[", 100_000) + "}", "nested deeper than 256"},
		"wide":       {wide, "more than 5000 keys"},
		"alias bomb": {bomb, "aliases expand to more than"},
		"flow list":  {"- {name: flow, type: agent, prompt: x, options: {a: [" + strings.Repeat("a, ", maxWork) + "a]}}", "document too large"},
	} {
		t.Run(name, func(t *testing.T) {
			for _, at := range []int{0, 1500, len(steps)} {
				doc := []byte(render("name: hostile\n", append(steps[:at:at], append([]string{tc.step}, steps[at:]...)...), 2, ""))
				_, err := New().LoadBytes("wf.yaml", doc)
				if err == nil || !strings.Contains(err.Error(), tc.msg) {
					t.Fatalf("at step %d: err = %v, want %q", at, err, tc.msg)
				}
				_, wantErr := whole.LoadBytes("wf.yaml", doc)
				if err.Error() != wantErr.Error() {
					t.Errorf("at step %d: split read says\n%v\nwhole read says\n%v", at, err, wantErr)
				}
			}
		})
	}
}

func keysBlock(n, indent int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%sK%d: v\n", strings.Repeat(" ", indent), i)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func FuzzSplitMatchesWhole(f *testing.F) {
	for _, tc := range append(splitCases(), nestedCases()...) {
		if len(tc.doc) < 4000 {
			f.Add([]byte(tc.doc), uint8(1))
		}
	}
	f.Fuzz(func(t *testing.T, doc []byte, size uint8) {
		want, _, wantErr := whole.loadBytes("wf.yaml", doc)
		got, _, gotErr := (&Loader{splitFrom: 1, splitChunk: int(size)}).loadBytes("wf.yaml", doc)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
			t.Fatalf("split read differs\nsplit: %v\n%+v\nwhole: %v\n%+v", gotErr, got, wantErr, want)
		}
	})
}

// BenchmarkLoad10000Steps loads a workflow of 10,000 one-line steps (the shape of procbench's
// big workflow) in parts, as awf does, and whole, as it did. Both allocate about as much; what
// differs is how much is live at once, reported as peak-live-MB: the largest live heap any
// garbage collection during the benchmark found (what a process's peak memory follows).
func BenchmarkLoad10000Steps(b *testing.B) {
	for _, shape := range []struct {
		name string
		data []byte
	}{
		{"steps", []byte(render("name: bench\n", flowSteps(10000), 2, ""))},
		{"parallel", []byte(renderNested("name: bench\n", flowSteps(10000), 4, ""))},
	} {
		b.Run(shape.name, func(b *testing.B) { benchmarkLoad(b, shape.data) })
	}
}

func benchmarkLoad(b *testing.B, data []byte) {
	for _, l := range []struct {
		name string
		l    *Loader
	}{{"split", New()}, {"whole", whole}} {
		b.Run(l.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			runtime.GC()
			peak := watchLiveHeap()
			for b.Loop() {
				if _, err := l.l.LoadBytes("big.yaml", data); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(peak())/(1<<20), "peak-live-MB")
		})
	}
}

// watchLiveHeap records the live heap after every garbage collection from now on, until the
// returned function is called; it returns the largest.
func watchLiveHeap() (stop func() uint64) {
	var peak atomic.Uint64
	var done atomic.Bool
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var arm func()
	arm = func() {
		// A finalizer runs after the collection that found its object unreachable.
		runtime.SetFinalizer(new([16]byte), func(*[16]byte) {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			if !done.Load() {
				arm()
			}
		})
	}
	arm()
	return func() uint64 {
		runtime.GC()
		done.Store(true)
		return peak.Load()
	}
}
