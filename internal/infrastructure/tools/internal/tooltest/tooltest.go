// Package tooltest holds the assertions the built-in tools' tests share: run a tool with
// arguments, and require a success (returning its output) or an error (with fragments).
package tooltest

import (
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/domain/tool"
)

// Call runs tl with arguments a, as call "call_1".
func Call(t testing.TB, tl tool.Tool, a map[string]any) tool.Result {
	t.Helper()
	return tl.Execute(t.Context(), tool.Invocation{ID: "call_1", Args: a})
}

// WantOK fails unless r succeeded, and returns its output.
func WantOK(t testing.TB, r tool.Result, what string) string {
	t.Helper()
	if !r.Succeeded() {
		t.Fatalf("%s: error result %q, want success", what, r.Error)
	}
	return r.Output
}

// WantError fails unless r is an error result containing every fragment.
func WantError(t testing.TB, r tool.Result, what string, fragments ...string) {
	t.Helper()
	if r.Succeeded() {
		t.Fatalf("%s: succeeded with output %q, want an error", what, r.Output)
	}
	for _, f := range fragments {
		if !strings.Contains(r.Error, f) {
			t.Errorf("%s: error %q does not contain %q", what, r.Error, f)
		}
	}
}
