package govern

import (
	"path"
	"slices"
	"strings"

	"github.com/awf-dev/awf/internal/domain/workflow"
)

// SecretValues returns the values to mask in audit records: those of the environment
// variables the policy marks secret (sandbox.env.secret, names or globs such as "*_TOKEN") and
// of the extra names (the providers' api_key_env), looked up in environ ("K=V" entries).
// Empty values are left out; the result is sorted longest first, so that a secret containing
// another is masked whole.
func SecretValues(p *workflow.Policy, extra []string, environ []string) []string {
	patterns := slices.Clone(extra)
	if p != nil {
		patterns = append(patterns, p.Env.Secret...)
	}
	var values []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || value == "" {
			continue
		}
		for _, pat := range patterns {
			if m, err := path.Match(pat, name); pat == name || (err == nil && m) {
				values = append(values, value)
				break
			}
		}
	}
	slices.SortFunc(values, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	return slices.Compact(values)
}
