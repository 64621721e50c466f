package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/tool"
)

type plain struct{}

func (plain) Name() string                                         { return "plain" }
func (plain) Description(tool.Context) string                      { return "" }
func (plain) Parameters() json.RawMessage                          { return nil }
func (plain) Execute(context.Context, tool.Invocation) tool.Result { return tool.OK("") }

type canon struct {
	plain
	c   tool.Canonical
	err error
}

func (c canon) Canonical(map[string]any) (tool.Canonical, error) { return c.c, c.err }

func TestCanonicalOf(t *testing.T) {
	args := map[string]any{"path": "./a/../b"}
	resolved := tool.Canonical{Actions: []map[string]any{{"path": "/work/b"}}}
	tests := []struct {
		name string
		t    tool.Tool
		want tool.Canonical
	}{
		{"fallback to arguments", plain{}, tool.Canonical{Actions: []map[string]any{args}}},
		{"tool's form", canon{c: resolved}, resolved},
		{"error is opaque", canon{err: errors.New("does not parse")}, tool.Canonical{Actions: []map[string]any{args}, Opaque: "does not parse"}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, tool.CanonicalOf(tc.t, args)); diff != "" {
			t.Errorf("CanonicalOf(%s) (-want +got):\n%s", tc.name, diff)
		}
	}
}
