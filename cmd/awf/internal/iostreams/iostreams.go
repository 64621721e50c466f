// Package iostreams owns awf's standard streams: which are terminals, whether colour and
// progress are wanted, and how to ask the person at the terminal a question. Commands get one
// IOStreams and never touch os.Stdin, os.Stdout or os.Stderr themselves.
package iostreams

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"golang.org/x/term"
)

// IOStreams holds the three streams and what is known about them. Out is for data (stdout);
// ErrOut is for people: progress, warnings, prompts and errors.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	inTTY, outTTY, errTTY bool
	color                 Color
	quiet                 bool
	neverPrompt           bool

	mu     sync.Mutex
	reader *bufio.Reader
}

// System returns the process's streams, detecting terminals and honouring NO_COLOR. Writes
// to its Out and ErrOut never fail: after the first failure (a closed pipe) they are dropped,
// and WriteErrors reports it. Call SurviveClosedPipes too, or the first such write kills the
// process.
func System() *IOStreams {
	return &IOStreams{
		In:     os.Stdin,
		Out:    &dropWriter{w: os.Stdout, name: "stdout"},
		ErrOut: &dropWriter{w: os.Stderr, name: "stderr"},
		inTTY:  term.IsTerminal(int(os.Stdin.Fd())),
		outTTY: term.IsTerminal(int(os.Stdout.Fd())),
		errTTY: term.IsTerminal(int(os.Stderr.Fd())),
		color:  ColorFromEnv(os.Getenv),
	}
}

// Color is what the environment says about colour; a terminal decides what it leaves open.
type Color int

// Colour settings.
const (
	ColorAuto   Color = iota // colour on a terminal only
	ColorNever               // never colour
	ColorAlways              // colour even when stderr is no terminal (a CI log that shows it)
)

// ColorFromEnv reads the colour variables, the first that is set (non-empty) deciding:
//
//  1. NO_COLOR (any non-empty value): never (no-color.org), whatever else is set;
//  2. FORCE_COLOR: always, or never when it is 0 or false;
//  3. CLICOLOR_FORCE (any value but 0): always;
//  4. CLICOLOR=0, or TERM=dumb: never;
//  5. else colour on a terminal only.
func ColorFromEnv(getenv func(string) string) Color {
	if getenv("NO_COLOR") != "" {
		return ColorNever
	}
	if v := getenv("FORCE_COLOR"); v != "" {
		if v == "0" || strings.EqualFold(v, "false") {
			return ColorNever
		}
		return ColorAlways
	}
	if v := getenv("CLICOLOR_FORCE"); v != "" && v != "0" {
		return ColorAlways
	}
	if getenv("CLICOLOR") == "0" || getenv("TERM") == "dumb" {
		return ColorNever
	}
	return ColorAuto
}

// Test returns streams backed by buffers, none a terminal until a Set*TTY call says so.
func Test() (ios *IOStreams, in *bytes.Buffer, out *bytes.Buffer, errOut *bytes.Buffer) {
	in, out, errOut = &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut, color: ColorNever}, in, out, errOut
}

// SetStdinTTY fakes (or clears) a terminal on standard input, for tests.
func (s *IOStreams) SetStdinTTY(v bool) { s.inTTY = v }

// SetStdoutTTY fakes (or clears) a terminal on standard output, for tests.
func (s *IOStreams) SetStdoutTTY(v bool) { s.outTTY = v }

// SetStderrTTY fakes (or clears) a terminal on standard error, for tests.
func (s *IOStreams) SetStderrTTY(v bool) { s.errTTY = v }

// SetQuiet turns off progress output.
func (s *IOStreams) SetQuiet(v bool) { s.quiet = v }

// SetNeverPrompt forbids prompts even on a terminal (--non-interactive, CI).
func (s *IOStreams) SetNeverPrompt(v bool) { s.neverPrompt = v }

// IsStdoutTTY reports whether standard output is a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.outTTY }

// IsStderrTTY reports whether standard error is a terminal.
func (s *IOStreams) IsStderrTTY() bool { return s.errTTY }

// Quiet reports whether progress output is off.
func (s *IOStreams) Quiet() bool { return s.quiet }

// ColorEnabled reports whether people's output may use colour: as ColorFromEnv says, on a
// terminal stderr unless forced.
func (s *IOStreams) ColorEnabled() bool {
	return s.color == ColorAlways || s.color == ColorAuto && s.errTTY
}

// ShowProgress reports whether live progress fits: a terminal stderr and not quiet.
func (s *IOStreams) ShowProgress() bool { return s.errTTY && !s.quiet }

// CanPrompt reports whether a person can be asked: stdin and stderr are terminals and prompts
// are not forbidden.
func (s *IOStreams) CanPrompt() bool { return s.inTTY && s.errTTY && !s.neverPrompt }

// ErrCannotPrompt is returned by Prompt when nobody can answer.
var ErrCannotPrompt = errors.New("no terminal to prompt on")

// Prompt writes label to ErrOut and reads one line from In, without its line ending. Safe for
// concurrent use: prompts are serialised.
func (s *IOStreams) Prompt(label string) (string, error) {
	if !s.CanPrompt() {
		return "", ErrCannotPrompt
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reader == nil {
		s.reader = bufio.NewReader(s.In)
	}
	fmt.Fprint(s.ErrOut, label)
	line, err := s.reader.ReadString('\n')
	if err != nil && (err != io.EOF || line == "") {
		return "", fmt.Errorf("read answer: %w", err)
	}
	return strings.TrimRight(line, "\r\n"), nil
}
