package audit

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/infrastructure/regfile"
)

// Filter selects records; empty fields select everything.
type Filter struct {
	// RunID selects the runs whose id starts with it (a whole id, or the start `awf audit`
	// shows).
	RunID string
	Tool  string
	// Decision is allow or deny: whether the call was refused (outcome denied) or not.
	Decision string
	// Outcome is ok, error, denied, timeout, unknown (a call a crash cut off, settled on
	// resume) or started (a call that has not ended).
	Outcome string
	// Since keeps records at or after this time.
	Since time.Time
}

// Match reports whether rec is selected.
func (f Filter) Match(rec ports.AuditRecord) bool {
	return f.matchCall(rec) && f.matchResult(rec)
}

// matchCall is Match without the outcome and the decision, which tell a call's started record
// from its completion: both records of a call have the same time, run and tool.
func (f Filter) matchCall(rec ports.AuditRecord) bool {
	switch {
	case f.RunID != "" && !strings.HasPrefix(rec.RunID, f.RunID):
		return false
	case f.Tool != "" && rec.Tool != f.Tool:
		return false
	case !f.Since.IsZero() && rec.Time.Before(f.Since):
		return false
	}
	return true
}

// matchResult is the part of Match that a call's started and completion records can answer
// differently: the outcome and the decision (a denial inside a tool follows a started record).
func (f Filter) matchResult(rec ports.AuditRecord) bool {
	switch {
	case f.Outcome != "" && rec.Outcome != f.Outcome:
		return false
	case f.Decision == ports.DecisionDeny && !rec.Denied():
		return false
	case f.Decision == ports.DecisionAllow && rec.Denied():
		return false
	}
	return true
}

// holds reports whether Read must keep rec to answer f: a record f selects, or, when started
// records may be selected, any record of a call f selects, since a completion record drops its
// call's started record (Fold).
func (f Filter) holds(rec ports.AuditRecord) bool {
	if f.Outcome == "" || f.Outcome == ports.OutcomeStarted {
		return f.matchCall(rec)
	}
	return f.Match(rec)
}

// Stats says what reading skipped.
type Stats struct {
	// Skipped counts complete lines that are not records (a damaged file).
	Skipped int
	// Torn is true when the file ends in an incomplete line (a write cut short by a crash),
	// which was ignored.
	Torn bool
}

// Read returns the records of r that f selects, in file order, one per call: a started record
// is left out when its call's completion record follows it, so the started records that
// remain are calls that have not ended, or that awf died in. A last line without its newline
// that does not decode is a torn write and is ignored; other lines that do not decode are
// skipped and counted. It reads as ScanFile does, holding r in memory only when r cannot be read
// at an offset (strings, bytes and section readers can).
func Read(r io.Reader, f Filter) ([]ports.AuditRecord, Stats, error) {
	ra, size, err := readerAt(r)
	if err != nil {
		return nil, Stats{}, fault.Wrap(fault.System, fmt.Errorf("read audit log: %w", err))
	}
	s, err := scan(ra, size, f, nil)
	if err != nil {
		return nil, Stats{}, err
	}
	recs := []ports.AuditRecord{}
	err = s.Each(func(rec ports.AuditRecord) error {
		recs = append(recs, rec)
		return nil
	})
	return recs, s.Stats(), err
}

// readerAt returns r as a reader at offsets, and its size.
func readerAt(r io.Reader) (io.ReaderAt, int64, error) {
	if ra, ok := r.(interface {
		io.ReaderAt
		Size() int64
	}); ok {
		return ra, ra.Size(), nil
	}
	data, err := io.ReadAll(r)
	return bytes.NewReader(data), int64(len(data)), err
}

// scanned is an audit log read once, ready to hand out its records (Each): what reading
// without holding the log needs to know from a first reading, which started records stay.
type scanned struct {
	r     io.ReaderAt
	f     Filter
	end   int64          // the end of the last line the first reading took
	keep  map[int64]bool // the started records that stay, by offset: calls not ended
	stats Stats
}

// scan reads the first size bytes of r once, to know which started records a later completion
// folds away, and returns what Each then hands out: the records Read would return, in order.
// Neither reading holds more than where the calls in flight are (the line of a started record
// whose completion has not come yet), so an audit log of any size is read in the memory of
// its biggest line, and one of calls that never ended in a few dozen bytes each. heads, when
// not nil, is called with each record Each will hand out, the started ones last, read again
// from their lines, and as their heads, so that a caller can size a table, or refuse a run
// prefix that several runs share, before it writes anything.
func scan(r io.ReaderAt, size int64, f Filter, heads func(ports.AuditRecord)) (*scanned, error) {
	s := &scanned{r: r, f: f, keep: map[int64]bool{}}
	var calls folder[span]
	end, err := eachRecord(io.NewSectionReader(r, 0, size), f, &s.stats, func(line span, rec *ports.AuditRecord) error {
		switch {
		case !f.holds(*rec):
		case rec.Outcome == ports.OutcomeStarted:
			calls.start(*rec, line)
		default:
			calls.end(*rec)
			if f.matchResult(*rec) && heads != nil {
				heads(*rec)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.end = end
	open := calls.open()
	slices.SortFunc(open, func(a, b span) int { return cmp.Compare(a.off, b.off) })
	var buf []byte
	for _, line := range open {
		s.keep[line.off] = true
		if heads == nil {
			continue
		}
		buf = slices.Grow(buf[:0], int(line.len))[:line.len]
		if _, err := r.ReadAt(buf, line.off); err != nil {
			return nil, fault.Wrap(fault.System, fmt.Errorf("read audit log: %w", err))
		}
		var rec ports.AuditRecord
		if json.Unmarshal(buf, &rec) == nil && f.matchResult(rec) {
			heads(head(rec))
		}
	}
	return s, nil
}

// Stats says what reading skipped.
func (s *scanned) Stats() Stats { return s.stats }

// Each calls fn with each record, in file order, stopping at fn's first error, which it
// returns. Lines appended after scan are left out.
func (s *scanned) Each(fn func(ports.AuditRecord) error) error {
	var again Stats // what the first reading counted already
	_, err := eachRecord(io.NewSectionReader(s.r, 0, s.end), s.f, &again, func(line span, rec *ports.AuditRecord) error {
		switch {
		case !s.f.holds(*rec):
		case rec.Outcome == ports.OutcomeStarted && !s.keep[line.off]:
		case s.f.matchResult(*rec):
			return fn(*rec)
		}
		return nil
	})
	return err
}

// eachRecord decodes each line of r that may be a record f selects by its run and tool
// (needles), calling fn with where the line is and stopping at fn's first error. Complete
// lines that do not decode are counted in stats as skipped, a last line without its newline
// that does not decode as torn. It returns the end of the last line decoded or skipped.
func eachRecord(r io.Reader, f Filter, stats *Stats, fn func(line span, rec *ports.AuditRecord) error) (int64, error) {
	var (
		br       = bufio.NewReaderSize(r, 64<<10)
		needles  = f.needles()
		off, end int64
	)
	for {
		line, err := br.ReadBytes('\n')
		complete := err == nil
		if err != nil && !errors.Is(err, io.EOF) {
			return end, fault.Wrap(fault.System, fmt.Errorf("read audit log: %w", err))
		}
		at := off
		off += int64(len(line))
		trimmed := bytes.TrimSpace(line)
		switch {
		case len(trimmed) == 0:
		case complete && !containsAll(line, needles):
			// Another run's or tool's record: not decoded (a run's page would otherwise
			// decode the whole log), only told from a damaged line.
			if trimmed[0] != '{' || trimmed[len(trimmed)-1] != '}' {
				stats.Skipped++
			}
		default:
			var rec ports.AuditRecord
			switch derr := json.Unmarshal(line, &rec); {
			case derr == nil:
				if err := fn(span{at, int64(len(line))}, &rec); err != nil {
					return off, err
				}
			case complete:
				stats.Skipped++
			default:
				stats.Torn = true
				return end, nil
			}
		}
		end = off
		if !complete {
			return end, nil
		}
	}
}

// head is record r without what a table of calls does not show: its arguments, meta,
// command, changes, error and recovery, most of its bytes.
func head(r ports.AuditRecord) ports.AuditRecord {
	r.Arguments, r.Meta, r.Command, r.Changes, r.Error, r.Recovery = nil, "", nil, nil, "", nil
	return r
}

// needles are what every line of a record f selects by its run and its tool holds: the run
// id's prefix and the tool's name themselves, which JSON writes as they are when they are
// made of letters, digits, '.', '_' and '-' (as every run id awf makes is, and tool names
// mostly are), whatever the spacing or order of the record's fields (a log rewritten by
// another tool). A value with a character JSON may escape gives no needle: its lines are all
// decoded.
func (f Filter) needles() [][]byte {
	var out [][]byte
	for _, v := range []string{f.RunID, f.Tool} {
		if v != "" && !strings.ContainsFunc(v, escapable) {
			out = append(out, []byte(v))
		}
	}
	return out
}

// escapable reports whether JSON may write c other than as itself.
func escapable(c rune) bool {
	return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-')
}

func containsAll(line []byte, needles [][]byte) bool {
	for _, n := range needles {
		if !bytes.Contains(line, n) {
			return false
		}
	}
	return true
}

// Fold drops each started record that a completion record of the same call follows (same run,
// step, call id, tool and depth; the oldest started record first when calls share an id).
// Records keep their order.
func Fold(recs []ports.AuditRecord) []ports.AuditRecord {
	var calls folder[int]
	drop := make([]bool, len(recs))
	for i, r := range recs {
		if r.Outcome == ports.OutcomeStarted {
			calls.start(r, i)
			continue
		}
		if i, ok := calls.end(r); ok {
			drop[i] = true
		}
	}
	out := recs[:0]
	for i, r := range recs {
		if !drop[i] {
			out = append(out, r)
		}
	}
	return out
}

// folder pairs each call's started record with the completion record that follows it: the
// call of a completion is the same run, step, call id, tool and depth, and of calls that
// share all of these the oldest started one. It keeps a V for each started record until its
// completion comes, under a digest of the call rather than its names, so that a log of many
// calls that never ended (awf killed and never resumed) costs a few dozen bytes for each.
type folder[V any] struct {
	first map[callKey]V   // the oldest started record of each call in flight
	later map[callKey][]V // the calls that came after it under the same key, oldest first
}

// callKey is the first 16 bytes of the SHA-256 of a call's run, step, call id, tool and
// depth, each string preceded by its length: two calls share one only if they are the same
// call, whatever a model chose as call ids (finding two that share a key takes some 2^64
// tries).
type callKey [16]byte

func keyOf(r ports.AuditRecord) callKey {
	var b []byte
	for _, s := range [...]string{r.RunID, r.Step, r.CallID, r.Tool} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	sum := sha256.Sum256(binary.AppendVarint(b, int64(r.Depth)))
	return callKey(sum[:16])
}

// start notes the started record r.
func (c *folder[V]) start(r ports.AuditRecord, v V) {
	if c.first == nil {
		c.first, c.later = map[callKey]V{}, map[callKey][]V{}
	}
	k := keyOf(r)
	if _, ok := c.first[k]; ok {
		c.later[k] = append(c.later[k], v)
		return
	}
	c.first[k] = v
}

// end settles the call of completion record r: it returns the V of its started record, if
// one is pending.
func (c *folder[V]) end(r ports.AuditRecord) (v V, ok bool) {
	k := keyOf(r)
	if v, ok = c.first[k]; !ok {
		return v, false
	}
	// A log of many calls keeps no key of the calls that ended.
	switch l := c.later[k]; len(l) {
	case 0:
		delete(c.first, k)
	case 1:
		c.first[k] = l[0]
		delete(c.later, k)
	default:
		c.first[k], c.later[k] = l[0], l[1:]
	}
	return v, true
}

// open returns the V of every started record whose call has not ended.
func (c *folder[V]) open() []V {
	var out []V
	for k, v := range c.first {
		out = append(append(out, v), c.later[k]...)
	}
	return out
}

// ReadFile reads the audit log at path; a missing file has no records. Errors are
// fault.System. It holds every record it returns: ScanFile does not.
func ReadFile(path string, f Filter) ([]ports.AuditRecord, Stats, error) {
	recs := []ports.AuditRecord{}
	stats, err := ScanFile(path, f, nil, nil, func(rec ports.AuditRecord) error {
		recs = append(recs, rec)
		return nil
	})
	return recs, stats, err
}

// ScanFile reads the audit log at path as scan does, calling heads, then start once (when not
// nil), then fn with each record; a missing file has no records. start is where a caller
// acts on what heads told it (a run prefix several runs share, the widths of a table) before
// the first record; its error, as fn's, stops the reading and is returned. Errors of reading
// are fault.System.
func ScanFile(path string, f Filter, heads func(ports.AuditRecord), start func() error, fn func(ports.AuditRecord) error) (Stats, error) {
	file, err := regfile.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Stats{}, callStart(start)
	}
	if err != nil {
		return Stats{}, fault.Wrap(fault.System, fmt.Errorf("audit log: %w", err))
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return Stats{}, fault.Wrap(fault.System, fmt.Errorf("audit log: %w", err))
	}
	s, err := scan(file, fi.Size(), f, heads)
	if err != nil {
		return Stats{}, err
	}
	if err := callStart(start); err != nil {
		return s.Stats(), err
	}
	err = s.Each(fn)
	return s.Stats(), err
}

func callStart(start func() error) error {
	if start == nil {
		return nil
	}
	return start()
}
