package statestore

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/google/go-cmp/cmp"
)

// hostileOutputs are step outputs that look, line by line, like the lines splitStates cuts
// at: a key at column 2, a top-level key, the end marker.
var hostileOutputs = []string{
	"  s1:\n    status: failed\n",
	"states:\n  x:\n",
	"# end\n",
	"\n\n  y: 1\nz: 2\n",
	"- a\n  - b\n",
	" leading space\n\ttab\n",
}

// TestSplitDecodeEqualsWholeDecode: a run large enough to be read in chunks, whose outputs
// imitate the lines the cut is made at, loads exactly as the whole document decodes.
func TestSplitDecodeEqualsWholeDecode(t *testing.T) {
	s := newStore(t, t.TempDir())
	run := benchRun(3*splitChunk+splitFrom, 0)
	i := 0
	for _, st := range run.States {
		st.Output = hostileOutputs[i%len(hostileOutputs)] + st.Output
		i++
	}
	if err := s.Save(t.Context(), run); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(s.Path(run.ID))
	if err != nil {
		t.Fatal(err)
	}
	split, ok := splitStates(data)
	if !ok {
		t.Fatal("the state file was not split: the chunked path is untested")
	}
	got, err := decodeSplit(split)
	if err != nil {
		t.Fatalf("decodeSplit: %v", err)
	}
	var want runDoc
	if err := yaml.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(&want, got); d != "" {
		t.Errorf("split decode (-whole +split):\n%s", d)
	}
	if len(got.States) != len(run.States) {
		t.Errorf("%d steps, want %d", len(got.States), len(run.States))
	}
}

// TestSplitDecodeFallsBack: a large state file the chunks cannot read alone (a step named
// twice, a chunk that is not YAML) is decoded whole, so its error names the right line of
// the file.
func TestSplitDecodeFallsBack(t *testing.T) {
	var b strings.Builder
	b.WriteString(stateHeader + "id: x\nworkflow: w\nstatus: completed\nstates:\n")
	for i := range splitFrom + 10 {
		fmt.Fprintf(&b, "  s%d:\n    status: completed\n", i)
	}
	whole := b.String()
	for name, tc := range map[string]struct{ doc, want string }{
		// The appended lines are line 1050: the header, four keys and 522 two-line steps before.
		"duplicate": {whole + "  s3:\n    status: failed\n" + stateEnd, `[1050:3] mapping key "s3" already defined at [12:3]`},
		"bad chunk": {whole + "  s9999: [\n" + stateEnd, "[1050:10]"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := decodeRun([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

// BenchmarkLoad measures loading a finished run's state file: its cost per step must not grow
// with the number of steps (the YAML parser's mappings are quadratic in their keys).
func BenchmarkLoad(b *testing.B) {
	for _, n := range []int{50, 2000, 10000} {
		b.Run(fmt.Sprintf("steps=%d", n), func(b *testing.B) {
			s := newStoreB(b)
			run := benchRun(n, 0)
			if err := s.Save(b.Context(), run); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := s.Load(b.Context(), run.ID); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/step")
		})
	}
}
