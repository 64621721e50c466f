package govern_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/application/govern"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

func TestSecretValues(t *testing.T) {
	environ := []string{"GITHUB_TOKEN=ghp_x", "NPM_TOKEN=npm-long-token", "HOME=/root", "DB_PASS=pw-1", "EMPTY_TOKEN=", "OPENAI_API_KEY=sk-1"}
	p := &workflow.Policy{Env: workflow.EnvPolicy{Secret: []string{"*_TOKEN", "DB_PASS"}}}
	got := govern.SecretValues(p, []string{"OPENAI_API_KEY"}, environ)
	want := []string{"npm-long-token", "ghp_x", "pw-1", "sk-1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SecretValues (-want +got):\n%s", diff)
	}
	if got := govern.SecretValues(nil, nil, environ); len(got) != 0 {
		t.Errorf("SecretValues without names = %v, want none", got)
	}
}
