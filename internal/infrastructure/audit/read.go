package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
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
// is left out when its call's completion record follows it (Fold), so the started records
// that remain are calls that have not ended, or that awf died in. A last line without its
// newline that does not decode is a torn write and is ignored; other lines that do not decode
// are skipped and counted.
func Read(r io.Reader, f Filter) ([]ports.AuditRecord, Stats, error) {
	var (
		recs  = []ports.AuditRecord{}
		stats Stats
		br    = bufio.NewReaderSize(r, 64<<10)
		run   = runNeedle(f.RunID)
	)
	for {
		line, err := br.ReadBytes('\n')
		complete := err == nil
		if err != nil && !errors.Is(err, io.EOF) {
			return recs, stats, fault.Wrap(fault.System, fmt.Errorf("read audit log: %w", err))
		}
		trimmed := bytes.TrimSpace(line)
		if run != nil && complete && len(trimmed) > 0 && !bytes.Contains(line, run) {
			// Another run's record: not decoded (a run's page would otherwise decode the
			// whole log), only told from a damaged line.
			if trimmed[0] != '{' || trimmed[len(trimmed)-1] != '}' {
				stats.Skipped++
			}
			continue
		}
		if len(trimmed) > 0 {
			var rec ports.AuditRecord
			switch derr := json.Unmarshal(line, &rec); {
			case derr == nil:
				if f.holds(rec) {
					recs = append(recs, rec)
				}
			case complete:
				stats.Skipped++
			default:
				stats.Torn = true
			}
		}
		if !complete {
			return selectResult(Fold(recs), f), stats, nil
		}
	}
}

// runNeedle is what every line of a record of a run whose id starts with prefix holds: the
// prefix itself, which JSON writes as is when it is made of letters, digits, '.', '_' and '-'
// (as every run id awf makes is), whatever the spacing or order of the record's fields (a log
// rewritten by another tool). Nil when no run is asked for, or the prefix has a character
// JSON may escape: every line is then decoded.
func runNeedle(prefix string) []byte {
	if prefix == "" {
		return nil
	}
	for _, c := range prefix {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return nil
		}
	}
	return []byte(prefix)
}

// Fold drops each started record that a completion record of the same call follows (same run,
// step, call id, tool and depth; the oldest started record first when calls share an id).
// Records keep their order.
func Fold(recs []ports.AuditRecord) []ports.AuditRecord {
	type callKey struct {
		run, step, id, tool string
		depth               int
	}
	pending := map[callKey][]int{}
	drop := make([]bool, len(recs))
	for i, r := range recs {
		k := callKey{r.RunID, r.Step, r.CallID, r.Tool, r.Depth}
		if r.Outcome == ports.OutcomeStarted {
			pending[k] = append(pending[k], i)
			continue
		}
		if p := pending[k]; len(p) > 0 {
			drop[p[0]] = true
			pending[k] = p[1:]
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

// selectResult keeps the records whose outcome and decision f selects.
func selectResult(recs []ports.AuditRecord, f Filter) []ports.AuditRecord {
	if f.Outcome == "" && f.Decision == "" {
		return recs
	}
	out := recs[:0]
	for _, r := range recs {
		if f.matchResult(r) {
			out = append(out, r)
		}
	}
	return out
}

// ReadFile reads the audit log at path; a missing file has no records. Errors are
// fault.System.
func ReadFile(path string, f Filter) ([]ports.AuditRecord, Stats, error) {
	file, err := regfile.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return []ports.AuditRecord{}, Stats{}, nil
	}
	if err != nil {
		return nil, Stats{}, fault.Wrap(fault.System, fmt.Errorf("audit log: %w", err))
	}
	defer file.Close()
	return Read(file, f)
}
