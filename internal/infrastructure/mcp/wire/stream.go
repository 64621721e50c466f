package wire

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// lineReader reads newline-delimited messages, the stdio transport's framing. A line longer
// than MaxMessage is read to its end and dropped, never buffered whole.
type lineReader struct {
	r *bufio.Reader
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next line that is not blank, without its newline; tooLong is set (and the
// line empty) for one longer than MaxMessage. At the end of the input it returns what it read
// of a last line without a newline, then the error.
func (l *lineReader) next() (line []byte, tooLong bool, err error) {
	for {
		line, tooLong, err = l.read()
		if len(bytes.TrimSpace(line)) > 0 || tooLong || err != nil {
			return line, tooLong, err
		}
	}
}

func (l *lineReader) read() (line []byte, tooLong bool, err error) {
	for {
		chunk, err := l.r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > MaxMessage {
				line, tooLong = nil, true
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(bytes.TrimSpace(line)) > 0 && errors.Is(err, io.EOF) {
			err = nil // the last line, without its newline: the next read gets EOF again
		}
		return bytes.TrimRight(line, "\r\n"), tooLong, err
	}
}

// lockedWriter writes one message per Write, with its newline, never two interleaved.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) writeLine(data []byte) error {
	line := make([]byte, 0, len(data)+1)
	line = append(append(line, data...), '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := l.w.Write(line)
	return err
}

// streamTransport is the stdio transport of a client over a pair of streams.
type streamTransport struct {
	lines *lineReader
	out   *lockedWriter
	// closer ends the session: the server's standard input (and what follows, for a command).
	closer func() error
}

// NewStreamTransport is a client's transport over streams: in carries the server's messages,
// out the client's, one JSON object per line. Closing the session closes out, and in when it
// is an io.Closer (else the session ends when the server closes in).
func NewStreamTransport(in io.Reader, out io.WriteCloser) Transport {
	closer := out.Close
	if c, ok := in.(io.Closer); ok {
		closer = func() error { return errors.Join(out.Close(), c.Close()) }
	}
	return &streamTransport{lines: newLineReader(in), out: &lockedWriter{w: out}, closer: closer}
}

func (t *streamTransport) start(context.Context) error { return nil }
func (t *streamTransport) setVersion(string)           {}
func (t *streamTransport) ready()                      {}
func (t *streamTransport) close() error {
	if t.closer == nil {
		return nil
	}
	return t.closer()
}

func (t *streamTransport) send(_ context.Context, data []byte, _ string) error {
	return t.out.writeLine(data)
}

func (t *streamTransport) recv() (incoming, error) {
	for {
		line, tooLong, err := t.lines.next()
		if tooLong {
			continue // a server's message over 16 MiB: its call times out or fails
		}
		if len(line) > 0 {
			return incoming{data: line}, nil
		}
		return incoming{}, err
	}
}

// commandTransport runs a stdio server: its standard input and output carry the session.
type commandTransport struct {
	streamTransport
	cmd   *exec.Cmd
	grace time.Duration
}

// NewCommandTransport is a client's transport to the stdio server cmd, started by Connect.
// Closing the session closes the server's standard input, waits grace for it to exit, then
// sends SIGTERM, waits grace again, then kills it; Close returns its exit status.
func NewCommandTransport(cmd *exec.Cmd, grace time.Duration) Transport {
	return &commandTransport{cmd: cmd, grace: grace}
}

func (t *commandTransport) start(context.Context) error {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := t.cmd.Start(); err != nil {
		return err
	}
	t.lines = newLineReader(stdout)
	t.out = &lockedWriter{w: stdin}
	t.closer = func() error { return t.stop(stdin) }
	return nil
}

// stop ends the server as the MCP spec asks of a stdio client: close its input, wait, SIGTERM,
// wait, kill. Waiting closes the pipe of the server's output (exec.Cmd.StdoutPipe), which
// ends the session's reading.
func (t *commandTransport) stop(stdin io.Closer) error {
	if err := stdin.Close(); err != nil && !errors.Is(err, io.ErrClosedPipe) {
		return fmt.Errorf("closing stdin: %w", err)
	}
	waited := make(chan error, 1)
	go func() { waited <- t.cmd.Wait() }()
	wait := func() (error, bool) {
		timer := time.NewTimer(t.grace)
		defer timer.Stop()
		select {
		case err := <-waited:
			return err, true
		case <-timer.C:
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if err := t.cmd.Process.Signal(syscall.SIGTERM); err == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := t.cmd.Process.Kill(); err != nil {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return errors.New("unresponsive subprocess")
}
