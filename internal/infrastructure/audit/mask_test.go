package audit

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMaskText(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"openai key", "key sk-proj-abcdefghijklmnop1234 end", "key *** end"},
		{"anthropic key", "sk-ant-api03-AAAAAAAAAAAAAAAAAAAA", "***"},
		{"github token", "ghp_0123456789abcdefghijABCDEFGHIJ012345", "***"},
		{"github pat", "github_pat_11AAAAAAA0aaaaaaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbbb", "***"},
		{"slack", "xoxb-1234567890-abcdefghij", "***"},
		{"aws key id", "AKIAIOSFODNN7EXAMPLE", "***"},
		{"jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "***"},
		{"bearer", `curl -H "Authorization: Bearer abcdefgh12345678" x`, `curl -H "Authorization: ***" x`},
		{"bearer alone", "Bearer abcdefgh12345678", "Bearer ***"},
		{"cookie header", "Cookie: session=abc; theme=dark", "Cookie: ***"},
		{"api key header", `-H 'X-Api-Key: s3cr3tvalue'`, `-H 'X-Api-Key: ***'`},
		{"password in query", "https://x/login?user=a&password=hunter2&x=1", "https://x/login?user=a&password=***&x=1"},
		{"key value", `{"api_key": "abc123"}`, `{"api_key": "***"}`},
		{"token flag", "gh auth login --with-token tok123 --hostname x", "gh auth login --with-token *** --hostname x"},
		{"url userinfo", "git clone https://user:pa55word@example.com/repo", "git clone https://user:***@example.com/repo"},
		{"private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", "***"},
		{"numbers kept", "max_tokens=100", "max_tokens=100"},
		{"plain text kept", "git status; cat README.md", "git status; cat README.md"},
		{"task name kept", "run task-manager-1234567890123456", "run task-manager-1234567890123456"},
		{"secret value", "echo my-db-pass-42 > x", "echo *** > x"},
	}
	m := newMasker([]string{"my-db-pass-42", "ab"})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := m.text(tc.in); got != tc.want {
				t.Errorf("mask(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestMaskArguments(t *testing.T) {
	m := newMasker([]string{"envsecret"})
	in := map[string]any{
		"url":        "https://api.example.com/x",
		"headers":    map[string]any{"Authorization": "Bearer abc", "Cookie": "a=b", "X-Api-Key": "k", "Accept": "json"},
		"body":       `{"password": "p1"}`,
		"command":    "echo envsecret",
		"token":      "t",
		"nested":     []any{map[string]any{"client_secret": "s", "count": 3}},
		"max_tokens": 100,
		"env":        map[string]string{"GITHUB_TOKEN": "x", "HOME": "/root"},
	}
	want := map[string]any{
		"url":        "https://api.example.com/x",
		"headers":    map[string]any{"Authorization": "***", "Cookie": "***", "X-Api-Key": "***", "Accept": "json"},
		"body":       `{"password": "***"}`,
		"command":    "echo ***",
		"token":      "***",
		"nested":     []any{map[string]any{"client_secret": "***", "count": 3}},
		"max_tokens": 100,
		"env":        map[string]any{"GITHUB_TOKEN": "***", "HOME": "/root"},
	}
	if diff := cmp.Diff(want, m.args(in, 100)); diff != "" {
		t.Errorf("masked arguments (-want +got):\n%s", diff)
	}
	if in["token"] != "t" {
		t.Error("masking changed the caller's arguments")
	}
}

func TestCut(t *testing.T) {
	long := strings.Repeat("é", 10) // 20 bytes
	got := cut(long, 5)
	if want := "éé…[20 bytes]"; got != want {
		t.Errorf("cut(%q, 5) = %q, want %q", long, got, want)
	}
	if got := cut("short", 10); got != "short" {
		t.Errorf("cut(short, 10) = %q", got)
	}
}
