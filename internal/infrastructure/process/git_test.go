package process

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGitEnv(t *testing.T) {
	top := t.TempDir()
	sub := filepath.Join(top, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(top, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		env   []string
		dir   string
		hooks bool
		want  []string
	}{
		{"top, hooks off", []string{"PATH=/bin"}, top, false, []string{"PATH=/bin",
			"GIT_CONFIG_KEY_0=safe.directory", "GIT_CONFIG_VALUE_0=" + top,
			"GIT_CONFIG_KEY_1=core.hooksPath", "GIT_CONFIG_VALUE_1=" + os.DevNull,
			"GIT_CONFIG_KEY_2=core.fsmonitor", "GIT_CONFIG_VALUE_2=false", "GIT_CONFIG_COUNT=3"}},
		{"subdirectory, hooks allowed", nil, sub, true, []string{
			"GIT_CONFIG_KEY_0=safe.directory", "GIT_CONFIG_VALUE_0=" + sub,
			"GIT_CONFIG_KEY_1=safe.directory", "GIT_CONFIG_VALUE_1=" + top, "GIT_CONFIG_COUNT=2"}},
		// The policy's own entries stay, before these, which win for single-valued keys.
		{"after the policy's entries", []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.hooksPath", "GIT_CONFIG_VALUE_0=hooks"}, top, false, []string{
			"GIT_CONFIG_KEY_0=core.hooksPath", "GIT_CONFIG_VALUE_0=hooks",
			"GIT_CONFIG_KEY_1=safe.directory", "GIT_CONFIG_VALUE_1=" + top,
			"GIT_CONFIG_KEY_2=core.hooksPath", "GIT_CONFIG_VALUE_2=" + os.DevNull,
			"GIT_CONFIG_KEY_3=core.fsmonitor", "GIT_CONFIG_VALUE_3=false", "GIT_CONFIG_COUNT=4"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := GitEnv(slices.Clone(tc.env), tc.dir, tc.hooks)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("GitEnv mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
