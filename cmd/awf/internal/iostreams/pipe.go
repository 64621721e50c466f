package iostreams

import (
	"errors"
	"io"
	"sync"
)

// dropWriter is a standard stream whose failed writes are dropped: when the reader of a pipe
// goes away (`awf run ... 2>&1 | head -1`), progress and output have nowhere to go, but the run
// must go on and record its result. The first failure is kept for WriteErrors.
type dropWriter struct {
	w    io.Writer
	name string

	mu  sync.Mutex
	err error
}

// Write writes p, or drops it after a failure; it always reports success.
func (d *dropWriter) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil {
		return len(p), nil
	}
	if _, err := d.w.Write(p); err != nil {
		d.err = err
	}
	return len(p), nil
}

// failure returns the first write error, naming the stream, or nil.
func (d *dropWriter) failure() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err == nil {
		return nil
	}
	return errors.Join(errors.New(d.name+" write failed; later output to it was dropped"), d.err)
}

// WriteErrors returns the first failed write of each of Out and ErrOut, from which later
// writes were dropped (streams from System only), or nil. The caller logs it once, at the end:
// a stream that failed may be the log's own.
func (s *IOStreams) WriteErrors() error {
	var errs []error
	for _, w := range []io.Writer{s.Out, s.ErrOut} {
		if d, ok := w.(*dropWriter); ok {
			if err := d.failure(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
