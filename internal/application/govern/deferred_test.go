package govern_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/awf-dev/awf/internal/application/approval"
	"github.com/awf-dev/awf/internal/domain/ports"
)

// TestDeferredApprovalIsNotAudited: an approver that will answer later (the temporal engine's
// durable wait) gets its error back through the governed path, and nothing is audited: the
// call was neither decided nor run. Asked again with an answer, the call runs and is audited.
func TestDeferredApprovalIsNotAudited(t *testing.T) {
	answer := ports.Answer("")
	asker := ports.ApproverFunc(func(context.Context, ports.ApprovalRequest) (ports.Answer, error) {
		if answer == "" {
			return "", fmt.Errorf("call waits: %w", ports.ErrApprovalDeferred)
		}
		return answer, nil
	})
	s := newSetup(t, options{approval: approval.Config{Approver: asker}}, shell())
	res, err := s.tools.Invoke(t.Context(), req("shell", map[string]any{"command": "make"}))
	if !errors.Is(err, ports.ErrApprovalDeferred) {
		t.Fatalf("Invoke error = %v, want the deferral", err)
	}
	if res.Succeeded() {
		t.Errorf("result = %+v, want a call that did not run", res)
	}
	if recs := s.audit.Records(); len(recs) != 0 {
		t.Errorf("audit = %+v, want nothing for an undecided call", recs)
	}
	answer = ports.AnswerYes
	res, err = s.tools.Invoke(t.Context(), req("shell", map[string]any{"command": "make"}))
	if err != nil || res.Output != "ran make" {
		t.Fatalf("Invoke with the answer = %+v, %v", res, err)
	}
	if recs := s.audit.Records(); len(recs) != 2 || recs[1].Outcome != ports.OutcomeOK || recs[1].Approval.By != ports.ByUser {
		t.Errorf("audit = %+v, want the started and ok records of a call approved by the user", recs)
	}
}
