package portstest

import (
	"context"
	"sync"

	"github.com/awf-dev/awf/internal/domain/ports"
)

// AuditLog is an in-memory ports.AuditSink that keeps every record as given (unmasked). Set
// Err to make Record fail. Safe for concurrent use.
type AuditLog struct {
	mu   sync.Mutex
	recs []ports.AuditRecord
	Err  error
}

var _ ports.AuditSink = (*AuditLog)(nil)

// Record keeps rec, or returns Err.
func (l *AuditLog) Record(_ context.Context, rec ports.AuditRecord) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.Err != nil {
		return l.Err
	}
	l.recs = append(l.recs, rec)
	return nil
}

// Records returns a copy of the records kept so far, in order.
func (l *AuditLog) Records() []ports.AuditRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]ports.AuditRecord(nil), l.recs...)
}
