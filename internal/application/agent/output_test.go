package agent_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports/portstest"
)

var reviewSchema = map[string]any{
	"type":     "object",
	"required": []any{"approved", "issues"},
	"properties": map[string]any{
		"approved": map[string]any{"type": "boolean"},
		"issues":   map[string]any{"type": "integer"},
	},
}

func TestJSONOutput(t *testing.T) {
	tests := []struct {
		name     string
		schema   map[string]any
		replies  []portstest.Reply
		output   string
		response any
		err      string
	}{{
		name:     "plain",
		replies:  []portstest.Reply{portstest.Text(`{"approved": true, "issues": 0}`)},
		output:   `{"approved": true, "issues": 0}`,
		response: map[string]any{"approved": true, "issues": int64(0)},
	}, {
		name:     "in a code fence",
		schema:   reviewSchema,
		replies:  []portstest.Reply{portstest.Text("Here it is:\n```json\n{\"approved\": false, \"issues\": 2}\n```")},
		output:   `{"approved": false, "issues": 2}`,
		response: map[string]any{"approved": false, "issues": int64(2)},
	}, {
		name:     "corrected once",
		schema:   reviewSchema,
		replies:  []portstest.Reply{portstest.Text("Looks fine to me."), portstest.Text(`{"approved": true, "issues": 0}`)},
		output:   `{"approved": true, "issues": 0}`,
		response: map[string]any{"approved": true, "issues": int64(0)},
	}, {
		name:    "schema violation corrected",
		schema:  reviewSchema,
		replies: []portstest.Reply{portstest.Text(`{"approved": "yes"}`), portstest.Text(`[1.5]`)},
		err:     "does not conform after one correction: it does not conform to the output schema",
	}, {
		name:    "still not JSON",
		replies: []portstest.Reply{portstest.Text("no"), portstest.Text("still no")},
		err:     "it is not valid JSON",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.replies...)
			a := step()
			a.OutputFormat, a.OutputSchema = "json", tc.schema
			out, err := h.run(a)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || fault.KindOf(err) != fault.Execution {
					t.Fatalf("err = %v, want an execution error containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.Output != tc.output {
				t.Errorf("Output = %q, want %q", out.Output, tc.output)
			}
			if diff := cmp.Diff(tc.response, out.Response); diff != "" {
				t.Errorf("Response (-want +got):\n%s", diff)
			}
			reqs := h.prov.Requests()
			if !strings.Contains(reqs[0].System, "single JSON value") {
				t.Errorf("System = %q, want the JSON instructions", reqs[0].System)
			}
			if tc.schema != nil && !strings.Contains(reqs[0].System, `"approved"`) {
				t.Errorf("System = %q, want the schema", reqs[0].System)
			}
			if len(reqs) == 2 {
				last := reqs[1].Messages[len(reqs[1].Messages)-1]
				if last.Role != "user" || !strings.Contains(last.Content, "Reply again with only the JSON value") {
					t.Errorf("correction = %+v", last)
				}
			}
		})
	}
}

func TestBadOutputSchemaIsAWorkflowError(t *testing.T) {
	h := newHarness(t, portstest.Text(`{}`))
	a := step()
	a.OutputFormat, a.OutputSchema = "json", map[string]any{"type": 12}
	_, err := h.run(a)
	if fault.KindOf(err) != fault.Invalid {
		t.Errorf("err = %v (kind %v), want an invalid-workflow error", err, fault.KindOf(err))
	}
}
