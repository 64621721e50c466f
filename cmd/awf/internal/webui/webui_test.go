package webui

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/statestore"
)

const testToken = "0123456789abcdef0123456789abcdef"

// fixture is a viewer over a real state store in a temporary directory.
type fixture struct {
	store *statestore.Store
	srv   *Server
	h     http.Handler
	dir   string
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	dir := t.TempDir()
	store, err := statestore.New(filepath.Join(dir, "runs"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Runs: store, StateDir: store.Dir(), AuditLog: filepath.Join(dir, "audit.jsonl"), Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{store: store, srv: srv, h: srv.Handler(), dir: dir}
}

func (f *fixture) save(t testing.TB, run *state.RunState) {
	t.Helper()
	if err := f.store.Save(context.Background(), run); err != nil {
		t.Fatal(err)
	}
}

// get requests path with the cookie and returns the status and body.
func (f *fixture) get(t testing.TB, path string) (int, string) {
	t.Helper()
	req := httptest.NewRequest("GET", "http://127.0.0.1:8123"+path, nil)
	req.AddCookie(&http.Cookie{Name: "awf_ui_8123", Value: testToken})
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

var t0 = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

func at(sec float64) *time.Time {
	t := t0.Add(time.Duration(sec * float64(time.Second)))
	return &t
}

// sampleRun has a shell step, a parallel step that ended (children found from its output),
// and a step with a denied call.
func sampleRun(id string) *state.RunState {
	exit := 0
	return &state.RunState{
		ID: id, Workflow: "sample", Status: state.Completed, StartedAt: t0, UpdatedAt: *at(10), FinishedAt: at(10),
		Order: []string{"build", "fan", "a", "b", "agent"},
		States: map[string]*state.StepState{
			"build": {Status: state.Completed, StartedAt: at(0), FinishedAt: at(1), Command: [][]string{{"echo", "a b"}}, ExitCode: &exit, Output: "built"},
			"fan":   {Status: state.Completed, StartedAt: at(1), FinishedAt: at(3), Output: `{"a":"x","b":"y"}`},
			"a":     {Status: state.Completed, StartedAt: at(1.1), FinishedAt: at(2.9), Output: "x", Attempts: 3},
			"b":     {Status: state.Completed, StartedAt: at(1.2), FinishedAt: at(2), Output: "y"},
			"agent": {Status: state.Completed, StartedAt: at(3), FinishedAt: at(10), ToolCalls: []state.ToolCallRecord{
				{ID: "c1", Tool: "read_file", Arguments: map[string]any{"path": "x"}, Result: &state.ToolCallResult{Success: true, Output: "ok"}},
				{ID: "c2", Tool: "shell", Arguments: map[string]any{"command": "rm -rf /"}, Result: &state.ToolCallResult{Denied: true, Error: "denied", Layer: "L1", Rule: "sandbox.commands"}},
			}, Turns: []state.Turn{{Text: "Let me look.", Calls: []string{"c1", "c2"}, FinishReason: "tool_calls"}, {Text: "Done.", FinishReason: "stop"}}},
		},
	}
}

func TestTimelineNestsParallelChildren(t *testing.T) {
	run := sampleRun("r1")
	nodes := timeline(run, t0, nil, parentsOf(run, nil))
	var got []string
	for _, n := range nodes {
		s := n.Name
		for _, k := range n.Kids {
			s += "[" + k.Name + "]"
		}
		got = append(got, s)
	}
	if strings.Join(got, " ") != "build fan[a][b] agent" {
		t.Errorf("timeline = %q, want build fan[a][b] agent", got)
	}
	if n := nodes[0]; n.BarX != 0 || n.BarW != 100 {
		t.Errorf("build's bar = (%d, %d), want (0, 100): the first tenth of the run", n.BarX, n.BarW)
	}
	agent := nodes[2]
	if len(agent.Turns) != 2 || len(agent.Turns[0].Calls) != 2 || len(agent.Calls) != 0 || agent.Denied != 1 {
		t.Errorf("agent step: %d turns, first with %d calls, %d calls outside turns, %d denied; want 2, 2, 0, 1",
			len(agent.Turns), len(agent.Turns[0].Calls), len(agent.Calls), agent.Denied)
	}
}

func TestPageOfKeepsCharacters(t *testing.T) {
	s := strings.Repeat("é", PageBytes) // 2 bytes each: pages end inside characters
	var joined strings.Builder
	_, pages := pageOf(s, 1)
	for n := 1; n <= pages; n++ {
		text, _ := pageOf(s, n)
		if !strings.HasPrefix(text, "é") && text != "" {
			t.Fatalf("page %d starts inside a character", n)
		}
		joined.WriteString(text)
	}
	if pages != 2 || joined.String() != s {
		t.Errorf("%d pages that join to %d bytes, want 2 pages that join to the %d bytes", pages, joined.Len(), len(s))
	}
	if v := inlineText(s, "/more"); v.More != len(s)-len(v.Text) || v.Link != "/more" || len(v.Text) > InlineBytes {
		t.Errorf("inlineText: %d bytes shown, More %d, Link %q", len(v.Text), v.More, v.Link)
	}
}

func TestRunsListNestsAndFilters(t *testing.T) {
	f := newFixture(t)
	f.save(t, sampleRun("parent"))
	child := &state.RunState{ID: "child", Workflow: "sub", Parent: "parent", Status: state.Failed, Error: "boom", StartedAt: *at(5), UpdatedAt: *at(6), FinishedAt: at(6), States: map[string]*state.StepState{}}
	f.save(t, child)
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{"parent:0", "child:1"}},
		{"?status=failed", []string{"child:0"}},
		{"?decision=deny", []string{"parent:0"}},
		{"?tool=shell", []string{"parent:0"}},
		{"?q=BOOM", []string{"child:0"}},
		{"?workflow=nothing", nil},
	} {
		req := httptest.NewRequest("GET", "/"+tc.query, nil)
		v, err := f.srv.listRuns(context.Background(), filterOf(req))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range v.Rows {
			got = append(got, fmt.Sprintf("%s:%d", r.ID, r.Depth))
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("runs %s = %q, want %q", tc.query, got, tc.want)
		}
	}
	if _, body := f.get(t, "/?status=failed"); !strings.Contains(body, `sub-run of <a href="/runs/parent">parent</a>`) {
		t.Errorf("a sub-run listed without its parent does not name it:\n%s", body)
	}
	code, body := f.get(t, "/")
	if code != 200 || !strings.Contains(body, `<td class="num deny">1</td>`) {
		t.Errorf("runs page: %d, want the parent's one denial highlighted:\n%s", code, body)
	}
}

// TestRunPageEscapes renders output holding markup, a script and terminal escapes: the page
// holds them as text, escaped, with the escapes visible.
func TestRunPageEscapes(t *testing.T) {
	f := newFixture(t)
	run := sampleRun("xss")
	run.States["build"].Output = "<script>alert(1)</script>\x1b]0;title\x07\u202e<b>"
	run.States["agent"].ToolCalls[0].Arguments = map[string]any{"path": `"><img src=x onerror=alert(1)>`}
	f.save(t, run)
	code, body := f.get(t, "/runs/xss")
	if code != 200 {
		t.Fatalf("run page: %d\n%s", code, body)
	}
	for _, bad := range []string{"<script>alert", "<img src", "<b>", "\x1b", "\u202e"} {
		if strings.Contains(body, bad) {
			t.Errorf("run page holds %q as it was", bad)
		}
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;\\x1b]0;title\\a\\u202e&lt;b&gt;", "&lt;img src=x onerror=alert(1)&gt;"} {
		if !strings.Contains(body, want) {
			i := strings.Index(body, "alert(1)&lt;/script")
			t.Errorf("run page does not show %q: %q", want, body[max(i-40, 0):min(i+120, len(body))])
		}
	}
}

func TestOutputPages(t *testing.T) {
	f := newFixture(t)
	run := sampleRun("big")
	run.States["build"].Output = strings.Repeat("x", PageBytes) + "TAIL"
	run.States["agent"].ToolCalls[0].Arguments = map[string]any{"content": strings.Repeat("y", InlineBytes) + "END"}
	f.save(t, run)
	_, body := f.get(t, "/runs/big")
	if !strings.Contains(body, "/runs/big/output?step=build") {
		t.Fatalf("run page does not link to the rest of a large output")
	}
	code, body := f.get(t, "/runs/big/output?step=build&page=2")
	if code != 200 || !strings.Contains(body, "page 2 of 2") || !strings.Contains(body, ">TAIL</pre>") {
		t.Errorf("page 2: %d\n%s", code, body)
	}
	if _, body := f.get(t, "/runs/big"); !strings.Contains(body, "/runs/big/output?call=c1&amp;part=args&amp;step=agent") {
		t.Errorf("run page does not link to the rest of large arguments")
	}
	if code, body := f.get(t, "/runs/big/output?call=c1&part=args&step=agent"); code != 200 || !strings.Contains(body, "Arguments of agent") || !strings.Contains(body, `yEND&#34;`) {
		t.Errorf("arguments page: %d\n%s", code, body)
	}
	for _, path := range []string{"/runs/big/output?step=nope", "/runs/big/output?step=agent&call=nope", "/runs/nosuch", "/runs/..%2f..%2fetc"} {
		if code, _ := f.get(t, path); code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", path, code)
		}
	}
}

// TestCutOffRun shows a run whose state says running but that no process owns as cut off,
// and not live.
func TestCutOffRun(t *testing.T) {
	f := newFixture(t)
	run := sampleRun("gone")
	run.Status, run.FinishedAt = state.Running, nil
	f.save(t, run)
	for _, path := range []string{"/", "/runs/gone"} {
		if _, body := f.get(t, path); !strings.Contains(body, "running (cut off)") {
			t.Errorf("%s does not say the run was cut off:\n%s", path, body)
		}
	}
	if _, body := f.get(t, "/runs/gone"); !strings.Contains(body, `data-live="false"`) {
		t.Errorf("a cut-off run's page follows live updates")
	}
}

// TestRunWithoutNewerFields shows a run as an earlier version wrote it: no turns, times,
// agent record or order of every step.
func TestRunWithoutNewerFields(t *testing.T) {
	f := newFixture(t)
	old := "id: old\nworkflow: legacy\nstatus: completed\nstarted_at: 2025-01-01T00:00:00Z\nupdated_at: 2025-01-01T00:00:01Z\n" +
		"states:\n  s:\n    status: completed\n    output: hi\n    tool_calls:\n      - id: c\n        tool: read_file\n        arguments: {path: a}\n        result: {success: true, output: x, duration_ms: 1}\n" +
		"    conversation:\n      turns: 1\n      messages:\n        - {role: user, content: go}\n        - {role: assistant, content: said before turns were recorded}\norder: [s]\n"
	if err := os.MkdirAll(f.store.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.store.Path("old"), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	code, body := f.get(t, "/runs/old")
	if code != 200 || !strings.Contains(body, "said before turns were recorded") || !strings.Contains(body, `id="call-s-c"`) {
		t.Errorf("old run: %d\n%s", code, body)
	}
}

func TestGuard(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name, method, target, host, origin, cookie string
		want                                       int
	}{
		{"ok", "GET", "/", "127.0.0.1:8123", "", testToken, 200},
		{"head", "HEAD", "/", "[::1]:8123", "", testToken, 200},
		{"token sets the cookie", "GET", "/audit?run=x&token=" + testToken, "localhost:8123", "", "", 303},
		{"no token", "GET", "/", "127.0.0.1:8123", "", "", 403},
		{"static needs it too", "GET", "/static/app.js", "127.0.0.1:8123", "", "", 403},
		{"rebound name", "GET", "/", "evil.example:8123", "", testToken, 403},
		{"other origin", "GET", "/", "127.0.0.1:8123", "http://evil.example", testToken, 403},
		{"other port", "GET", "/", "127.0.0.1:8123", "http://127.0.0.1:9999", testToken, 403},
		{"delete", "DELETE", "/", "127.0.0.1:8123", "", testToken, 405},
	} {
		req := httptest.NewRequest(tc.method, "http://"+tc.host+tc.target, nil)
		req.Host = tc.host
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		if tc.cookie != "" {
			req.AddCookie(&http.Cookie{Name: "awf_ui_8123", Value: tc.cookie})
		}
		rec := httptest.NewRecorder()
		f.h.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("%s: %d, want %d (%s)", tc.name, rec.Code, tc.want, strings.TrimSpace(rec.Body.String()))
		}
		if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("%s: Content-Security-Policy %q", tc.name, csp)
		}
		if tc.want == 303 {
			if loc := rec.Header().Get("Location"); loc != "/audit?run=x" {
				t.Errorf("%s: redirects to %q, want /audit?run=x", tc.name, loc)
			}
			c := rec.Result().Cookies()
			if len(c) != 1 || c[0].Name != "awf_ui_8123" || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode {
				t.Errorf("%s: cookies %v", tc.name, c)
			}
		}
	}
}

// bigRun saves a run whose agent step made 2,000 tool calls, each in a turn of its own, with
// an output of about 1 KiB.
func bigRun(b *testing.B, f *fixture) {
	run := sampleRun("big")
	st := run.States["agent"]
	st.ToolCalls, st.Turns = nil, nil
	for i := range 2000 {
		id := fmt.Sprintf("c%d", i)
		st.ToolCalls = append(st.ToolCalls, state.ToolCallRecord{ID: id, Tool: "read_file", Arguments: map[string]any{"path": fmt.Sprintf("src/file%d.go", i)},
			Result: &state.ToolCallResult{Success: true, Output: strings.Repeat("package main // some source\n", 40), DurationMs: 2, Approval: "auto"}})
		st.Turns = append(st.Turns, state.Turn{Text: "Reading the next file.", Calls: []string{id}, FinishReason: "tool_calls", Usage: &state.Tokens{Input: 1000, Output: 20, Total: 1020}})
	}
	f.save(b, run)
}

// wantBigPage fails b unless the page came whole.
func wantBigPage(b *testing.B, code int, body string) {
	if code != 200 || !strings.Contains(body, `id="call-agent-c1999"`) {
		b.Fatalf("run page: %d, %d bytes", code, len(body))
	}
}

// BenchmarkRunPage2000Calls opens the page of a run of 2,000 tool calls the first time: the
// state store loads the run, then the page is rendered (issue 17: under a second; see ns/op).
func BenchmarkRunPage2000Calls(b *testing.B) {
	f := newFixture(b)
	bigRun(b, f)
	for b.Loop() {
		f.srv.cache = &runCache{} // first open: nothing cached
		code, body := f.get(b, "/runs/big")
		wantBigPage(b, code, body)
	}
}

// BenchmarkRunPage2000CallsAgain opens it again, unchanged: the run comes from the cache and
// only the page is rendered (as when a reviewer comes back to it, or a live run is redrawn).
func BenchmarkRunPage2000CallsAgain(b *testing.B) {
	f := newFixture(b)
	bigRun(b, f)
	for b.Loop() {
		code, body := f.get(b, "/runs/big")
		wantBigPage(b, code, body)
	}
}

// FuzzRunPageShowsTextAsText puts any text where a run records text that came from outside
// (a step's output and error, a model's reply, a call's arguments and output, the workflow's
// name) and checks that the page's markup does not change: the number of '<' in the page is
// the same as for plain text, so nothing in the text became a tag.
func FuzzRunPageShowsTextAsText(f *testing.F) {
	for _, seed := range []string{"<script>alert(1)</script>", "\"><img src=x onerror=alert(1)>", "\x1b]8;;http://x\x07link\x1b]8;;\x07", "</pre><b>", "\xff\xfe<", "&lt;"} {
		f.Add(seed)
	}
	fx := newFixture(f)
	pageFor := func(text string) string {
		run := sampleRun("fuzz")
		run.Workflow = text
		run.States["build"].Output, run.States["build"].Error = text, text
		agent := run.States["agent"]
		agent.Turns[0].Text = text
		agent.ToolCalls[0].Arguments = map[string]any{"path": text}
		agent.ToolCalls[0].Result.Output = text
		var b strings.Builder
		if err := fx.srv.pages["run"].ExecuteTemplate(&b, "layout.html", page{Title: text, Data: fx.srv.buildRun(context.Background(), run)}); err != nil {
			f.Fatal(err)
		}
		return b.String()
	}
	want := strings.Count(pageFor("plain"), "<")
	f.Fuzz(func(t *testing.T, text string) {
		// A longer output adds a link to the rest; an empty one leaves parts out. The call's
		// arguments are shown as JSON, in which a byte that is not UTF-8 takes six (\ufffd).
		if len(text) > InlineBytes || len(prettyJSON(map[string]any{"path": text})) > InlineBytes || text == "" {
			t.Skip()
		}
		if got := strings.Count(pageFor(text), "<"); got != want {
			t.Errorf("page for %q has %d '<', want %d: the text changed the markup", text, got, want)
		}
	})
}

// BenchmarkRunsList200Runs shows the runs list of 200 runs the first time (each run is loaded
// once for its calls and denials) and again (from the cache).
func BenchmarkRunsList200Runs(b *testing.B) {
	f := newFixture(b)
	for i := range 200 {
		f.save(b, sampleRun(fmt.Sprintf("run-%03d", i)))
	}
	b.Run("first", func(b *testing.B) {
		for b.Loop() {
			f.srv.stats = newStatsCache()
			if code, body := f.get(b, "/"); code != 200 || strings.Count(body, `<tr class="run`) != 200 {
				b.Fatalf("runs page: %d", code)
			}
		}
	})
	b.Run("again", func(b *testing.B) {
		for b.Loop() {
			if code, _ := f.get(b, "/"); code != 200 {
				b.Fatalf("runs page: %d", code)
			}
		}
	})
}

// TestAuditPageShowsTheNewest: the audit page shows the newest AuditLimit records, newest
// first, and counts the older ones it leaves out, reading the log without holding it.
func TestAuditPageShowsTheNewest(t *testing.T) {
	f := newFixture(t)
	var log strings.Builder
	for i := range AuditLimit + 5 {
		fmt.Fprintf(&log, `{"time":"2026-11-26T10:00:00Z","run_id":"r1","step":"s","call_id":"c%05d","tool":"shell","meta":"call %05d","outcome":"ok","duration_ms":1,"output_size":0}`+"\n", i, i)
	}
	if err := os.WriteFile(f.srv.cfg.AuditLog, []byte(log.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	code, body := f.get(t, "/audit")
	if code != 200 {
		t.Fatalf("GET /audit: %d\n%s", code, body)
	}
	if want := fmt.Sprintf("%d records, newest first (5 older ones not shown", AuditLimit); !strings.Contains(body, want) {
		t.Errorf("page does not say %q", want)
	}
	newest, oldest := fmt.Sprintf("call %05d", AuditLimit+4), "call 00005"
	if i, j := strings.Index(body, newest), strings.Index(body, oldest); i < 0 || j < 0 || i > j {
		t.Errorf("want %q first and %q last: at %d and %d", newest, oldest, i, j)
	}
	if strings.Contains(body, "call 00004") {
		t.Errorf("page shows a record older than the newest %d", AuditLimit)
	}
}
