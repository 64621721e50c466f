package replay_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/awf-dev/awf/internal/bom/bomtest"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/ports/portstest"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/providers/replay"
)

var tools = []ports.ToolSchema{{Name: "read_file", Parameters: json.RawMessage(`{"type":"object"}`)}, {Name: "run_tests"}}

// conversation is a run of one step: each request extends the previous one.
func conversation() []ports.ChatRequest {
	first := []state.Message{{Role: "user", Content: "Implement: add Reverse\nwith a test"}}
	second := append(first,
		state.Message{Role: "assistant", Content: "Reading.", ToolCalls: []state.CallRef{{ID: "call_1", Name: "read_file", Arguments: `{"path":"a.go"}`}}},
		state.Message{Role: "tool", ToolCallID: "call_1", Name: "read_file", Content: "package a\n\tfunc A() {}\n"})
	return []ports.ChatRequest{
		{Model: "m1", System: "Be brief.", Messages: first, Tools: tools},
		{Model: "m1", System: "Be brief.", Messages: second, Tools: tools},
	}
}

func replies() []portstest.Reply {
	r1 := portstest.Calls(1, [2]string{"read_file", `{"path":"a.go"}`})
	r1.Response.Content = "Reading."
	r1.Response.Usage = state.Tokens{Input: 10, Output: 5, Total: 15}
	return []portstest.Reply{r1, portstest.Text("Done: it works.\n  - with \"quotes\"\n\ttabs")}
}

// record runs the conversation through a recorder over a scripted provider.
func record(t *testing.T, path string) []ports.ChatResponse {
	t.Helper()
	rec := replay.NewRecorder(path)
	p := rec.Wrap("wf", "implement", portstest.NewScriptedProvider(replies()...))
	var out []ports.ChatResponse
	for _, req := range conversation() {
		resp, err := p.Chat(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, resp)
	}
	return out
}

func TestRecordThenReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cassettes", "run.yaml")
	live := record(t, path)
	player, err := replay.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	p := player.Step("wf", "implement")
	for i, req := range conversation() {
		got, err := p.Chat(t.Context(), req)
		if err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		want := live[i]
		if want.Model == "" {
			want.Model = req.Model
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("reply %d (-live +replayed):\n%s", i+1, diff)
		}
	}
	if u := player.Unused(); len(u) != 0 {
		t.Errorf("Unused = %v, want none", u)
	}
	c, err := replay.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(conversation()[1].Messages, c.Interactions[1].Request.Messages); diff != "" {
		t.Errorf("recorded request (-sent +recorded):\n%s", diff)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "content: |-\n") {
		t.Errorf("multi-line text is not a literal block:\n%s", data)
	}
}

func TestReplayMismatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.yaml")
	record(t, path)
	tests := []struct {
		name   string
		change func([]ports.ChatRequest) ports.ChatRequest
		want   string
	}{{
		name: "prompt",
		change: func(r []ports.ChatRequest) ports.ChatRequest {
			r[0].Messages = []state.Message{{Role: "user", Content: "Implement: add Revert\nwith a test"}}
			return r[0]
		},
		want: `request 1 of step "implement" differs from the cassette ` + path + ` (interaction 1): messages[0] (user): the text differs: at byte 20, now "Implement: add Revert`,
	}, {
		name:   "model",
		change: func(r []ports.ChatRequest) ports.ChatRequest { r[0].Model = "m2"; return r[0] },
		want:   `model is "m2", was "m1"`,
	}, {
		name:   "tools",
		change: func(r []ports.ChatRequest) ports.ChatRequest { r[0].Tools = tools[:1]; return r[0] },
		want:   "the tools offered are [read_file], were [read_file, run_tests]",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			player, err := replay.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = player.Step("wf", "implement").Chat(t.Context(), tc.change(conversation()))
			if err == nil || !strings.Contains(err.Error(), tc.want) || fault.KindOf(err) != fault.Execution {
				t.Fatalf("err = %v, want a usage error containing %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), "--record "+path) {
				t.Errorf("err = %v, want it to say how to record again", err)
			}
		})
	}
}

func TestReplayToolResults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.yaml")
	record(t, path)
	reqs := conversation()
	t.Run("other text is fine", func(t *testing.T) {
		player, _ := replay.Open(path)
		p := player.Step("wf", "implement")
		if _, err := p.Chat(t.Context(), reqs[0]); err != nil {
			t.Fatal(err)
		}
		r := reqs[1]
		r.Messages = append([]state.Message(nil), r.Messages...)
		r.Messages[2].Content = "ok  example.com/a  0.004s"
		if _, err := p.Chat(t.Context(), r); err != nil {
			t.Errorf("tool output that changed between runs: %v", err)
		}
	})
	t.Run("a failure now is played on, and reported", func(t *testing.T) {
		player, _ := replay.Open(path)
		p := player.Step("wf", "implement")
		if _, err := p.Chat(t.Context(), reqs[0]); err != nil {
			t.Fatal(err)
		}
		r := reqs[1]
		r.Messages = append([]state.Message(nil), r.Messages...)
		r.Messages[2].IsError, r.Messages[2].Content = true, "Error: outcome unknown: the run stopped while this call was running"
		resp, err := p.Chat(t.Context(), r)
		if err != nil || !strings.Contains(resp.Divergence, `messages[2] (result of read_file call_1): the call failed now but succeeded when recorded: "Error: outcome unknown`) {
			t.Errorf("Chat = %+v, %v; want the recorded reply with the divergence named", resp, err)
		}
	})
	t.Run("a denial now is a mismatch", func(t *testing.T) {
		player, _ := replay.Open(path)
		p := player.Step("wf", "implement")
		if _, err := p.Chat(t.Context(), reqs[0]); err != nil {
			t.Fatal(err)
		}
		r := reqs[1]
		r.Messages = append([]state.Message(nil), r.Messages...)
		r.Messages[2].IsError, r.Messages[2].Content = true, "Denied: no terminal to ask for approval"
		_, err := p.Chat(t.Context(), r)
		if err == nil || !strings.Contains(err.Error(), `messages[2] (result of read_file call_1): the call failed now but succeeded when recorded: "Denied: no terminal`) {
			t.Errorf("err = %v, want the failed call named", err)
		}
	})
}

func TestReplayExhausted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.yaml")
	record(t, path)
	player, _ := replay.Open(path)
	p := player.Step("wf", "implement")
	for _, req := range conversation() {
		if _, err := p.Chat(t.Context(), req); err != nil {
			t.Fatal(err)
		}
	}
	_, err := p.Chat(t.Context(), conversation()[1])
	if err == nil || !strings.Contains(err.Error(), `step "implement" asked the model a 3rd time, but the cassette`) {
		t.Errorf("err = %v, want it to say the cassette holds no more turns", err)
	}
	if _, err := player.Step("wf", "other").Chat(t.Context(), conversation()[0]); err == nil ||
		!strings.Contains(err.Error(), "holds 0 model turns") {
		t.Errorf("unknown step: err = %v", err)
	}
}

func TestStepsHaveTheirOwnCursor(t *testing.T) {
	c := &replay.Cassette{Version: 1, Interactions: []replay.Interaction{
		{Workflow: "wf", Step: "a", Request: replay.Request{Messages: []state.Message{{Role: "user", Content: "A"}}}, Response: replay.Response{Content: "a1"}},
		{Workflow: "wf", Step: "b", Request: replay.Request{Messages: []state.Message{{Role: "user", Content: "B"}}}, Response: replay.Response{Content: "b1"}},
		{Step: "c", Request: replay.Request{Messages: []state.Message{{Role: "user", Content: "C"}}}, Response: replay.Response{Content: "c1"}},
	}}
	player := replay.NewPlayer("x.yaml", c)
	ask := func(step, content string) string {
		t.Helper()
		resp, err := player.Step("wf", step).Chat(t.Context(), ports.ChatRequest{Messages: []state.Message{{Role: "user", Content: content}}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Content
	}
	if got := ask("b", "B") + ask("a", "A") + ask("c", "C"); got != "b1a1c1" {
		t.Errorf("replies = %q, want b1a1c1 (each step in its own order; c from any workflow)", got)
	}
	if u := player.Unused(); len(u) != 0 {
		t.Errorf("Unused = %v", u)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ name, content, want string }{
		{"missing", "", "does not exist"},
		{"unknown key", "version: 1\ninteractions:\n  - step: a\n    reqest: {}\n", "reqest"},
		{"version", "version: 3\ninteractions: []\n", "version 3"},
		{"no step", "version: 1\ninteractions:\n  - request: {messages: []}\n", "interaction 1 names no step"},
		{"prior in version 1", "version: 1\ninteractions:\n  - {step: a, request: {messages: [{role: user}]}}\n  - {step: a, request: {prior: 1, messages: []}}\n",
			"interaction 2: prior 1: want none in version 1"},
		{"prior of nothing", "version: 2\ninteractions:\n  - {step: a, request: {prior: 1, messages: []}}\n",
			`interaction 1: prior 1: the previous request of step "a" has 0 messages`},
		{"prior beyond", "version: 2\ninteractions:\n  - {step: a, request: {messages: [{role: user}]}}\n  - {step: a, request: {prior: 2, messages: []}}\n",
			`interaction 2: prior 2: the previous request of step "a" has 1 messages`},
		{"prior of another step", "version: 2\ninteractions:\n  - {step: a, request: {messages: [{role: user}]}}\n  - {step: b, request: {prior: 1, messages: []}}\n",
			`interaction 2: prior 1: the previous request of step "b" has 0 messages`},
		{"prior of another workflow", "version: 2\ninteractions:\n  - {workflow: w, step: a, request: {messages: [{role: user}]}}\n  - {step: a, request: {prior: 1, messages: []}}\n",
			`interaction 2: prior 1: the previous request of step "a" has 0 messages`},
		{"negative prior", "version: 2\ninteractions:\n  - {step: a, request: {prior: -1, messages: []}}\n", "interaction 1: prior -1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".yaml")
			if tc.content != "" {
				if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := replay.Load(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) || fault.KindOf(err) != fault.Usage {
				t.Errorf("Load = %v, want a usage error containing %q", err, tc.want)
			}
		})
	}
}

func TestEncodeRoundTrips(t *testing.T) {
	awkward := []string{"", " leading space\nsecond", "tab\tand\r\nCRLF", "\n\n", "- item\n: colon", ".inf", "? x", "trailing spaces   \nx  ", "#hash\n'single'"}
	c := &replay.Cassette{Version: 1}
	for i, s := range awkward {
		c.Interactions = append(c.Interactions, replay.Interaction{Step: "s", Request: replay.Request{
			System: s, Messages: []state.Message{{Role: "user", Content: s}}}, Response: replay.Response{Content: s, ToolCalls: []state.CallRef{{ID: "x", Name: "t", Arguments: `{"i":` + string(rune('0'+i)) + `}`}}}})
	}
	data, err := replay.Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := replay.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range awkward {
		in := back.Interactions[i]
		if in.Request.System != s || in.Request.Messages[0].Content != s || in.Response.Content != s {
			t.Errorf("%q came back as %q / %q / %q", s, in.Request.System, in.Request.Messages[0].Content, in.Response.Content)
		}
	}
}

// A cassette saved with a byte order mark reads as without one, errors at the same positions;
// a UTF-16 one is refused with what to do.
func TestLoadByteOrderMark(t *testing.T) {
	bomtest.TestFile(t, "c.yaml", []bomtest.Case{
		{Name: "valid", Doc: "version: 1\ninteractions:\n  - step: a\n    request: {messages: [{role: user, content: hi}]}\n    response: {content: hello}\n"},
		{Name: "unknown key", Doc: "version: 1\ninteractions:\n  - step: a\n    reqest: {}\n", Err: "[4:5] unknown field \"reqest\""},
	}, func(path string) (string, error) {
		c, err := replay.Load(path)
		if c == nil {
			return "", err
		}
		out, _ := replay.Encode(c)
		return string(out), err
	})
}

// TestRecorderEncodesTurnByTurn: the recorder encodes each turn once, as it comes; the file it
// leaves after each turn loads as the turns so far and is byte for byte what encoding the
// whole cassette gives, awkward text included. A turn that YAML cannot carry exactly turns the
// whole cassette to JSON, which still loads.
func TestRecorderEncodesTurnByTurn(t *testing.T) {
	awkward := []string{"plain", "", " leading space\nsecond", "tab\tand\r\nCRLF", "\n\n", "- item\n: colon", ".inf",
		"? x", "trailing spaces   \nx  ", "#hash\n'single'", "  indented\n    more\n\nafter a blank line\n"}
	path := filepath.Join(t.TempDir(), "c.yaml")
	rec := replay.NewRecorder(path)
	var msgs []state.Message
	for i, s := range awkward {
		msgs = append(msgs, state.Message{Role: "user", Content: s})
		p := rec.Wrap("wf", "step", portstest.NewScriptedProvider(portstest.Text(s)))
		if _, err := p.Chat(t.Context(), ports.ChatRequest{Model: "m", System: s, Messages: msgs}); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		back, err := replay.Load(path)
		if err != nil {
			t.Fatalf("after turn %d: %v\n%s", i, err, data)
		}
		if len(back.Interactions) != i+1 || back.Interactions[i].Response.Content != s || back.Interactions[i].Request.System != s {
			t.Fatalf("after turn %d the cassette holds %d turns, the last %+v", i, len(back.Interactions), back.Interactions[i])
		}
		whole, err := replay.Encode(back)
		if err != nil {
			t.Fatal(err)
		}
		if string(whole) != string(data) {
			t.Fatalf("after turn %d the file differs from the whole cassette's encoding:\n%s", i, cmp.Diff(string(whole), string(data)))
		}
	}

	// Text YAML cannot carry exactly (a lone carriage return at the end of a block, say): the
	// encoder says so and the cassette is JSON from then on, every turn still there.
	odd := "x\r"
	p := rec.Wrap("wf", "step", portstest.NewScriptedProvider(portstest.Text(odd)))
	if _, err := p.Chat(t.Context(), ports.ChatRequest{Model: "m", Messages: []state.Message{{Role: "user", Content: odd}}}); err != nil {
		t.Fatal(err)
	}
	back, err := replay.Load(path)
	if err != nil || len(back.Interactions) != len(awkward)+1 || back.Interactions[len(awkward)].Response.Content != odd {
		t.Fatalf("after an odd turn: %v, %+v", err, back)
	}
	if data, _ := os.ReadFile(path); !strings.HasPrefix(string(data), "{") {
		t.Errorf("after an odd turn the cassette is not JSON:\n%.200s", data)
	}
}

// TestCassetteHoldsEachMessageOnce: a step's requests are written by what each adds to the
// previous one, so a cassette grows with the conversation, not with its square, and loads as
// the whole requests that were sent: conversations that grow, one a context strategy cut
// short, steps interleaved, and one step of two workflows.
func TestCassetteHoldsEachMessageOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	rec := replay.NewRecorder(path)
	type sent struct {
		workflow, step string
		msgs           []state.Message
	}
	var all []sent
	ask := func(workflow, step string, msgs []state.Message) {
		t.Helper()
		p := rec.Wrap(workflow, step, portstest.NewScriptedProvider(portstest.Text("ok")))
		if _, err := p.Chat(t.Context(), ports.ChatRequest{Model: "m", Messages: msgs}); err != nil {
			t.Fatal(err)
		}
		all = append(all, sent{workflow, step, slices.Clone(msgs)})
	}
	const turns = 100
	page := strings.Repeat("a line of a tool's output\n", 40) // about 1 KB
	var a, b []state.Message
	for i := range turns {
		a = append(a, state.Message{Role: "assistant", ToolCalls: []state.CallRef{{ID: fmt.Sprint(i), Name: "t", Arguments: "{}"}}},
			state.Message{Role: "tool", ToolCallID: fmt.Sprint(i), Content: fmt.Sprintf("%d\n%s", i, page)})
		ask("wf", "a", a)
		if i%10 == 0 {
			b = append(b, state.Message{Role: "user", Content: fmt.Sprint("b", i)})
			ask("other", "a", b)
		}
		if i == 50 { // the context strategy keeps the first message and the last two
			a = append(a[:1:1], a[len(a)-2:]...)
			ask("wf", "a", a)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if limit := 3 * turns * len(page); len(data) > limit {
		t.Errorf("the cassette of %d turns of 1 KB takes %d KB; want at most %d KB", turns, len(data)>>10, limit>>10)
	}
	c, err := replay.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Interactions) != len(all) {
		t.Fatalf("%d interactions, want %d", len(c.Interactions), len(all))
	}
	for i, in := range c.Interactions {
		want := all[i]
		if in.Workflow != want.workflow || in.Step != want.step || in.Request.Prior != 0 {
			t.Fatalf("interaction %d is %s/%s prior %d, want %s/%s prior 0", i+1, in.Workflow, in.Step, in.Request.Prior, want.workflow, want.step)
		}
		if d := cmp.Diff(want.msgs, in.Request.Messages, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("interaction %d: messages (-sent +loaded):\n%s", i+1, d)
		}
	}
	if again, err := replay.Encode(c); err != nil || string(again) != string(data) {
		t.Errorf("Encode(Load(file)) is not the file: %v", err)
	}
}

// TestLoadReadsVersion1: a cassette of version 1, whose requests hold their whole
// conversation, loads as the same interactions as version 2 writes them.
func TestLoadReadsVersion1(t *testing.T) {
	c := &replay.Cassette{Version: 1}
	for i, req := range conversation() {
		c.Interactions = append(c.Interactions, replay.Interaction{Workflow: "wf", Step: "s",
			Request: replay.Request{Model: req.Model, System: req.System, Messages: req.Messages}, Response: replay.Response{Content: fmt.Sprint(i)}})
	}
	v1, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "v1.yaml")
	if err := os.WriteFile(path, v1, 0o644); err != nil {
		t.Fatal(err)
	}
	got1, err := replay.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := replay.Encode(got1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(v2), "version: 2\n") || !strings.Contains(string(v2), "prior: 1") {
		t.Errorf("version 1 encoded again is not version 2 with prior messages:\n%s", v2)
	}
	if err := os.WriteFile(path, v2, 0o644); err != nil {
		t.Fatal(err)
	}
	got2, err := replay.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(c.Interactions, got1.Interactions, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("version 1 loaded (-written +loaded):\n%s", d)
	}
	if d := cmp.Diff(got1.Interactions, got2.Interactions, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("version 2 loads otherwise than version 1 (-v1 +v2):\n%s", d)
	}
}

// TestLoadRefusesAConversationBomb: a cassette of 100 KB whose requests each cut a
// 2,000-message conversation by one message would put back 4 million messages, half a GB; it
// is refused, and a conversation cut short as a context strategy cuts it still loads.
func TestLoadRefusesAConversationBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("version: 2\ninteractions:\n  - step: a\n    request:\n      messages:\n")
	for range 2_000 {
		b.WriteString("        - {role: user}\n")
	}
	for range 2_000 {
		b.WriteString("  - {step: a, request: {prior: 1999, messages: [{role: tool}]}}\n")
	}
	path := filepath.Join(t.TempDir(), "bomb.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := replay.Load(path)
	if err == nil || fault.KindOf(err) != fault.Usage || !strings.Contains(err.Error(), "would copy more than") {
		t.Fatalf("Load(bomb) = %v, want a usage error about the copies", err)
	}

	b.Reset()
	b.WriteString("version: 2\ninteractions:\n")
	for i := range 200 { // each turn keeps the first message and the last, and adds one
		if i == 0 {
			b.WriteString("  - {step: a, request: {messages: [{role: user, content: task}, {role: user, content: m0}]}}\n")
			continue
		}
		fmt.Fprintf(&b, "  - {step: a, request: {prior: 1, messages: [{role: user, content: m%d}, {role: user, content: m%d}]}}\n", i-1, i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := replay.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Interactions[199].Request.Messages; len(got) != 3 || got[0].Content != "task" || got[2].Content != "m199" {
		t.Errorf("a sliding window loads as %+v", got)
	}
}
