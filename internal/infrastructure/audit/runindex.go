package audit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/infrastructure/regfile"
)

// RunIndex reads the records of one run from an audit log again and again, as the run viewer
// does for a run's page (and at every change of a running one), without reading the whole log
// each time: it keeps where the lines naming each run are, and reads only what was appended
// since. A log that shrank or was replaced is indexed again from its start. What it returns
// is what ReadFile with a Filter on the run's id returns, kept to the run of that very id.
// Safe for concurrent use.
type RunIndex struct {
	path string

	mu   sync.Mutex
	file os.FileInfo // the log as last indexed
	end  int64       // how far it is indexed: the end of its last whole line
	// lines are the lines that name each run id in a run_id field, by the id as written; a
	// line is listed under every id it names, and under "" when one is written with escapes.
	lines map[string][]span
	// scanned counts the bytes indexed, for tests.
	scanned int64
}

// span is one line of the log.
type span struct{ off, len int64 }

// NewRunIndex indexes the audit log at path on first use.
func NewRunIndex(path string) *RunIndex { return &RunIndex{path: path} }

// Records returns the records of run id, folded as ReadFile folds them.
func (x *RunIndex) Records(id string) ([]ports.AuditRecord, Stats, error) {
	recs, stats, err := x.records(id)
	return slices.DeleteFunc(recs, func(r ports.AuditRecord) bool { return r.RunID != id }), stats, err
}

func (x *RunIndex) records(id string) ([]ports.AuditRecord, Stats, error) {
	f, err := regfile.Open(x.path)
	if errors.Is(err, fs.ErrNotExist) {
		return []ports.AuditRecord{}, Stats{}, nil
	}
	if err != nil {
		return nil, Stats{}, fault.Wrap(fault.System, fmt.Errorf("audit log: %w", err))
	}
	defer f.Close()
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.update(f); err != nil {
		return nil, Stats{}, fault.Wrap(fault.System, fmt.Errorf("audit log %s: %w", x.path, err))
	}
	if len(x.lines[""]) > 0 { // a run id this index cannot tell: the whole log decides
		return Read(io.NewSectionReader(f, 0, x.end), Filter{RunID: id})
	}
	var buf []byte
	for _, r := range adjoined(x.lines[id]) { // one read per run of adjoining lines
		n := len(buf)
		buf = slices.Grow(buf, int(r.len))[:n+int(r.len)]
		if _, err := f.ReadAt(buf[n:], r.off); err != nil {
			return nil, Stats{}, fault.Wrap(fault.System, fmt.Errorf("audit log %s: %w", x.path, err))
		}
	}
	return Read(bytes.NewReader(buf), Filter{RunID: id})
}

// adjoined merges the spans, in file order, that follow each other with nothing between: a
// run that wrote alone wrote one stretch of the log.
func adjoined(spans []span) []span {
	var out []span
	for _, s := range spans {
		if last := len(out) - 1; last >= 0 && out[last].off+out[last].len == s.off {
			out[last].len += s.len
			continue
		}
		out = append(out, s)
	}
	return out
}

// update indexes what was appended to the log since the last call, or all of it when it
// shrank or is another file.
func (x *RunIndex) update(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if x.file == nil || !os.SameFile(x.file, fi) || fi.Size() < x.end {
		x.end, x.lines = 0, map[string][]span{}
	}
	x.file = fi
	r := bufio.NewReaderSize(io.NewSectionReader(f, x.end, fi.Size()-x.end), 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		for errors.Is(err, bufio.ErrBufferFull) { // a line longer than the buffer
			var more []byte
			more, err = r.ReadSlice('\n')
			line = append(append([]byte(nil), line...), more...)
		}
		if err != nil { // the end, or a line still being written: indexed next time
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		for _, id := range namedRuns(line) {
			x.lines[id] = append(x.lines[id], span{x.end, int64(len(line))})
		}
		x.end += int64(len(line))
		x.scanned += int64(len(line))
	}
}

// namedRuns returns the values of the run_id fields in line as written, whatever JSON spacing
// surrounds the colon; "" for one written with escapes, or cut short; none for a line that
// names no run.
func namedRuns(line []byte) []string {
	var ids []string
	add := func(id string) {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	for rest := line; ; {
		i := bytes.Index(rest, []byte(`"run_id"`))
		if i < 0 {
			return ids
		}
		rest = bytes.TrimLeft(rest[i+len(`"run_id"`):], " \t\r\n")
		if len(rest) == 0 || rest[0] != ':' {
			continue // a value "run_id", not a key
		}
		rest = bytes.TrimLeft(rest[1:], " \t\r\n")
		if len(rest) == 0 || rest[0] != '"' {
			continue // not a string: no run's id
		}
		rest = rest[1:]
		j := bytes.IndexByte(rest, '"')
		switch {
		case j < 0:
			add("")
			return ids
		case bytes.IndexByte(rest[:j], '\\') >= 0:
			add("")
		default:
			add(string(rest[:j]))
		}
	}
}
