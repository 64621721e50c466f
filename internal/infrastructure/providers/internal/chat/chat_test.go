package chat

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
)

func TestArguments(t *testing.T) {
	tests := []struct {
		raw  string
		want string
	}{
		{``, `{}`},
		{`null`, `{}`},
		{`""`, `{}`},
		{`"  "`, `{}`},
		{`{"city": "Paris", "n": [1, 2]}`, `{"city":"Paris","n":[1,2]}`},
		{`"{\"city\":\"Paris\"}"`, `{"city":"Paris"}`},
		{`" {\"city\": \"Paris\"} "`, `{"city": "Paris"}`},
		{`"\"{\\\"city\\\":\\\"Oslo\\\"}\""`, `{"city":"Oslo"}`},
		{`"{\"city\":"`, `{"city":`},
		{`"not json"`, `not json`},
		{`"\"just a string\""`, `"just a string"`},
		{`[1,2]`, `[1,2]`},
	}
	for _, tc := range tests {
		if got := Arguments(json.RawMessage(tc.raw)); got != tc.want {
			t.Errorf("Arguments(%s) = %s, want %s", tc.raw, got, tc.want)
		}
	}
}

func TestObject(t *testing.T) {
	tests := []struct{ args, want string }{
		{`{"a":1}`, `{"a":1}`},
		{` {"a":1} `, `{"a":1}`},
		{``, `{}`},
		{`[1]`, `{}`},
		{`{"a":`, `{}`},
	}
	for _, tc := range tests {
		if got := string(Object(tc.args)); got != tc.want {
			t.Errorf("Object(%q) = %s, want %s", tc.args, got, tc.want)
		}
	}
}

func TestFinish(t *testing.T) {
	tests := []struct {
		reason string
		calls  bool
		want   string
	}{
		{"", false, "stop"},
		{"", true, "tool_calls"},
		{"stop", true, "tool_calls"},
		{"stop", false, "stop"},
		{"length", true, "length"},
		{"tool_calls", true, "tool_calls"},
		{"tool_calls", false, "tool_calls"},
	}
	for _, tc := range tests {
		if got := Finish(tc.reason, tc.calls); got != tc.want {
			t.Errorf("Finish(%q, %v) = %q, want %q", tc.reason, tc.calls, got, tc.want)
		}
	}
}

func TestMerge(t *testing.T) {
	got, err := Merge("p", []byte(`{"model":"m","messages":[]}`), map[string]any{"temperature": 0.5, "stop": []string{"<b>"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"messages":[],"model":"m","stop":["<b>"],"temperature":0.5}`; string(got) != want {
		t.Errorf("Merge = %s, want %s", got, want)
	}
	if _, err := Merge("p", []byte(`{"model":"m"}`), map[string]any{"model": "x"}); err == nil || fault.KindOf(err) != fault.Invalid {
		t.Errorf("Merge over a set field = %v, want an invalid error", err)
	}
	if _, err := Merge("p", []byte(`{}`), map[string]any{"f": func() {}}); err == nil || fault.KindOf(err) != fault.Invalid {
		t.Errorf("Merge of a function = %v, want an invalid error", err)
	}
}

func TestKeyNeverInError(t *testing.T) {
	const secret = "sk-secret\nInjected: yes"
	_, err := Key("openai", secret, "OPENAI_API_KEY")
	if err == nil || fault.KindOf(err) != fault.Usage {
		t.Fatalf("Key with a line break = %v, want a usage error", err)
	}
	if want := "openai: the API key in OPENAI_API_KEY contains a line break"; err.Error() != want {
		t.Errorf("Key = %q, want %q", err, want)
	}
	if k, err := Key("openai", "  sk-abc \n", "X"); err != nil || k != "sk-abc" {
		t.Errorf(`Key("  sk-abc \n") = %q, %v; want "sk-abc"`, k, err)
	}
}

func TestRetriesAndTimeout(t *testing.T) {
	for _, tc := range []struct{ in, want int }{{0, 3}, {-1, 0}, {5, 5}} {
		if got := Retries(tc.in); got != tc.want {
			t.Errorf("Retries(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct{ in, want time.Duration }{{0, DefaultTimeout}, {-1, 0}, {time.Second, time.Second}} {
		if got := Timeout(tc.in); got != tc.want {
			t.Errorf("Timeout(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestStrings(t *testing.T) {
	for _, tc := range []struct {
		in any
		ok bool
	}{{"a", true}, {[]string{"a"}, true}, {[]any{"a", "b"}, true}, {[]any{"a", 1}, false}, {3, false}} {
		if _, ok := Strings(tc.in); ok != tc.ok {
			t.Errorf("Strings(%v) ok = %v, want %v", tc.in, ok, tc.ok)
		}
	}
}
