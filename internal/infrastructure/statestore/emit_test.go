package statestore

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/state"
)

// checkEmit fails unless emit(v) is encodeYAML(v), byte for byte.
func checkEmit(t *testing.T, v any) {
	t.Helper()
	want, wantErr := encodeYAML(v)
	got, err := emit(v)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("emit(%#v) error = %v, encodeYAML error = %v", v, err, wantErr)
	}
	if got != want {
		t.Errorf("emit(%#v) differs from encodeYAML (-encodeYAML +emit):\n%s", v, cmp.Diff(want, got))
	}
}

// inPositions puts s where a state file can hold a string: alone, as a value, an item, a key,
// and nested in every way the printer lays out differently.
func inPositions(s string) []any {
	return []any{
		s,
		map[string]any{"k": s},
		[]any{s},
		map[string]any{s: "v", "other": 1},
		map[string]any{"a": map[string]any{"b": []any{s, map[string]any{"c": s, s: []any{s}}}}},
		[]any{[]any{s, s}, map[string]any{"x": []any{[]any{s}}, "y": map[string]any{"z": s}}},
		[]any{map[string]any{"a": map[string]any{"b": s}}},
		state.Message{Role: "tool", Content: s, ToolCalls: []state.CallRef{{ID: s, Arguments: s}}},
		[]state.ToolCallRecord{{ID: s, Tool: "t", Arguments: map[string]any{s: s}, Result: &state.ToolCallResult{Output: s, Error: s}}},
		map[string]*state.StepState{s: {Status: state.Status(s), Output: s, Response: []any{s, map[string]any{"r": s}}}},
	}
}

func TestEmitStrings(t *testing.T) {
	for _, s := range trickyStrings {
		for _, v := range inPositions(s) {
			checkEmit(t, v)
		}
	}
}

// textType encodes itself: emit leaves it to go-yaml.
type textType struct{ v string }

func (x textType) MarshalText() ([]byte, error) { return []byte("text:" + x.v), nil }

func TestEmitValues(t *testing.T) {
	start := time.Date(2026, 3, 1, 10, 0, 0, 123456789, time.FixedZone("X", 3600))
	var zero time.Time
	var nilMap map[string]any
	var nilSlice []string
	type tagged struct {
		A string            `yaml:"a,omitempty"`
		B int               `json:"b"`
		C *time.Time        `yaml:"c,omitempty"`
		D time.Time         `yaml:"d,omitempty"`
		E any               `yaml:"e,omitempty"`
		F []int             `yaml:"f,omitempty"`
		G map[string]string `yaml:"g"`
		H struct {
			X int `yaml:"x,omitempty"`
		} `yaml:"h,omitempty"`
		NoTag    float32
		Skipped  string `yaml:"-"`
		internal int
	}
	values := []any{
		nil, true, false, 0, -1, math.MaxInt64, math.MinInt64, uint64(math.MaxUint64), int8(-3), uint16(7),
		0.0, 1.0, -2.5, 0.1, 1e20, 1e21, 1e-7, 123456789.0, math.MaxFloat64, math.SmallestNonzeroFloat64,
		math.Inf(1), math.Inf(-1), math.NaN(), float32(1.5), float32(1e20),
		start, &start, zero, &zero, time.Duration(5), nilMap, nilSlice, map[string]any{}, []any{}, [0]int{}, [2]int{1, 2},
		[]any{nil, []any{}, map[string]any{}, []any{[]any{[]any{"deep"}}}}, []byte("ab"),
		map[string]any{"e": []any{}, "f": map[string]any{}, "g": []any{nil}, "h": map[string]any{"i": nil}},
		tagged{}, tagged{A: "a", B: 2, C: &start, D: start, E: zero, F: []int{1}, G: map[string]string{"k": "v"}, Skipped: "x", internal: 1},
		tagged{E: &zero, H: struct {
			X int `yaml:"x,omitempty"`
		}{X: 1}},
		&tagged{NoTag: 2},
		map[int]string{2: "b", 10: "a"}, textType{"x"}, map[string]any{"t": textType{"y"}}, netip.MustParseAddr("::1"),
		struct {
			V any `yaml:"v,flow"`
		}{[]int{1, 2}},
		smallRun(), benchRun(3, 0), agentRun(3), &state.RunState{}, &state.StepState{}, state.ToolCallRecord{},
	}
	for i, v := range values {
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkEmit(t, v) })
	}
}

// TestEmitWritesStateTypes checks that emit writes the values of a state file itself, never
// handing them to go-yaml: it would be correct, and a hundred times slower.
func TestEmitWritesStateTypes(t *testing.T) {
	run := agentRun(3)
	run.States["small"] = smallRun().States["logs"]
	run.States["small"].Response = map[string]any{"n": 1.5, "l": []any{"a\nb", nil, true, 3}}
	for _, v := range []any{run, map[string]*state.StepState{"s": run.States["small"]}, run.States["implement"].ToolCalls,
		run.States["implement"].Conversation.Messages, run.Order} {
		if _, ok := emitValue(reflect.ValueOf(v), 1); !ok {
			t.Errorf("emit hands %T to go-yaml", v)
		}
	}
}

func TestEmitRandomValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		checkEmit(t, randomValue(rng, 4))
		if t.Failed() {
			return
		}
	}
}

// randomValue is a JSON-like value, as tool arguments and step responses hold, with strings
// from trickyStrings and a few types JSON lacks.
func randomValue(rng *rand.Rand, depth int) any {
	n := 12
	if depth <= 0 {
		n = 9
	}
	switch rng.IntN(n) {
	case 0:
		return nil
	case 1:
		return rng.IntN(2) == 0
	case 2:
		return rng.IntN(2000) - 1000
	case 3:
		return []float64{0, 1, -0.5, 1e20, 1e-9, 3.25, math.Inf(1), 12345678.9}[rng.IntN(8)]
	case 4:
		return uint64(rng.Uint64())
	case 5:
		return time.Unix(rng.Int64N(4e9), rng.Int64N(1e9)).UTC()
	case 6, 7, 8:
		return randomString(rng)
	case 9:
		l := make([]any, rng.IntN(4))
		for i := range l {
			l[i] = randomValue(rng, depth-1)
		}
		return l
	default:
		m := map[string]any{}
		for range rng.IntN(4) {
			m[randomString(rng)] = randomValue(rng, depth-1)
		}
		return m
	}
}

func randomString(rng *rand.Rand) string {
	if rng.IntN(3) == 0 {
		const chars = "ab z-_:#\n\t'\"{}[],.0é"
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteByte(chars[rng.IntN(len(chars))])
		}
		return b.String()
	}
	return trickyStrings[rng.IntN(len(trickyStrings))]
}

func TestPlainWordWords(t *testing.T) {
	words := []string{"null", "Null", "NULL", "nULL", "true", "True", "TRUE", "tRUE", "false", "False", "FALSE",
		"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF",
		"inf", "Inf", "infinity", "Infinity", "nan", "NaN", "e5", "E5", "x1", "a-b", "a- b", "a b", "a.b.c",
		"inf.", "nan.", "n.5", "a/b", "call_1", "read_file", "Z", "z ", "a_", "a.", "a-", "a/"}
	for _, s := range words {
		if got, want := plainSafe(s), plainChecked(s); got != want {
			t.Errorf("plainSafe(%q) = %v, without its shortcut %v", s, got, want)
		}
	}
}

// FuzzEmit states the property emit rests on: for any string, in any position, emit writes
// what encodeYAML writes.
func FuzzEmit(f *testing.F) {
	for _, s := range trickyStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := plainSafe(s), plainChecked(s); got != want {
			t.Errorf("plainSafe(%q) = %v, without its shortcut %v", s, got, want)
		}
		for _, v := range inPositions(s) {
			checkEmit(t, v)
		}
	})
}
