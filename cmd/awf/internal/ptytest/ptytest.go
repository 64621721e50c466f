// Package ptytest gives tests a pseudo-terminal on which they play the person at the
// terminal: awf's side is the terminal (Term, or a new descriptor of Name), the test's side is
// the master, and everything the terminal shows is collected.
package ptytest

import (
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// PTY is a pseudo-terminal pair, closed at the end of the test.
type PTY struct {
	Master *os.File // the person's side
	Term   *os.File // awf's side, kept open so that the master never sees a hang-up
	Name   string   // the terminal's path, /dev/pts/N

	mu     sync.Mutex
	screen strings.Builder
	more   chan struct{} // signalled when the screen grows; closed when the master is
}

// Open opens a pseudo-terminal, or skips the test where there are none.
func Open(t testing.TB) *PTY {
	t.Helper()
	master, name, err := openPTY()
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	p := &PTY{Master: master, Name: name, more: make(chan struct{}, 1)}
	if p.Term, err = openTerm(p.Name); err != nil {
		master.Close()
		t.Fatal(err)
	}
	go p.collect()
	t.Cleanup(func() {
		p.Term.Close()
		master.Close()
	})
	return p
}

func (p *PTY) collect() {
	buf := make([]byte, 4096)
	for {
		n, err := p.Master.Read(buf)
		if n > 0 {
			p.mu.Lock()
			p.screen.Write(buf[:n])
			p.mu.Unlock()
			select {
			case p.more <- struct{}{}:
			default:
			}
		}
		if err != nil {
			close(p.more)
			return
		}
	}
}

// Text is everything the terminal has shown.
func (p *PTY) Text() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.screen.String()
}

// WaitFor waits until the terminal has shown want count times and returns what it shows; ok
// is false when the terminal closed first or nothing came for 10 seconds (a hang guard, not a
// timing assertion). Safe to call from any goroutine.
func (p *PTY) WaitFor(want string, count int) (screen string, ok bool) {
	guard := time.After(10 * time.Second)
	for {
		if s := p.Text(); strings.Count(s, want) >= count {
			return s, true
		}
		select {
		case _, open := <-p.more:
			if !open {
				s := p.Text()
				return s, strings.Count(s, want) >= count
			}
		case <-guard:
			return p.Text(), false
		}
	}
}

// Type types a line as a person would.
func (p *PTY) Type(line string) error {
	_, err := p.Master.Write([]byte(line + "\r"))
	return err
}
