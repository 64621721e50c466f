package loader

import (
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"testing"
)

// Mutations of the split cases, top-level and nested (a character of YAML syntax inserted, deleted or replaced at
// a random place) read the same in parts as whole: the boundaries' checks catch what a
// mutation breaks across them. AWF_SPLIT_MUTATIONS sets how many (300) and AWF_SPLIT_SEED the
// seed, for longer searches (30,000 passed when this was written).
func TestSplitMatchesWholeMutated(t *testing.T) {
	n := 300
	if s := os.Getenv("AWF_SPLIT_MUTATIONS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	rng := rand.New(rand.NewPCG(14, seed()))
	cases := append(splitCases(), nestedCases()...)
	syntax := []string{"\n", " ", "  ", "- ", ": ", "\"", "'", "[", "]", "{", "}", ",", "#", "|", ">", "&a ", "*a", "\t", "\r\n", "? ", "---\n", "<<: "}
	for i := range n {
		tc := cases[rng.IntN(len(cases))]
		doc := []byte(tc.doc)
		if len(doc) > 20000 {
			continue
		}
		for range 1 + rng.IntN(3) {
			at := rng.IntN(len(doc) + 1)
			ins := syntax[rng.IntN(len(syntax))]
			switch rng.IntN(3) {
			case 0:
				doc = append(doc[:at:at], append([]byte(ins), doc[at:]...)...)
			case 1:
				if at < len(doc) {
					doc = append(doc[:at:at], doc[at+1:]...)
				}
			default:
				if at < len(doc) {
					doc = append(doc[:at:at], append([]byte(ins), doc[at+1:]...)...)
				}
			}
		}
		want, _, wantErr := whole.loadBytes("wf.yaml", doc)
		for _, size := range []int{1, 200} {
			got, _, gotErr := (&Loader{splitFrom: 1, splitChunk: size}).loadBytes("wf.yaml", doc)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
				t.Fatalf("mutation %d of %q (chunk %d) reads differently in parts:\n%q\nsplit: %v\nwhole: %v", i, tc.name, size, doc, gotErr, wantErr)
			}
		}
	}
}

// seed is AWF_SPLIT_SEED plus one (a fixed seed when unset).
func seed() uint64 {
	s, _ := strconv.ParseUint(os.Getenv("AWF_SPLIT_SEED"), 10, 64)
	return s + 1
}
