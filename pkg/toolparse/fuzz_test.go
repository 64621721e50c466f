package toolparse

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParse checks the properties every output must have, whatever the text: Parse does not
// panic; on error the Result is empty; otherwise every call has an id, a name from the allowed
// tools and arguments that are a JSON object, and content and reasoning are trimmed.
func FuzzParse(f *testing.F) {
	for _, tc := range parseTests {
		f.Add(tc.text, strings.Join(tc.opts.Tools, ","))
	}
	f.Fuzz(func(t *testing.T, text, toolList string) {
		var opts Options
		if toolList != "" {
			opts.Tools = strings.Split(toolList, ",")
			opts.Schemas = make(map[string]json.RawMessage)
			for _, name := range opts.Tools {
				opts.Schemas[name] = json.RawMessage(typedSchema)
			}
		}
		res, err := Parse(text, opts)
		if err != nil {
			if diff := cmp.Diff(Result{}, res); diff != "" {
				t.Fatalf("Parse(%q) = error %v and a result (-want +got):\n%s", text, err, diff)
			}
			return
		}
		for _, c := range res.Calls {
			checkCall(t, text, c, opts)
		}
		if strings.TrimSpace(res.Content) != res.Content || strings.TrimSpace(res.Reasoning) != res.Reasoning {
			t.Errorf("Parse(%q): content %q or reasoning %q not trimmed", text, res.Content, res.Reasoning)
		}
	})
}

func checkCall(t *testing.T, text string, c Call, opts Options) {
	t.Helper()
	switch {
	case c.Name == "":
		t.Errorf("Parse(%q): call %+v has no name", text, c)
	case c.ID == "":
		t.Errorf("Parse(%q): call %+v has no id", text, c)
	case len(c.Arguments) == 0 || c.Arguments[0] != '{' || !json.Valid(c.Arguments):
		t.Errorf("Parse(%q): call %s arguments %q are not a JSON object", text, c.Name, c.Arguments)
	case len(opts.Tools) > 0 && !slices.Contains(opts.Tools, c.Name):
		t.Errorf("Parse(%q): call of %q, not in %q", text, c.Name, opts.Tools)
	}
}
