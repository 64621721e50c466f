package audit

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// Masked replaces a secret in the audit log.
const Masked = "***"

// minSecret is the shortest secret value masked by value: shorter ones would mask ordinary
// text everywhere.
const minSecret = 4

// Token shapes masked wherever they appear.
var tokenShapes = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(strings.Join([]string{
		`\bsk-[A-Za-z0-9_-]{16,}`,                                      // OpenAI, Anthropic (sk-ant-...), many others
		`\bgh[pousr]_[A-Za-z0-9]{30,}`,                                 // GitHub tokens
		`\bgithub_pat_[A-Za-z0-9_]{30,}`,                               // GitHub fine-grained tokens
		`\bxox[abposr]-[A-Za-z0-9-]{10,}`,                              // Slack
		`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`,                                // AWS access key ids
		`\bglpat-[A-Za-z0-9_-]{20,}`,                                   // GitLab
		`\bAIza[0-9A-Za-z_-]{35}`,                                      // Google API keys
		`\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`, // JWTs
		`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)`,
	}, "|"))
})

const credentialWords = `(?:password|passwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credential)`

// Credentials introduced by a scheme or a header name, kept up to the value.
var (
	// "Bearer abc", "Basic abc" (the scheme stays, the credential goes).
	authScheme = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{8,}`) })
	// "Authorization: anything up to the end of the line or quote".
	headerLine = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b((?:proxy-)?authorization|(?:set-)?cookie)(\s*[:=]\s*)([^\r\n"']+)`)
	})
	// "password=x", "api_key: x", "X-Api-Key: x" in commands, URLs and text, and
	// "--token x" in commands.
	keyValue = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b([a-z0-9_-]*` + credentialWords + `[a-z0-9_-]*)(["']?\s*[:=]\s*["']?)([^\s"'&,;]+)`)
	})
	flagValue = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(\s--?[a-z0-9_-]*` + credentialWords + `[a-z0-9_-]*)(\s+)([^\s"'&,;-][^\s"'&,;]*)`)
	})
	// URL userinfo: scheme://user:password@host.
	userinfo = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://[^/\s:@]*):([^/\s@]+)@`) })
)

// masker masks one record's secrets.
type masker struct {
	secrets []string
}

func newMasker(secrets []string) masker {
	kept := make([]string, 0, len(secrets))
	for _, s := range secrets {
		if len(s) >= minSecret {
			kept = append(kept, s)
		}
	}
	return masker{secrets: kept}
}

// text masks secret values, token shapes and credentials in s. Each pattern runs only when
// a cheap substring test says it may match: Go's regexps are slow on long text.
func (m masker) text(s string) string {
	if s == "" {
		return s
	}
	for _, sec := range m.secrets {
		s = strings.ReplaceAll(s, sec, Masked)
	}
	if containsAny(s, tokenPrefixes) {
		s = tokenShapes().ReplaceAllString(s, Masked)
	}
	lower := strings.ToLower(s)
	if containsAny(lower, []string{"authorization", "cookie"}) {
		s = headerLine().ReplaceAllString(s, "${1}${2}"+Masked)
	}
	if containsAny(lower, []string{"bearer", "basic"}) {
		s = authScheme().ReplaceAllString(s, "${1}${2}"+Masked)
	}
	if containsAny(lower, credentialHints) {
		s = keyValue().ReplaceAllStringFunc(s, func(match string) string { return maskValue(keyValue(), match) })
		s = flagValue().ReplaceAllStringFunc(s, func(match string) string { return maskValue(flagValue(), match) })
	}
	if strings.Contains(s, "://") && strings.Contains(s, "@") {
		s = userinfo().ReplaceAllString(s, "${1}:"+Masked+"@")
	}
	return s
}

// Substrings without which the patterns cannot match.
var (
	tokenPrefixes   = []string{"sk-", "gh", "github_pat_", "xox", "AKIA", "ASIA", "glpat-", "AIza", "eyJ", "PRIVATE KEY"}
	credentialHints = []string{"passw", "secret", "token", "key", "credential"}
)

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// maskValue masks the value (third group) of one match of re unless it is already masked
// or is a number (max_tokens=100).
func maskValue(re *regexp.Regexp, match string) string {
	sub := re.FindStringSubmatch(match)
	if sub[3] == Masked || strings.HasPrefix(sub[3], Masked) || isNumber(sub[3]) {
		return match
	}
	return sub[1] + sub[2] + Masked
}

func isNumber(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

var keyNormaliser = strings.NewReplacer("-", "", "_", "", " ", "")

// sensitiveKey reports whether an argument or header name says its value is a credential.
func sensitiveKey(k string) bool {
	n := keyNormaliser.Replace(strings.ToLower(k))
	switch n {
	case "auth", "pwd", "pass", "cookie", "setcookie", "authorization", "proxyauthorization":
		return true
	}
	for _, part := range []string{"password", "passwd", "secret", "token", "apikey", "accesskey", "privatekey", "credential", "sessionid"} {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}

// args returns a masked copy of a call's arguments, with strings longer than max cut.
func (m masker) args(args map[string]any, max int) map[string]any {
	if args == nil {
		return nil
	}
	out, _ := m.value(args, max).(map[string]any)
	return out
}

func (m masker) value(v any, max int) any {
	switch v := v.(type) {
	case string:
		return cut(m.text(v), max)
	case map[string]any:
		return maskMap(m, v, max)
	case []any:
		return maskList(m, v, max)
	case map[string]string:
		return maskMap(m, v, max)
	case []string:
		return maskList(m, v, max)
	case nil, bool, int, int64, float64, json.Number:
		return v
	}
	// Anything else is masked in its JSON form, or its printed form if it has none.
	b, err := json.Marshal(v)
	if err != nil {
		return cut(m.text(fmt.Sprint(v)), max)
	}
	var decoded any
	if err := json.Unmarshal(b, &decoded); err != nil {
		return cut(m.text(string(b)), max)
	}
	return m.value(decoded, max)
}

// maskMap masks a mapping entry by entry (see entry).
func maskMap[V any](m masker, v map[string]V, max int) map[string]any {
	out := make(map[string]any, len(v))
	for k, e := range v {
		out[k] = m.entry(k, e, max)
	}
	return out
}

// maskList masks a list item by item.
func maskList[V any](m masker, v []V, max int) []any {
	out := make([]any, len(v))
	for i, e := range v {
		out[i] = m.value(e, max)
	}
	return out
}

// entry masks the value of a key named like a credential whole (unless it is a number or a
// boolean), and anything else as a value.
func (m masker) entry(k string, v any, max int) any {
	if sensitiveKey(k) {
		switch v.(type) {
		case nil, bool, int, int64, float64, json.Number:
			return v
		}
		return Masked
	}
	return m.value(v, max)
}

// cut shortens s to at most max bytes on a rune boundary, noting the full size.
func cut(s string, max int) string {
	if max <= 0 || len(s) <= max {
		return s
	}
	end := max
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return fmt.Sprintf("%s…[%d bytes]", s[:end], len(s))
}
