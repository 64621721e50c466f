package webui

import (
	"net/http"
	"slices"

	auditcmd "github.com/awf-dev/awf/cmd/awf/internal/cmd/audit"
	"github.com/awf-dev/awf/internal/domain/ports"
	auditlog "github.com/awf-dev/awf/internal/infrastructure/audit"
)

// auditView is the audit page: the records `awf audit` shows for the same filters, newest
// first.
type auditView struct {
	Query   auditcmd.Query
	Rows    []auditRow
	Path    string
	Stats   auditlog.Stats
	Problem string
	// Limit is how many records are shown at most, the newest; Hidden how many more matched.
	Limit, Hidden int
}

// auditRow is one record, linked to its run and call.
type auditRow struct {
	ports.AuditRecord
	Decision, What, Link string
}

// AuditLimit is the most records the audit page shows at once (the newest).
const AuditLimit = 2000

func (s *Server) auditPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := &auditView{Path: s.cfg.AuditLog, Limit: AuditLimit, Query: auditcmd.Query{
		RunID: q.Get("run"), Tool: q.Get("tool"), Decision: q.Get("decision"), Outcome: q.Get("outcome"), Since: q.Get("since"),
	}}
	filter, err := v.Query.Filter(s.cfg.Now())
	if err != nil {
		v.Problem = err.Error()
		s.renderCode(w, r, http.StatusBadRequest, "audit", "Audit", v)
		return
	}
	// The newest records, kept as the log is read: a ring of the last AuditLimit.
	var (
		recs  = make([]ports.AuditRecord, 0, min(AuditLimit, 64))
		total int
	)
	stats, err := auditlog.ScanFile(s.cfg.AuditLog, filter, nil, nil, func(rec ports.AuditRecord) error {
		if len(recs) < AuditLimit {
			recs = append(recs, rec)
		} else {
			recs[total%AuditLimit] = rec
		}
		total++
		return nil
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v.Stats = stats
	if total > AuditLimit { // the oldest kept is where the next would go
		first := total % AuditLimit
		recs = slices.Concat(recs[first:], recs[:first])
		v.Hidden = total - AuditLimit
	}
	slices.Reverse(recs)
	for _, rec := range recs {
		row := auditRow{AuditRecord: rec, Decision: auditcmd.Decision(rec), What: auditcmd.What(rec)}
		if rec.RunID != "" {
			row.Link = "/runs/" + rec.RunID
			if rec.Step != "" && rec.CallID != "" {
				row.Link += "#" + CallAnchor(rec.Step, rec.CallID)
			}
		}
		v.Rows = append(v.Rows, row)
	}
	s.render(w, r, "audit", "Audit", v)
}
