package main

// End-to-end tests of `awf ui` (issue 17) in a real headless Chromium driven by chromedp:
// runs made by the awf binary (an agent step replayed from a cassette with a denied call and a
// file change, a parallel group, a sub-workflow; a run followed live), the pages the browser
// renders from them, and the requests the server must refuse. Screenshots of every page go to
// $AWF_ARTIFACTS (default: a new temporary directory, logged).

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium returns the path of a Chromium or Chrome binary, skipping the test when there is
// none, or failing it when AWF_INTEGRATION=require (CI installs Debian's chromium).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no chromium on PATH: the browser tests of awf ui need it (Debian: apt-get install chromium)"
	if os.Getenv("AWF_INTEGRATION") == "require" {
		t.Fatal(msg + "; AWF_INTEGRATION=require")
	}
	t.Skip(msg)
	return ""
}

// browser starts a headless Chromium for the test and returns a context of one tab in it.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, // CI runs as root, where Chromium's own sandbox cannot start
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-gpu", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// artifacts is where screenshots go: $AWF_ARTIFACTS, or a new temporary directory that
// outlives the test so that a person can look at them.
func artifacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("AWF_ARTIFACTS")
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "awf-ui-artifacts-"); err != nil {
			t.Fatal(err)
		}
	}
	dir = filepath.Join(dir, t.Name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

// shoot saves a screenshot of the whole page as dir/name.png.
func shoot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// uiServer is a running `awf ui`: its base URL and the URL with the token it printed.
type uiServer struct {
	base, url, token string
	cmd              *exec.Cmd
}

// startUI starts `awf ui` in e's directory with extra arguments and returns what it printed.
func startUI(t *testing.T, e *env, args ...string) uiServer {
	t.Helper()
	cmd := e.cmd(context.Background(), append([]string{"ui"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
	}()
	select {
	case u, ok := <-line:
		if !ok {
			t.Fatalf("awf ui printed no URL; stderr:\n%s", stderr.String())
		}
		parsed, err := url.Parse(u)
		if err != nil || parsed.Query().Get("token") == "" {
			t.Fatalf("awf ui printed %q, want a URL with a token", u)
		}
		return uiServer{base: "http://" + parsed.Host, url: u, token: parsed.Query().Get("token"), cmd: cmd}
	case <-time.After(time.Minute):
		t.Fatal("awf ui printed no URL in a minute")
	}
	return uiServer{}
}

// eval evaluates a JavaScript expression in the page, failing the test on error.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// visit opens u and waits for it to load.
func visit(t *testing.T, ctx context.Context, u string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(u)); err != nil {
		t.Fatalf("open %s: %v", u, err)
	}
}

// waitPage waits until the JavaScript condition holds (a minute at most: slow CI machines).
// It asks again after errors: a page being replaced by the next one has no context to ask.
func waitPage(t *testing.T, ctx context.Context, cond string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+cond+")"))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
			t.Fatalf("waiting for %s: %v\npage:\n%s", cond, err, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// treeDigest lists every file under dir with its mode, size, time and SHA-256, to tell whether
// anything wrote there.
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		sum := ""
		if d.Type().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum = fmt.Sprintf("%x", sha256.Sum256(data))
		}
		fmt.Fprintf(&b, "%s %v %d %d %s\n", strings.TrimPrefix(p, dir), fi.Mode(), fi.Size(), fi.ModTime().UnixNano(), sum)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// reviewEnv runs testdata/e2e/ui/review.yaml (agent step replayed) and returns the env and
// the run's id.
func reviewEnv(t *testing.T) (*env, string) {
	t.Helper()
	e := newEnv(t)
	for _, f := range []string{"review.yaml", "child.yaml", "review.cassette.yaml"} {
		e.copy(filepath.Join("..", "..", "testdata", "e2e", "ui", f), f)
	}
	e.write("notes/a.txt", "alpha\n")
	e.write("secret.txt", "not for the agent\n")
	res := e.runJSON(0, "run", "review.yaml", "--replay", "review.cassette.yaml", "--non-interactive")
	return e, res.RunID
}

// TestUIBrowserShowsRuns opens the runs list, filters it, opens a run with every kind of step
// and checks what the browser shows: the timeline with the parallel group side by side, the
// sub-workflow, the agent's conversation with each call's decision, the denials, the diff, and
// hostile output as text. Then the audit page, its filter and its link to a call.
func TestUIBrowserShowsRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	e, runID := reviewEnv(t)
	ctx := browser(t)
	shots := artifacts(t)
	before := treeDigest(t, filepath.Join(e.dir, ".awf"))
	srv := startUI(t, e)
	defer func() { // awf ui never writes: the state and the audit log are as they were
		if after := treeDigest(t, filepath.Join(e.dir, ".awf")); after != before {
			t.Errorf(".awf changed while awf ui showed it:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	}()

	// The token URL sets the cookie and redirects to the runs list.
	visit(t, ctx, srv.url)
	if loc := eval[string](t, ctx, `location.href`); loc != srv.base+"/" {
		t.Errorf("after the token URL the browser is at %s, want %s/ (token out of the address bar)", loc, srv.base)
	}
	rows := eval[[]string](t, ctx, `[...document.querySelectorAll("tr.run")].map(r => r.className + " | " + r.innerText.replace(/\s+/g, " "))`)
	if len(rows) != 2 {
		t.Fatalf("runs list rows = %q, want the run and its sub-run", rows)
	}
	if !strings.Contains(rows[0], "ui-review") || !strings.Contains(rows[0], "completed") || !strings.Contains(rows[0], " 5 2") {
		t.Errorf("first row = %q, want ui-review, completed, 5 calls, 2 denials", rows[0])
	}
	if !strings.Contains(rows[1], "d1") || !strings.Contains(rows[1], "sub-run") || !strings.Contains(rows[1], "child") {
		t.Errorf("second row = %q, want the child run nested under its parent", rows[1])
	}
	shoot(t, ctx, shots, "runs")

	for _, tc := range []struct {
		query string
		want  int
	}{
		{"decision=deny", 1}, {"tool=write_file", 1}, {"status=failed", 0}, {"workflow=child", 1}, {"q=UI-REV", 1}, {"q=nothing-like-it", 0},
	} {
		visit(t, ctx, srv.base+"/?"+tc.query)
		if n := eval[int](t, ctx, `document.querySelectorAll("tr.run").length`); n != tc.want {
			t.Errorf("runs list ?%s shows %d runs, want %d", tc.query, n, tc.want)
		}
	}

	// A filter applies as soon as its choice changes.
	visit(t, ctx, srv.base+"/")
	eval[bool](t, ctx, `(() => { const s = document.querySelector("select[name=decision]"); s.value = "deny"; return s.dispatchEvent(new Event("change", {bubbles: true})); })()`)
	waitPage(t, ctx, `location.search === "?status=&workflow=&tool=&decision=deny&q=" && document.querySelectorAll("tr.run").length === 1`)

	visit(t, ctx, srv.base+"/")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`tr.run[data-run="`+runID+`"] a`))); err != nil {
		t.Fatal(err)
	}
	waitPage(t, ctx, `document.getElementById("run-status") !== null && document.readyState === "complete"`)
	steps := eval[[]string](t, ctx, `[...document.querySelectorAll(".timeline > section.step")].map(s => s.dataset.step)`)
	if strings.Join(steps, " ") != "hostile long checks child count review" {
		t.Errorf("timeline = %q, want hostile long checks child count review", steps)
	}
	// The parallel group's children sit side by side inside it: one row, two columns.
	kids := eval[[]float64](t, ctx, `(() => { const a = document.querySelector("#step-checks .group > #step-vet").getBoundingClientRect(), b = document.querySelector("#step-checks .group > #step-lint").getBoundingClientRect(); return [a.top, b.top, a.left, b.left]; })()`)
	if kids[0] != kids[1] || kids[2] == kids[3] {
		t.Errorf("vet and lint at (top, left) (%v, %v) and (%v, %v): want side by side", kids[0], kids[2], kids[1], kids[3])
	}
	if link := eval[string](t, ctx, `document.querySelector("#step-child a.kind").innerText`); !strings.Contains(link, "sub-workflow run") {
		t.Errorf("child step links %q, want its sub-workflow run", link)
	}
	if tool := eval[string](t, ctx, `document.querySelector("#step-count .call").innerText`); !strings.Contains(tool, "word_count") || !strings.Contains(tool, "$ wc -w") || !strings.Contains(tool, "3") {
		t.Errorf("tool step shows %q, want its call of word_count, the command it ran and its output", tool)
	}
	agent := eval[string](t, ctx, `document.querySelector("#step-review").innerText`)
	for _, want := range []string{
		"agent · openai", "test-model", "I'll read note a, mark it reviewed", "model reply 2", "Note a is reviewed.",
		"tokens: 380 in, 80 out, 460 total", "allow (auto)", "+reviewed",
	} {
		if !strings.Contains(agent, want) {
			t.Errorf("agent step does not show %q:\n%s", want, agent)
		}
	}
	denied := eval[[]string](t, ctx, `[...document.querySelectorAll("#step-review .call.denied")].map(c => c.dataset.call + ": " + c.innerText.replace(/\s+/g, " "))`)
	if len(denied) != 2 || !strings.Contains(denied[0], "call_3") || !strings.Contains(denied[0], "DENIED") || !strings.Contains(denied[0], "sandbox.paths.read") ||
		!strings.Contains(denied[1], "call_4") || !strings.Contains(denied[1], "tools.forbidden.approval") {
		t.Errorf("denied calls shown = %q, want call_3 (path rule) and call_4 (workflow's deny), highlighted", denied)
	}
	if added := eval[string](t, ctx, `document.querySelector("#call-review-call_2 .diff .dadd").innerText`); added != "+reviewed" {
		t.Errorf("write_file diff's added line = %q, want +reviewed", added)
	}

	// Hostile output is text: the markup shows as written, the escape sequence visibly, and
	// nothing in it became an element or ran.
	out := eval[string](t, ctx, `document.querySelector("#step-hostile pre.out").textContent`)
	if want := `<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2"><b>bold</b> \x1b[31mred\x1b[0m`; out != want {
		t.Errorf("hostile output shows as\n%q\nwant\n%q", out, want)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("main script, main img, main b").length`); n != 0 {
		t.Errorf("hostile output made %d elements, want none", n)
	}
	if xss := eval[string](t, ctx, `typeof window.__xss`); xss != "undefined" {
		t.Errorf("window.__xss is %s: the output's script ran", xss)
	}
	shoot(t, ctx, shots, "run")

	// A large output shows its start, and all of it a page at a time.
	if more := eval[string](t, ctx, `document.querySelector("#step-long p.more").innerText`); !strings.Contains(more, "of 108893: see all of it") {
		t.Errorf("long output's note = %q", more)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#step-long p.more a`))); err != nil {
		t.Fatal(err)
	}
	waitPage(t, ctx, `document.querySelector("main h1") && document.querySelector("main h1").innerText === "Output of long"`)
	if head := eval[string](t, ctx, `document.querySelector("main p").innerText`); !strings.Contains(head, "108893 bytes · page 1 of 2") {
		t.Errorf("output page says %q, want page 1 of 2", head)
	}
	shoot(t, ctx, shots, "output")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`a[rel=next]`))); err != nil {
		t.Fatal(err)
	}
	waitPage(t, ctx, `location.search.includes("page=2")`)
	if tail := eval[string](t, ctx, `document.querySelector("main pre.out").textContent`); !strings.HasSuffix(tail, "19999\n20000") {
		t.Errorf("page 2 ends with %q, want the output's end", tail[max(len(tail)-20, 0):])
	}

	visit(t, ctx, srv.base+"/audit?decision=deny")
	links := eval[[]string](t, ctx, `[...document.querySelectorAll("table.audit tbody tr a")].map(a => a.getAttribute("href"))`)
	want := []string{"/runs/" + runID + "#call-review-call_4", "/runs/" + runID + "#call-review-call_3"}
	if strings.Join(links, " ") != strings.Join(want, " ") {
		t.Errorf("audit page, decision deny, links %q, want %q (newest first)", links, want)
	}
	shoot(t, ctx, shots, "audit")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`table.audit tbody tr a`))); err != nil {
		t.Fatal(err)
	}
	waitPage(t, ctx, `location.hash === "#call-review-call_4" && document.querySelector(location.hash) !== null`)
	visit(t, ctx, srv.base+"/audit")
	if n := eval[int](t, ctx, `document.querySelectorAll("table.audit tbody tr").length`); n != 5 {
		t.Errorf("audit page shows %d records, want the run's 5 calls", n)
	}
	visit(t, ctx, srv.base+"/audit?decision=maybe")
	if msg := eval[string](t, ctx, `document.querySelector("main p.error").innerText`); !strings.Contains(msg, `--decision "maybe": want allow or deny`) {
		t.Errorf("audit page with a bad filter says %q, want awf audit's message", msg)
	}
}

// TestUIBrowserFollowsLiveRun opens the runs list before a run starts: the run appears
// without a reload, and its page follows it to completion over server-sent events, its agent
// step's calls appearing as the journal records them.
func TestUIBrowserFollowsLiveRun(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	e := newEnv(t)
	for _, f := range []string{"live.yaml", "live.cassette.yaml"} {
		e.copy(filepath.Join("..", "..", "testdata", "e2e", "ui", f), f)
	}
	ctx := browser(t)
	shots := artifacts(t)
	srv := startUI(t, e)
	visit(t, ctx, srv.url)
	eval[int](t, ctx, `window.__marker = 42`)

	run := e.cmd(t.Context(), "run", "live.yaml", "--replay", "live.cassette.yaml", "--quiet")
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Process.Kill(); run.Wait() })
	waitPage(t, ctx, `document.querySelector("tr.run") !== null`)
	if m := eval[int](t, ctx, `window.__marker`); m != 42 {
		t.Errorf("the runs list reloaded to show the new run; want it swapped in live")
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`tr.run a`))); err != nil {
		t.Fatal(err)
	}
	waitPage(t, ctx, `document.getElementById("run-status") !== null && document.readyState === "complete"`)
	status := eval[string](t, ctx, `document.getElementById("run-status").innerText`)
	eval[int](t, ctx, `window.__marker = 7`)
	if status == "running" {
		shoot(t, ctx, shots, "run-live")
		// The first call ends two seconds before the second: the page shows it while the
		// run goes on.
		waitPage(t, ctx, `document.querySelector("#call-work-call_1 .badge.ok") !== null`)
		if now := eval[string](t, ctx, `document.getElementById("run-status").innerText`); now != "running" {
			t.Logf("the run had ended (%s) when its first call's result showed: the machine is slow", now)
		} else {
			shoot(t, ctx, shots, "run-live-call")
		}
	}
	if err := run.Wait(); err != nil {
		t.Fatalf("awf run live.yaml: %v", err)
	}
	waitPage(t, ctx, `document.getElementById("run-status").innerText === "completed" && document.getElementById("main").dataset.live === "false"`)
	if m := eval[int](t, ctx, `window.__marker`); m != 7 {
		t.Errorf("the run page reloaded; want its content swapped in live")
	}
	if status == "running" {
		if n := eval[string](t, ctx, `document.body.dataset.updates || "0"`); n == "0" {
			t.Errorf("the run page was running and is now completed with no live update")
		}
	} else {
		t.Logf("the run had ended (%s) before its page opened: its live updates were not seen", status)
	}
	done := eval[[]string](t, ctx, `[...document.querySelectorAll(".timeline > section.step")].map(s => s.dataset.step + " " + s.querySelector(".status").innerText)`)
	if strings.Join(done, ", ") != "first completed, second completed, work completed" {
		t.Errorf("timeline after the run = %q", done)
	}
	if calls := eval[int](t, ctx, `document.querySelectorAll("#step-work .call").length`); calls != 2 {
		t.Errorf("agent step shows %d calls after the run, want 2", calls)
	}
	shoot(t, ctx, shots, "run-done")
}

// TestUIRefusesForeignRequests checks the guard: no token or a wrong one, a foreign Host (DNS
// rebinding), another page's Origin and a write are refused; the token URL sets an HttpOnly,
// SameSite=Strict cookie; a non-loopback --addr is refused.
func TestUIRefusesForeignRequests(t *testing.T) {
	e := newEnv(t)
	srv := startUI(t, e)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, path string, header map[string]string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, srv.base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range header {
			if k == "Host" {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	login := do("GET", "/?token="+srv.token, nil)
	if login.StatusCode != http.StatusSeeOther || login.Header.Get("Location") != "/" {
		t.Fatalf("token URL: %d to %q, want 303 to /", login.StatusCode, login.Header.Get("Location"))
	}
	cookies := login.Cookies()
	if len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode || cookies[0].Value != srv.token {
		t.Fatalf("token URL set cookies %v, want one HttpOnly SameSite=Strict cookie holding the token", cookies)
	}
	cookie := cookies[0].Name + "=" + cookies[0].Value
	// The redirect stays on this server: a path of "//host" would send the browser there.
	if loc := do("GET", "//attacker.example/x?token="+srv.token, nil).Header.Get("Location"); loc != "/attacker.example/x" {
		t.Errorf("token URL with the path //attacker.example/x redirects to %q, want /attacker.example/x", loc)
	}
	port := strings.TrimPrefix(srv.base, "http://127.0.0.1")
	for _, tc := range []struct {
		name, method, path string
		header             map[string]string
		want               int
	}{
		{"with the cookie", "GET", "/", map[string]string{"Cookie": cookie}, 200},
		{"same origin", "GET", "/audit", map[string]string{"Cookie": cookie, "Origin": srv.base}, 200},
		{"localhost for 127.0.0.1", "GET", "/", map[string]string{"Cookie": cookie, "Host": "localhost" + port}, 200},
		{"no token", "GET", "/", nil, 403},
		{"no token, a run", "GET", "/runs/x", nil, 403},
		{"no token, events", "GET", "/events", nil, 403},
		{"wrong token", "GET", "/?token=" + strings.Repeat("0", len(srv.token)), nil, 403},
		{"wrong cookie", "GET", "/", map[string]string{"Cookie": cookies[0].Name + "=nope"}, 403},
		{"foreign Host", "GET", "/", map[string]string{"Cookie": cookie, "Host": "attacker.example" + port}, 403},
		{"foreign Host with the token", "GET", "/?token=" + srv.token, map[string]string{"Host": "attacker.example" + port}, 403},
		{"foreign Origin", "GET", "/", map[string]string{"Cookie": cookie, "Origin": "http://attacker.example"}, 403},
		{"null Origin", "GET", "/", map[string]string{"Cookie": cookie, "Origin": "null"}, 403},
		{"POST", "POST", "/", map[string]string{"Cookie": cookie}, 405},
		{"[::1] for 127.0.0.1", "GET", "/", map[string]string{"Cookie": cookie, "Host": "[::1]" + port}, 200},
		{"LOCALHOST", "GET", "/", map[string]string{"Cookie": cookie, "Host": "LOCALHOST" + port}, 200},
		{"localhost. (another name)", "GET", "/", map[string]string{"Cookie": cookie, "Host": "localhost." + port}, 403},
		// Browsers send a SameSite cookie with what a page of another port of this host asks
		// (the same site): its images, scripts and fetches must still get nothing.
		{"another port's image", "GET", "/runs/x", map[string]string{"Cookie": cookie,
			"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"}, 403},
		{"another site's script", "GET", "/", map[string]string{"Cookie": cookie,
			"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "script"}, 403},
		{"another site's frame", "GET", "/", map[string]string{"Cookie": cookie,
			"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe"}, 403},
		{"a link followed from another site", "GET", "/?token=" + srv.token, map[string]string{
			"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}, 303},
		{"its own script", "GET", "/static/app.js", map[string]string{"Cookie": cookie,
			"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "script"}, 200},
	} {
		if got := do(tc.method, tc.path, tc.header); got.StatusCode != tc.want {
			t.Errorf("%s: %s %s = %d, want %d", tc.name, tc.method, tc.path, got.StatusCode, tc.want)
		}
	}
	// Ctrl-C stops the server, also while a page follows its live updates.
	req, _ := http.NewRequest("GET", srv.base+"/events", nil)
	req.Header.Set("Cookie", cookie)
	events, err := client.Do(req)
	if err != nil || events.StatusCode != 200 || events.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %v %v", events, err)
	}
	defer events.Body.Close()
	if err := srv.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := srv.cmd.Wait(); err != nil {
		t.Errorf("awf ui after Ctrl-C: %v, want exit 0", err)
	}

	r := e.mustRun(1, "ui", "--addr", "0.0.0.0:0")
	if !strings.Contains(r.stderr, "0.0.0.0 is not a loopback address") || !strings.Contains(r.stderr, "--allow-remote") {
		t.Errorf("awf ui --addr 0.0.0.0:0 says %q, want a refusal naming --allow-remote", r.stderr)
	}
}

// TestUIBrowserRefusesWithoutToken opens the viewer in a browser that has no token: it gets
// the refusal, not the runs.
func TestUIBrowserRefusesWithoutToken(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	e, _ := reviewEnv(t)
	ctx := browser(t)
	srv := startUI(t, e)
	visit(t, ctx, srv.base+"/")
	body := eval[string](t, ctx, `document.body.innerText`)
	if !strings.Contains(body, "Forbidden") || strings.Contains(body, "ui-review") {
		t.Errorf("without the token the browser shows %q, want the refusal", body)
	}
	shoot(t, ctx, artifacts(t), "refused")
}

// TestUIBrowserHiddenPageLetsGoOfItsStream: a browser opens at most six connections to a
// server over HTTP/1.1, and each live page holds one for its updates, so a seventh tab of the
// viewer would never load. A page out of view (another tab, a minimised window) closes its
// stream, and back in view catches up and follows again.
func TestUIBrowserHiddenPageLetsGoOfItsStream(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	e, _ := reviewEnv(t)
	ctx := browser(t)
	srv := startUI(t, e)
	visit(t, ctx, srv.url)
	waitPage(t, ctx, `document.body.dataset.following === "true"`)
	show := func(state string) {
		eval[bool](t, ctx, `Object.defineProperty(document, "visibilityState", {configurable: true, get: () => "`+state+`"}),
			document.dispatchEvent(new Event("visibilitychange")), true`)
	}
	show("hidden")
	waitPage(t, ctx, `document.body.dataset.following === "false"`)
	updates := eval[string](t, ctx, `document.body.dataset.updates || "0"`)
	show("visible")
	waitPage(t, ctx, `document.body.dataset.following === "true" && (document.body.dataset.updates || "0") !== "`+updates+`"`)
}
