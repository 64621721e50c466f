package command

import (
	"testing"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// line200 is a 200-character line of the kind an agent sends.
const line200 = `cd src && timeout 60 go test ./... 2>&1 | tee ../t.log | grep -v '^ok' ; git -c color.ui=never diff --stat | sed -n '1,20p' ; echo "$(git rev-parse HEAD)" ; sh -c 'ls -la | head -5' ; rg -n TODO .`

// BenchmarkCallCheck is what a shell call pays before its process starts: the allowlist of
// the policy narrowed by the tool's restrictions, then the whole-line check.
func BenchmarkCallCheck(b *testing.B) {
	cfg := Config{Policy: &workflow.Policy{Commands: []string{"go", "git", "grep", "tee", "sed", "ls", "head", "rg", "sh", "cat"}},
		Restrictions: &workflow.Restrictions{Commands: []string{"go", "git", "grep", "tee", "sed", "ls", "head", "rg", "sh"}}}
	req := ports.ProcessRequest{Script: line200, Dir: "/work/ws"}
	for b.Loop() {
		if res, refused := cfg.check("shell", req, nil); refused {
			b.Fatal(res.Error)
		}
	}
}

func TestCallCheckRule(t *testing.T) {
	cfg := Config{Policy: &workflow.Policy{Commands: []string{"ls", "cat"}}, Restrictions: &workflow.Restrictions{Commands: []string{"ls"}}}
	for script, rule := range map[string]string{"ls; cat x": "restrictions.commands", "ls; curl x": "sandbox.commands", "eval ls": "eval"} {
		res, refused := cfg.check("shell", ports.ProcessRequest{Script: script, Dir: "/w"}, nil)
		if !refused || res.Refusal == nil || res.Refusal.Rule != rule || res.Refusal.Layer != CheckLayer || !res.Denied {
			t.Errorf("%q: %+v, want refused by %s", script, res, rule)
		}
	}
	if _, refused := (Config{Policy: &workflow.Policy{}}).check("shell", ports.ProcessRequest{Script: "curl x; eval y", Dir: "/w"}, nil); refused {
		t.Error("no allowlist: refused, want allowed")
	}
}
