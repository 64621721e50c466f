package statestore

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/state"
)

// TestRunEncoderMatchesEncodeYAML checks that assembling a state file from cached steps gives
// exactly the YAML of the whole run, as the run changes in place between encodings.
func TestRunEncoderMatchesEncodeYAML(t *testing.T) {
	run := smallRun()
	run.States["tricky"] = &state.StepState{Status: state.Failed, Output: " lead\r\n\n\nx\n\n", Response: map[string]any{"n": 1.5, "l": []any{"a\nb", nil}}}
	run.States["n"] = nil
	changes := []func(){
		func() {},
		func() { run.States["build"].Output = "changed\n\nin place\n" },
		func() { run.States["logs"].ToolCalls[0].Arguments["path"] = "b.txt" },
		func() { run.Step("new step").Output = "added" },
		func() { delete(run.States, "build"); run.Status = state.Completed },
		func() { run.States["tricky"].Response.(map[string]any)["l"].([]any)[1] = "nested change" },
		func() { run.States["tricky"].Response.(map[string]any)["n"] = 0.0 },
		func() { run.States["tricky"].Response.(map[string]any)["n"] = math.Copysign(0, -1) }, // == 0, written "-0.0"
		func() {
			run.States["logs"].ToolCalls[0].Arguments["z"] = 0.0
			run.States["tricky"].Response = nil
		},
		func() { run.States["logs"].ToolCalls[0].Arguments["z"] = math.Copysign(0, -1) },
		func() { run.States = map[string]*state.StepState{} },
		func() { run.States = nil },
		func() { run.Step("again").Output = "x" },
		func() { run.Order = append(run.Order, "multi\nline name", " spaced", "yes") },
		func() { run.Order = run.Order[:1] },
		func() { run.Order[0] = "changed in place" },
		func() { run.Order = nil },
		func() { run.Order = []string{} },
	}
	var enc runEncoder
	for i, change := range changes {
		change()
		parts, err := enc.encode(run)
		if err != nil {
			t.Fatalf("change %d: encode: %v", i, err)
		}
		got := strings.Join(parts, "")
		want, err := encodeYAML(run)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("change %d: runEncoder.encode differs from encodeYAML (-want +got):\n%s", i, d)
		}
		if back, _, err := decodeRun([]byte(got)); err != nil || len(back.States) != len(run.States) {
			t.Errorf("change %d: decode: %v", i, err)
		}
	}
}

func TestRunEncoderMatchesEncodeYAMLBig(t *testing.T) {
	run := benchRun(50, 0)
	var enc runEncoder
	for i := range 3 {
		run.States[fmt.Sprintf("step%04d", i)].Output = fmt.Sprintf("now %d\n", i)
		parts, err := enc.encode(run)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(parts, "")
		want, _ := encodeYAML(run)
		if got != want {
			t.Fatalf("encode %d differs from encodeYAML:\n%s", i, cmp.Diff(want, got))
		}
	}
}

func TestDeepCopySharesNothing(t *testing.T) {
	exit, wantExit := 1, 1
	st := &state.StepState{ExitCode: &exit, Response: map[string]any{"l": []any{map[string]any{"k": "v"}}},
		ToolCalls: []state.ToolCallRecord{{Arguments: map[string]any{"a": 1}, Result: &state.ToolCallResult{Output: "o"}}},
		Vars:      map[string]string{"k": "v"}}
	c := deepCopy(st)
	if d := cmp.Diff(st, c); d != "" {
		t.Fatalf("deepCopy differs (-orig +copy):\n%s", d)
	}
	*st.ExitCode = 2
	st.Response.(map[string]any)["l"].([]any)[0].(map[string]any)["k"] = "changed"
	st.ToolCalls[0].Arguments["a"] = 2
	st.ToolCalls[0].Result.Output = "changed"
	st.Vars["k"] = "changed"
	want := &state.StepState{ExitCode: &wantExit, Response: map[string]any{"l": []any{map[string]any{"k": "v"}}},
		ToolCalls: []state.ToolCallRecord{{Arguments: map[string]any{"a": 1}, Result: &state.ToolCallResult{Output: "o"}}},
		Vars:      map[string]string{"k": "v"}}
	if d := cmp.Diff(want, c); d != "" {
		t.Errorf("changing the original changed the copy (-want +got):\n%s", d)
	}
}

// TestRunEncoderRandomMutations is the property the record cache rests on: after any sequence
// of changes made in place, as the agent loop makes them, the cached encoding is byte for byte
// go-yaml's encoding of the whole run, made afresh.
func TestRunEncoderRandomMutations(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, 7))
			g := mutator{rng: rng, str: randomString, text: randomString, value: randomValue, exotic: true}
			run := agentRun(3)
			var enc runEncoder
			for i := range 200 {
				what := g.mutate(run)
				parts, err := enc.encode(run)
				if err != nil {
					t.Fatalf("mutation %d (%s): encode: %v", i, what, err)
				}
				want, err := encodeYAML(run)
				if err != nil {
					t.Fatal(err)
				}
				if got := strings.Join(parts, ""); got != want {
					t.Fatalf("mutation %d (%s): cached encoding differs from encodeYAML (-want +got):\n%s", i, what, cmp.Diff(want, got))
				}
			}
		})
	}
}

// mutator changes a run in place, mostly as an agent step changes between two saves.
type mutator struct {
	rng   *rand.Rand
	str   func(*rand.Rand) string   // ids, names, arguments
	text  func(*rand.Rand) string   // outputs and message contents
	value func(*rand.Rand, int) any // argument values
	// exotic allows values that do not read back as they were written: a step response that
	// holds a placeholder's text.
	exotic bool
}

// mutate makes one change and says what it did.
func (g mutator) mutate(run *state.RunState) string {
	rng := g.rng
	st := run.Step("implement")
	if st.Conversation == nil {
		st.Conversation = &state.Conversation{}
	}
	calls, msgs := st.ToolCalls, st.Conversation.Messages
	switch n := rng.IntN(20); {
	case n < 4:
		st.ToolCalls = append(st.ToolCalls, state.ToolCallRecord{ID: g.str(rng), Tool: "read_file",
			Arguments: map[string]any{"path": g.str(rng), "n": g.value(rng, 2)}, InFlight: true})
		return "append call"
	case n < 7 && len(calls) > 0:
		res := state.ToolCallResult{Success: rng.IntN(2) == 0, Output: g.text(rng), Error: g.str(rng), DurationMs: rng.Int64N(9)}
		calls[len(calls)-1].Result = &res
		return "set last result"
	case n < 8 && len(calls) > 0 && calls[len(calls)-1].Result != nil:
		calls[len(calls)-1].Result.Output += "more"
		return "change last result in place"
	case n < 10 && len(calls) > 0:
		calls[len(calls)-1].InFlight = !calls[len(calls)-1].InFlight
		return "flip in flight"
	case n < 13:
		m := state.Message{Role: []string{"assistant", "tool", "user"}[rng.IntN(3)], Content: g.text(rng)}
		if m.Role == "assistant" {
			m.ToolCalls = []state.CallRef{{ID: g.str(rng), Name: "read_file", Arguments: `{"path":"x"}`}}
		}
		st.Conversation.Messages = append(st.Conversation.Messages, m)
		st.Conversation.Turns++
		return "append message"
	case n < 14:
		st.Status = []state.Status{state.Running, state.Completed, state.Failed, state.Status(g.str(rng))}[rng.IntN(4)]
		return "step status"
	case n < 15 && len(calls) > 0:
		c := &calls[rng.IntN(len(calls))]
		c.Arguments["path"] = g.str(rng)
		return "change earlier arguments in place"
	case n < 16 && len(msgs) > 2:
		st.Conversation.Messages = append(msgs[:1], msgs[len(msgs)/2:]...)
		return "compact conversation"
	case n < 17 && len(msgs) > 0:
		msgs[rng.IntN(len(msgs))].ToolCalls = nil
		return "change earlier message in place"
	case n < 18:
		st.Tokens = &state.Tokens{Input: rng.IntN(100), Total: rng.IntN(100)}
		st.ToolStats = &state.ToolStats{TotalCalls: len(calls)}
		run.UpdatedAt = run.UpdatedAt.Add(time.Second)
		return "counters"
	case n < 19:
		other := run.Step(fmt.Sprintf("other%d", rng.IntN(3)))
		other.Output = g.text(rng)
		other.ToolCalls = append(other.ToolCalls, state.ToolCallRecord{ID: "x", Arguments: map[string]any{}})
		return "other step"
	}
	switch rng.IntN(4) {
	case 0:
		st.ToolCalls = nil
	case 1:
		st.Conversation = nil
	case 2:
		if g.exotic { // a value holding the placeholders' text: the step is encoded whole
			st.Response = callPlaceholder
		} else {
			st.Response = map[string]any{"id": placeholderID}
		}
	default:
		st.Response = nil
	}
	return "reset"
}

// TestStepEncoderPieces checks that an agent step is encoded in pieces, and encoded whole,
// correctly, when one of its values holds a placeholder's text.
func TestStepEncoderPieces(t *testing.T) {
	run := agentRun(3)
	st := run.States["implement"]
	for _, collide := range []bool{false, true} {
		if collide {
			st.Response = []state.ToolCallRecord{{ID: placeholderID}}
		}
		var enc runEncoder
		parts, err := enc.encode(run)
		if err != nil {
			t.Fatal(err)
		}
		want, err := encodeYAML(run)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(parts, ""); got != want {
			t.Errorf("collide=%v: encoding differs from encodeYAML (-want +got):\n%s", collide, cmp.Diff(want, got))
		}
		se := enc.steps["implement"]
		if whole := se.whole != nil; whole != collide {
			t.Errorf("collide=%v: step encoded whole = %v", collide, whole)
		}
		if !collide && (se.callAt < 0 || se.msgAt < 0 || len(se.calls.yaml) != 3 || len(se.msgs.yaml) != 6) {
			t.Errorf("step not encoded in pieces: callAt %d, msgAt %d, %d calls, %d messages cached",
				se.callAt, se.msgAt, len(se.calls.yaml), len(se.msgs.yaml))
		}
	}
}

// TestSameNoticesEveryField checks, by reflection, that sameCall and sameMessage notice a
// change in any field of a record, including fields added to the state types later.
func TestSameNoticesEveryField(t *testing.T) {
	for _, v := range fieldVariants(reflect.TypeFor[state.ToolCallRecord]()) {
		c := v.Interface().(state.ToolCallRecord)
		if zero, saved := saveCall(state.ToolCallRecord{}), saveCall(c); sameCall(&zero, &c) || !sameCall(&saved, &c) {
			t.Errorf("sameCall does not tell %+v from the zero record", c)
		}
	}
	for _, v := range fieldVariants(reflect.TypeFor[state.Message]()) {
		m := v.Interface().(state.Message)
		if zero := (state.Message{}); sameMessage(&zero, &m) || !sameMessage(&m, &m) {
			t.Errorf("sameMessage does not tell %+v from the zero message", m)
		}
	}
}

// TestSameByIdentity checks the journal's comparisons: any field replaced is noticed, a
// result replaced by an equal copy is not a change, and a change made in place inside a
// record's arguments or result is, as documented, not seen.
func TestSameByIdentity(t *testing.T) {
	for _, v := range fieldVariants(reflect.TypeFor[state.ToolCallRecord]()) {
		c := v.Interface().(state.ToolCallRecord)
		if zero, saved := saveCall(state.ToolCallRecord{}), saveCall(c); sameCallIdentity(&zero, &c) || !sameCallIdentity(&saved, &c) {
			t.Errorf("sameCallIdentity does not tell %+v from the zero record", c)
		}
	}
	for _, v := range fieldVariants(reflect.TypeFor[state.Message]()) {
		m := v.Interface().(state.Message)
		if zero, saved := saveMessage(state.Message{}), saveMessage(m); sameMessageIdentity(&zero, &m) || !sameMessageIdentity(&saved, &m) {
			t.Errorf("sameMessageIdentity does not tell %+v from the zero message", m)
		}
	}
	c := state.ToolCallRecord{ID: "c", Arguments: map[string]any{"k": "v"}, Result: &state.ToolCallResult{Output: "out"}}
	saved := saveCall(c)
	res := *c.Result
	c.Result = &res
	if !sameCallIdentity(&saved, &c) {
		t.Error("sameCallIdentity: a result replaced by an equal copy is a change")
	}
	saved = saveCall(c)
	c.Result.Output, c.Arguments["k"] = "changed in place", "changed in place"
	if !sameCallIdentity(&saved, &c) || sameCall(&saved, &c) {
		t.Error("changes in place: sameCallIdentity should miss them, sameCall see them")
	}
}

// fieldVariants returns values of type t that differ from its zero value in one place each:
// every field, and every field of the structs it points to or holds in slices.
func fieldVariants(t reflect.Type) []reflect.Value {
	var out []reflect.Value
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			if !t.Field(i).IsExported() {
				continue
			}
			for _, fv := range fieldVariants(t.Field(i).Type) {
				v := reflect.New(t).Elem()
				v.Field(i).Set(fv)
				out = append(out, v)
			}
		}
	case reflect.Pointer:
		out = append(out, reflect.New(t.Elem()))
		for _, ev := range fieldVariants(t.Elem()) {
			p := reflect.New(t.Elem())
			p.Elem().Set(ev)
			out = append(out, p)
		}
	case reflect.Slice:
		out = append(out, reflect.MakeSlice(t, 1, 1))
		for _, ev := range fieldVariants(t.Elem()) {
			s := reflect.MakeSlice(t, 1, 1)
			s.Index(0).Set(ev)
			out = append(out, s)
		}
	case reflect.Map:
		m := reflect.MakeMap(t)
		m.SetMapIndex(reflect.ValueOf("k").Convert(t.Key()), reflect.ValueOf("v").Convert(t.Elem()))
		out = append(out, m, reflect.MakeMap(t))
	case reflect.String:
		out = append(out, reflect.ValueOf("x").Convert(t))
	case reflect.Bool:
		out = append(out, reflect.ValueOf(true).Convert(t))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		out = append(out, reflect.ValueOf(1).Convert(t))
	case reflect.Interface:
		out = append(out, reflect.ValueOf("v"))
	default:
		panic("fieldVariants: add a case for " + t.String())
	}
	return out
}
