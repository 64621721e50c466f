package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/awf-dev/awf/internal/bom/bomtest"
	"github.com/awf-dev/awf/internal/domain/fault"
)

func TestResolvePrecedence(t *testing.T) {
	dir := t.TempDir()
	project := filepath.Join(dir, "project.yaml")
	user := filepath.Join(dir, "user.yaml")
	os.WriteFile(project, []byte("state_dir: from-project\nproviders:\n  local: {type: openai, model: p}\n"), 0o600)
	os.WriteFile(user, []byte("state_dir: from-user\nlog_level: debug\nproviders:\n  local: {type: ollama}\n  other: {type: anthropic}\n"), 0o600)
	pl, err := FromFile(project)
	if err != nil {
		t.Fatal(err)
	}
	ul, err := FromFile(user)
	if err != nil {
		t.Fatal(err)
	}
	env := FromEnv(func(k string) string { return map[string]string{"AWF_LOG_FORMAT": "json"}[k] })
	flags := Layer{Source: "flag --state-dir", StateDir: ptr("from-flag")}

	c := Resolve(flags, env, pl, ul, Defaults())
	checks := []struct{ got, want string }{
		{c.StateDir, "from-flag"}, {c.Sources["state_dir"], "flag --state-dir"},
		{c.LogFormat, "json"}, {c.LogLevel, "debug"}, {c.Sources["log_level"], user},
		{c.AuditLog, filepath.Join(".awf", "audit.jsonl")},
		{c.Providers["local"].Type, "openai"}, {c.Providers["other"].Type, "anthropic"},
	}
	for i, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("check %d: got %q, want %q", i, ck.got, ck.want)
		}
	}
	c = Resolve(env, pl, ul, Defaults())
	if c.StateDir != "from-project" {
		t.Errorf("without flag: state_dir = %q, want from-project", c.StateDir)
	}
}

func TestFromFileErrors(t *testing.T) {
	dir := t.TempDir()
	if l, err := FromFile(filepath.Join(dir, "missing.yaml")); err != nil || l.StateDir != nil {
		t.Errorf("missing file: %+v, %v", l, err)
	}
	empty := filepath.Join(dir, "empty.yaml")
	os.WriteFile(empty, nil, 0o600)
	if _, err := FromFile(empty); err != nil {
		t.Errorf("empty file: %v", err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("stat_dir: x\n"), 0o600)
	_, err := FromFile(bad)
	if err == nil || fault.KindOf(err) != fault.Usage || !strings.Contains(err.Error(), "stat_dir") {
		t.Errorf("unknown key: err = %v (kind %v)", err, fault.KindOf(err))
	}
}

func TestUserFile(t *testing.T) {
	env := map[string]string{"HOME": "/h"}
	if got := UserFile(func(k string) string { return env[k] }); got != "/h/.config/awf/config.yaml" {
		t.Errorf("UserFile = %q", got)
	}
	env["XDG_CONFIG_HOME"] = "/x"
	if got := UserFile(func(k string) string { return env[k] }); got != "/x/awf/config.yaml" {
		t.Errorf("UserFile = %q", got)
	}
}

// A config file saved with a byte order mark reads as without one, errors at the same
// positions; a UTF-16 one is refused with what to do.
func TestFromFileByteOrderMark(t *testing.T) {
	bomtest.TestFile(t, "config.yaml", []bomtest.Case{
		{Name: "valid", Doc: "log_level: debug\nproviders:\n  local: {type: ollama, model: m}\n"},
		{Name: "only a mark or nothing", Doc: ""},
		{Name: "unknown key", Doc: "log_level: debug\nstat_dir: x\n", Err: `[2:1] unknown field "stat_dir"`},
	}, func(path string) (string, error) {
		l, err := FromFile(path)
		out, _ := yaml.Marshal(l)
		return string(out), err
	})
}
