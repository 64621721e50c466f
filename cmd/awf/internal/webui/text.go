package webui

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/awf-dev/awf/cmd/awf/internal/render"
	"github.com/awf-dev/awf/internal/domain/state"
)

// Output sizes: a page shows at most InlineBytes of each output and links to the rest, shown
// PageBytes at a time, so that a run with large outputs (or thousands of calls) opens quickly.
const (
	InlineBytes = 4 << 10
	PageBytes   = 64 << 10
)

// textView is an output as a page shows it: the start of it, control characters made visible
// (render.Text), and where the rest is.
type textView struct {
	Text string
	// Size is the output's size in bytes; More is how many of them are not shown.
	Size, More int
	// Link is the page that shows all of it ("" when all of it is shown).
	Link string
}

// inlineText is s cut to InlineBytes, linking to link for the rest.
func inlineText(s, link string) textView {
	v := textView{Text: render.Text(cut(s, InlineBytes)), Size: len(s)}
	if shown := len(cut(s, InlineBytes)); shown < len(s) {
		v.More, v.Link = len(s)-shown, link
	}
	return v
}

// outputLink is the output page of a run's output (step ""), a step's or a call's.
func outputLink(runID, step, call string) string {
	return textLink(runID, step, call, false)
}

// textLink is outputLink, or with args the page of a call's arguments.
func textLink(runID, step, call string, args bool) string {
	u := url.URL{Path: "/runs/" + runID + "/output", RawQuery: textQuery(step, call, args).Encode()}
	return u.String()
}

// textQuery is the query of the output page that shows a step's output (step ""; the run's),
// a call's, or with args the call's arguments.
func textQuery(step, call string, args bool) url.Values {
	q := url.Values{}
	if args {
		q.Set("part", "args")
	}
	if step != "" {
		q.Set("step", step)
	}
	if call != "" {
		q.Set("call", call)
	}
	return q
}

// outputView is one page of an output.
type outputView struct {
	RunID, Step, Call string
	Args              bool
	Text              string
	Page, Pages, Size int
	Prev, Next        string
}

// pageOf returns page n (from 1) of s, PageBytes long, not splitting characters, and the
// number of pages.
func pageOf(s string, n int) (text string, pages int) {
	pages = max(1, (len(s)+PageBytes-1)/PageBytes)
	n = min(max(n, 1), pages)
	lo := len(cut(s, (n-1)*PageBytes))
	hi := len(cut(s, n*PageBytes))
	return s[lo:hi], pages
}

func (s *Server) outputPage(w http.ResponseWriter, r *http.Request) {
	run, err := s.load(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	step, call, args := q.Get("step"), q.Get("call"), q.Get("part") == "args"
	out, err := outputOf(run.Output, run.States, step, call, args)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	n, _ := strconv.Atoi(q.Get("page"))
	text, pages := pageOf(out, n)
	n = min(max(n, 1), pages)
	v := &outputView{RunID: run.ID, Step: step, Call: call, Args: args, Text: render.Text(text), Page: n, Pages: pages, Size: len(out)}
	link := func(p int) string {
		q := textQuery(step, call, args)
		q.Set("page", strconv.Itoa(p))
		return "?" + q.Encode()
	}
	if n > 1 {
		v.Prev = link(n - 1)
	}
	if n < pages {
		v.Next = link(n + 1)
	}
	s.render(w, r, "output", "Output", v)
}

// outputOf finds the text a page asks for: the run's output (no step), a step's, a call's, or
// a call's arguments (args).
func outputOf(runOutput string, states map[string]*state.StepState, step, call string, args bool) (string, error) {
	if step == "" {
		return runOutput, nil
	}
	st := states[step]
	if st == nil {
		return "", fmt.Errorf("no step %q in this run: %w", step, errNotFound)
	}
	if call == "" {
		return st.Output, nil
	}
	for _, c := range st.ToolCalls {
		switch {
		case c.ID != call:
		case args:
			return prettyJSON(c.Arguments), nil
		case c.Result != nil:
			return c.Result.Output, nil
		}
	}
	return "", fmt.Errorf("no call %q with a result in step %q: %w", call, step, errNotFound)
}
