package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
)

// Filter selects records; empty fields select everything.
type Filter struct {
	RunID string
	Tool  string
	// Decision is allow or deny: whether the call was refused (outcome denied) or not.
	Decision string
	// Outcome is ok, error, denied or timeout.
	Outcome string
	// Since keeps records at or after this time.
	Since time.Time
}

// Match reports whether rec is selected.
func (f Filter) Match(rec ports.AuditRecord) bool {
	switch {
	case f.RunID != "" && rec.RunID != f.RunID:
		return false
	case f.Tool != "" && rec.Tool != f.Tool:
		return false
	case f.Outcome != "" && rec.Outcome != f.Outcome:
		return false
	case f.Decision == ports.DecisionDeny && !rec.Denied():
		return false
	case f.Decision == ports.DecisionAllow && rec.Denied():
		return false
	case !f.Since.IsZero() && rec.Time.Before(f.Since):
		return false
	}
	return true
}

// Stats says what reading skipped.
type Stats struct {
	// Skipped counts complete lines that are not records (a damaged file).
	Skipped int
	// Torn is true when the file ends in an incomplete line (a write cut short by a crash),
	// which was ignored.
	Torn bool
}

// Read returns the records of r that f selects, in file order. A last line without its
// newline that does not decode is a torn write and is ignored; other lines that do not decode
// are skipped and counted.
func Read(r io.Reader, f Filter) ([]ports.AuditRecord, Stats, error) {
	var (
		recs  = []ports.AuditRecord{}
		stats Stats
		br    = bufio.NewReaderSize(r, 64<<10)
	)
	for {
		line, err := br.ReadBytes('\n')
		complete := err == nil
		if err != nil && !errors.Is(err, io.EOF) {
			return recs, stats, fault.Wrap(fault.System, fmt.Errorf("read audit log: %w", err))
		}
		if len(bytes.TrimSpace(line)) > 0 {
			var rec ports.AuditRecord
			switch derr := json.Unmarshal(line, &rec); {
			case derr == nil:
				if f.Match(rec) {
					recs = append(recs, rec)
				}
			case complete:
				stats.Skipped++
			default:
				stats.Torn = true
			}
		}
		if !complete {
			return recs, stats, nil
		}
	}
}

// ReadFile reads the audit log at path; a missing file has no records. Errors are
// fault.System.
func ReadFile(path string, f Filter) ([]ports.AuditRecord, Stats, error) {
	file, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return []ports.AuditRecord{}, Stats{}, nil
	}
	if err != nil {
		return nil, Stats{}, fault.Wrap(fault.System, fmt.Errorf("audit log: %w", err))
	}
	defer file.Close()
	return Read(file, f)
}
