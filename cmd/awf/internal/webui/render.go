package webui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/awf-dev/awf/cmd/awf/internal/render"
	"github.com/awf-dev/awf/internal/domain/fault"
)

// pageNames are the templates in assets/, each defining "main" for layout.html.
var pageNames = []string{"runs", "run", "output", "audit", "error"}

// funcs are the templates' helpers. Text from runs goes through text (control characters
// made visible) before html/template escapes it.
var funcs = template.FuncMap{
	"text":  render.Text,
	"line":  render.Line,
	"short": func(s string) string { return cut(s, 8) },
	// digest is the start of a "sha256:..." digest, enough to tell two apart.
	"digest": func(s string) string { return cut(strings.TrimPrefix(s, "sha256:"), 12) },
	"dur":    fmtDuration,
	"ms":     func(ms int64) string { return fmtDuration(time.Duration(ms) * time.Millisecond) },
	"time":   fmtTime,
	"timep": func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return fmtTime(*t)
	},
	"json":  prettyJSON,
	"add":   func(a, b int) int { return a + b },
	"depth": func(d int) int { return min(d, 6) },
	"list":  func(s ...string) []string { return s },
}

func parsePages() (map[string]*template.Template, error) {
	base, err := template.New("layout.html").Funcs(funcs).ParseFS(assets, "assets/layout.html")
	if err != nil {
		return nil, fmt.Errorf("webui templates: %w", err)
	}
	pages := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.Must(base.Clone()).ParseFS(assets, "assets/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("webui templates: %w", err)
		}
		pages[name] = t
	}
	return pages, nil
}

// page is what layout.html gets: the title, the page's data, and whether the page follows
// live updates (then app.js reloads its main element when the state directory changes).
type page struct {
	Title string
	Nav   string
	Live  bool
	Data  any
}

// live is implemented by pages that may change while shown.
type live interface{ live() bool }

// The runs list is always live: a run may start at any time.
func (v *runsView) live() bool { return true }

// render writes page name with data; ?fragment=1 gets only its main element (what app.js
// swaps in on a live update). Rendering goes to a buffer first, so that an error is a whole
// error page, not half a page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, name, title string, data any) {
	s.renderCode(w, r, http.StatusOK, name, title, data)
}

// renderCode is render with the response's status code.
func (s *Server) renderCode(w http.ResponseWriter, r *http.Request, code int, name, title string, data any) {
	p := page{Title: title, Nav: name, Data: data}
	if l, ok := data.(live); ok {
		p.Live = l.live()
	}
	tmpl := "layout.html"
	if r.URL.Query().Get("fragment") == "1" {
		tmpl = "main"
	}
	var buf bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&buf, tmpl, p); err != nil {
		s.cfg.Log.Error("render page", "page", name, "error", err)
		http.Error(w, "render: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// fail shows err as an error page: 404 for an unknown run or a bad request, 500 otherwise.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	code := http.StatusInternalServerError
	if fault.KindOf(err) == fault.Usage || errors.Is(err, errNotFound) {
		code = http.StatusNotFound
	}
	s.renderCode(w, r, code, "error", "Error", err.Error())
}

var errNotFound = errors.New("not found")

func fmtDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return "0ms"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(10 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// prettyJSON is v as indented JSON, HTML characters left as they are (the template escapes
// them).
func prettyJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// cut is s's first n bytes, not splitting a character.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
