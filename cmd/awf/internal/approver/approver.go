// Package approver asks the person at the terminal whether a tool call may run: it shows the
// tool, its one-line summary and its arguments (control characters escaped, long values cut),
// and reads yes, no or always, with a timeout. It implements ports.Approver on iostreams and
// decides nothing itself: the approval flow (internal/application/approval) does.
package approver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/cmd/awf/internal/render"
	"github.com/awf-dev/awf/internal/domain/ports"
)

// MaxValue is the longest argument value shown in a prompt, in bytes; longer ones are cut
// with their size noted.
const MaxValue = 300

// Options tune a Terminal.
type Options struct {
	// Pause is called before a prompt is shown, so that live progress output can stop
	// drawing; the function it returns is called after the answer. nil: nothing to pause.
	Pause func() (resume func())
}

// Terminal asks on the streams' terminal. Prompts are serialised; answers are read by one
// goroutine that lives as long as standard input stays open. Safe for concurrent use.
type Terminal struct {
	io  *iostreams.IOStreams
	opt Options

	turn  chan struct{} // holds one token while a prompt is on screen
	start sync.Once
	lines chan answerLine
	ended error // why standard input ended; read and written only while holding turn
}

type answerLine struct {
	text string
	err  error
}

var _ ports.Approver = (*Terminal)(nil)

// New returns a Terminal on ios.
func New(ios *iostreams.IOStreams, opt Options) *Terminal {
	return &Terminal{io: ios, opt: opt, turn: make(chan struct{}, 1)}
}

// Approve shows the call and waits for an answer: y or yes, n or no (an empty line is no), a
// or always. It returns ports.ErrNoApprover at once when nobody can be asked, AnswerTimeout
// when req.Timeout passes, ctx's error when ctx ends first, and an error when standard input
// closes or fails (every later call then fails the same way without waiting).
func (t *Terminal) Approve(ctx context.Context, req ports.ApprovalRequest) (ports.Answer, error) {
	question := fmt.Sprintf("  Allow? [y]es / [n]o / [a]lways for this exact call in this run%s: ", timeoutNote(req.Timeout))
	answer, err := t.ask(ctx, Describe(req), question, "y, n or a", req.Timeout, func(s string) (string, bool) {
		a, ok := parse(s)
		return string(a), ok
	})
	return ports.Answer(answer), err
}

var _ ports.Settler = (*Terminal)(nil)

// Settle shows a call a crash cut off and asks what to do with it: r or rerun (run it again),
// s or skip (do not; the model is told), d or done (it took effect; the model is told it
// succeeded). An empty line is not an answer: running again or not must be chosen. It
// returns ports.ErrNoApprover at once when nobody can be asked.
func (t *Terminal) Settle(ctx context.Context, req ports.SettleRequest) (ports.Settlement, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "\n? a tool call was in flight (about to run, or running) when the run stopped: %s", clean(req.Tool, 80))
	if req.Step != "" {
		fmt.Fprintf(&b, " (step %s, call %s)", clean(req.Step, 80), clean(req.CallID, 80))
	}
	b.WriteString("\n  Nobody knows whether it took effect, and the tool has no check that could tell.\n")
	if req.Meta != "" {
		fmt.Fprintf(&b, "  what:   %s\n", clean(req.Meta, MaxValue))
	}
	if len(req.Args) > 0 {
		b.WriteString("  arguments:\n")
		writeMap(&b, req.Args, "    ")
	}
	answer, err := t.ask(ctx, b.String(), "  [r]un it again / [s]kip it / mark it [d]one: ", "r, s or d", 0, func(s string) (string, bool) {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "r", "rerun", "run":
			return string(ports.SettleRerun), true
		case "s", "skip":
			return string(ports.SettleSkip), true
		case "d", "done":
			return string(ports.SettleDone), true
		}
		return "", false
	})
	return ports.Settlement(answer), err
}

// ask shows text and question, and reads lines until parse accepts one (hint says what it
// accepts). It returns ports.ErrNoApprover at once when nobody can be asked; with a timeout,
// string(ports.AnswerTimeout) when it passes.
func (t *Terminal) ask(ctx context.Context, text, question, hint string, timeout time.Duration, parse func(string) (string, bool)) (string, error) {
	if !t.io.CanPrompt() {
		return "", ports.ErrNoApprover
	}
	select {
	case t.turn <- struct{}{}:
		defer func() { <-t.turn }()
	case <-ctx.Done():
		return "", ctx.Err()
	}
	t.discardTypeAhead()
	t.start.Do(func() {
		t.lines = make(chan answerLine, 16)
		go t.read()
	})
	if t.ended != nil {
		return "", t.ended
	}
	if t.opt.Pause != nil {
		defer t.opt.Pause()()
	}
	w := t.io.ErrOut
	fmt.Fprint(w, text)
	var expired <-chan time.Time
	if timeout > 0 {
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		expired = timer.C
	}
	for {
		fmt.Fprint(w, question)
		select {
		case l := <-t.lines:
			if l.err != nil {
				fmt.Fprintln(w)
				t.ended = l.err
				return "", l.err
			}
			if ans, ok := parse(l.text); ok {
				return ans, nil
			}
			fmt.Fprintf(w, "  %s is not an answer: type %s.\n", strconv.Quote(l.text), hint)
		case <-expired:
			fmt.Fprintln(w, "timed out: denied")
			return string(ports.AnswerTimeout), nil
		case <-ctx.Done():
			fmt.Fprintln(w, "cancelled: denied")
			return "", ctx.Err()
		}
	}
}

// read sends every line of standard input to t.lines, then the error that ended it.
func (t *Terminal) read() {
	r := bufio.NewReader(t.io.In)
	for {
		s, err := r.ReadString('\n')
		if err != nil && (s == "" || err != io.EOF) {
			if err == io.EOF {
				err = fmt.Errorf("read answer: standard input closed")
			} else {
				err = fmt.Errorf("read answer: %w", err)
			}
			t.lines <- answerLine{err: err}
			return
		}
		t.lines <- answerLine{text: strings.TrimRight(s, "\r\n")}
	}
}

// discardTypeAhead drops lines typed before the question was shown (a late answer to an
// earlier question, a stray Enter): an answer must answer the call on the screen. Lines the
// reader already holds are dropped, then the terminal's input queue is flushed. A read error
// ends prompting.
func (t *Terminal) discardTypeAhead() {
	t.drain()
	if t.ended == nil && flushInput(t.io.In) {
		t.drain()
	}
}

func (t *Terminal) drain() {
	for t.ended == nil {
		select {
		case l := <-t.lines:
			t.ended = l.err
		default:
			return
		}
	}
}

func parse(s string) (ports.Answer, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "y", "yes":
		return ports.AnswerYes, true
	case "n", "no", "":
		return ports.AnswerNo, true
	case "a", "always":
		return ports.AnswerAlways, true
	}
	return "", false
}

func timeoutNote(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return fmt.Sprintf(" (denied after %s)", d)
}

// Describe renders a request for people: tool, step, summary, why it asks, the arguments and,
// when they differ from the arguments, the actions of the canonical form an "always" answer
// covers. Every value has its control characters escaped and long values are cut.
func Describe(req ports.ApprovalRequest) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n? approve a tool call: %s", clean(req.Tool, 80))
	if req.Step != "" {
		fmt.Fprintf(&b, " (step %s)", clean(req.Step, 80))
	}
	b.WriteString("\n")
	if req.Meta != "" {
		fmt.Fprintf(&b, "  what:   %s\n", clean(req.Meta, MaxValue))
	}
	if req.Reason != "" {
		fmt.Fprintf(&b, "  why:    %s\n", clean(req.Reason, MaxValue))
	}
	if len(req.Args) > 0 {
		b.WriteString("  arguments:\n")
		writeMap(&b, req.Args, "    ")
	}
	if c := req.Canonical; len(c.Actions) > 0 && !(len(c.Actions) == 1 && reflect.DeepEqual(c.Actions[0], req.Args)) {
		b.WriteString("  it would run:\n")
		for _, a := range c.Actions {
			fmt.Fprintf(&b, "    - %s\n", action(a))
		}
	}
	if c := req.Canonical; c.Opaque != "" {
		fmt.Fprintf(&b, "  note:   not everything it runs is visible: %s\n", clean(c.Opaque, MaxValue))
	}
	return b.String()
}

func writeMap(b *strings.Builder, m map[string]any, indent string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(b, "%s%s: %s\n", indent, clean(k, 80), show(m[k]))
	}
}

// action renders one action of a canonical form: its command when it has one, else its
// fields.
func action(a map[string]any) string {
	if cmd, ok := a["command"].(string); ok {
		return clean(cmd, MaxValue)
	}
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = clean(k, 80) + ": " + show(a[k])
	}
	return strings.Join(parts, ", ")
}

// show renders a value on one line: strings quoted with control characters escaped, other
// values as JSON; long ones cut.
func show(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(cutBytes(s, MaxValue))
	}
	data, err := json.Marshal(v)
	if err != nil {
		return clean(fmt.Sprint(v), MaxValue)
	}
	return clean(string(data), MaxValue)
}

// clean escapes control and other non-printable characters (terminal escapes, bidi
// overrides) without adding quotes, after cutting s to max bytes.
func clean(s string, max int) string {
	return render.Line(cutBytes(s, max))
}

// cutBytes shortens s to at most max bytes on a rune boundary, noting what was left out.
func cutBytes(s string, max int) string {
	if len(s) <= max {
		return s
	}
	end := max
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return fmt.Sprintf("%s… (%d more bytes)", s[:end], len(s)-end)
}
