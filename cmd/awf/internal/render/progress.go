// Package render shows a run to people: live progress on a terminal (current step, elapsed
// time, tool calls with their meta summary), plain lines elsewhere, nothing but warnings and
// failures under --quiet. It implements ports.Events; it never writes to stdout.
package render

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/internal/domain/ports"
)

// Progress renders events to the people's stream. Safe for concurrent use; call Close when
// the run ends to stop the live line.
type Progress struct {
	w     io.Writer
	live  bool
	quiet bool
	color bool
	now   func() time.Time

	mu      sync.Mutex
	running map[string]time.Time // step -> start, in start order below
	order   []string
	current string // the live line's text, for redraws
	paused  int    // Pause calls not yet resumed: no live line while a prompt is shown
	stop    chan struct{}
	done    sync.WaitGroup
}

// New returns a renderer for ios. now is the clock used for elapsed times on the live line.
func New(ios *iostreams.IOStreams, now func() time.Time) *Progress {
	p := &Progress{
		w: ios.ErrOut, live: ios.ShowProgress(), quiet: ios.Quiet(), color: ios.ColorEnabled(),
		now: now, running: map[string]time.Time{}, stop: make(chan struct{}),
	}
	if p.live {
		p.done.Add(1)
		go p.tick()
	}
	return p
}

var _ ports.Events = (*Progress)(nil)

// Emit renders one event.
func (p *Progress) Emit(e ports.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e.Kind {
	case ports.StepStarted:
		p.running[e.Step] = p.now()
		p.order = append(p.order, e.Step)
		if !p.live {
			p.line("%s: started", e.Step)
		}
	case ports.StepFinished:
		delete(p.running, e.Step)
		p.order = remove(p.order, e.Step)
		p.finished(e)
	case ports.StepRetrying:
		p.line("%s: attempt %d failed: %s; retrying", e.Step, e.Attempt, e.Message)
	case ports.ToolStarted:
		if !p.live {
			p.line("%s: tool %s", e.Step, toolLabel(e.Tool, e.Meta))
		}
	case ports.ToolFinished:
		p.toolFinished(e)
	case ports.Warning:
		p.always("warning: %s", e.Message)
	case ports.ModelResponse:
		if e.Message != "" && !p.quiet && !p.live {
			p.line("%s: model: %s", e.Step, firstLine(e.Message, 120))
		}
	}
	p.redraw()
}

func (p *Progress) finished(e ports.Event) {
	d := e.Duration.Round(time.Millisecond)
	switch e.Status {
	case "completed":
		p.line("%s %s (%s)", p.mark("✓", "32"), e.Step, d)
	case "skipped":
		p.line("%s %s skipped", p.mark("-", "90"), e.Step)
	default:
		msg := e.Status
		if e.Message != "" {
			// "interrupted: interrupted: ..." says it twice.
			msg += ": " + strings.TrimPrefix(firstLine(e.Message, 200), e.Status+": ")
		}
		p.always("%s %s %s (%s)", p.mark("✗", "31"), e.Step, msg, d)
	}
}

func (p *Progress) toolFinished(e ports.Event) {
	if p.quiet {
		return
	}
	status := e.Status
	if e.Message != "" && status != "ok" {
		status += ": " + firstLine(e.Message, 120)
	}
	p.line("  %s %s (%s) %s", p.mark("→", "36"), toolLabel(e.Tool, e.Meta), e.Duration.Round(time.Millisecond), status)
}

// toolLabel names a call: the tool and its one-line summary, without saying the name twice
// when the summary starts with it (a command tool's "run_tests", "search_code pattern=...").
func toolLabel(name, meta string) string {
	switch {
	case meta == "" || meta == name:
		return name
	case strings.HasPrefix(meta, name+" "):
		return meta
	}
	return name + " " + meta
}

// line prints a permanent line unless quiet.
func (p *Progress) line(format string, args ...any) {
	if p.quiet {
		return
	}
	p.always(format, args...)
}

// always prints a permanent line, clearing the live line first. The strings among args come
// from the run (step names, tool summaries, messages that quote tool output) and are escaped
// with Line, so that one line of progress stays one line and the terminal acts on no byte of
// theirs; marks are awf's own.
func (p *Progress) always(format string, args ...any) {
	if p.live && p.current != "" {
		fmt.Fprint(p.w, "\r\033[K")
		p.current = ""
	}
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = Line(s)
		}
	}
	fmt.Fprintf(p.w, format+"\n", args...)
}

// styled is text awf writes with its own terminal codes, left as it is by always.
type styled string

func (p *Progress) mark(s, code string) styled {
	if !p.color {
		return styled(s)
	}
	return styled("\033[" + code + "m" + s + "\033[0m")
}

var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// redraw rewrites the live line: the running steps with their elapsed time.
func (p *Progress) redraw() {
	if !p.live || p.paused > 0 {
		return
	}
	if len(p.order) == 0 {
		if p.current != "" {
			fmt.Fprint(p.w, "\r\033[K")
			p.current = ""
		}
		return
	}
	now := p.now()
	parts := make([]string, 0, len(p.order))
	for _, s := range p.order {
		parts = append(parts, fmt.Sprintf("%s %s", Line(s), now.Sub(p.running[s]).Truncate(100*time.Millisecond)))
	}
	frame := spinner[int(now.UnixMilli()/100)%len(spinner)]
	p.current = frame + " " + strings.Join(parts, ", ")
	fmt.Fprint(p.w, "\r\033[K"+p.current)
}

func (p *Progress) tick() {
	defer p.done.Done()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			p.redraw()
			p.mu.Unlock()
		}
	}
}

// Close stops the live line and clears it.
func (p *Progress) Close() {
	p.mu.Lock()
	select {
	case <-p.stop:
		p.mu.Unlock()
		return
	default:
		close(p.stop)
	}
	p.mu.Unlock()
	p.done.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.order = nil
	p.redraw()
}

func remove(list []string, s string) []string {
	for i, v := range list {
		if v == s {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}

func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// Pause stops drawing the live line (and clears it) until the returned function is called, so
// that a prompt can use the terminal.
func (p *Progress) Pause() (resume func()) {
	p.mu.Lock()
	p.paused++
	if p.live && p.current != "" {
		fmt.Fprint(p.w, "\r\033[K")
		p.current = ""
	}
	p.mu.Unlock()
	return sync.OnceFunc(func() {
		p.mu.Lock()
		p.paused--
		p.mu.Unlock()
	})
}
