package main

import (
	"strings"
	"testing"
)

// A manifest copied without the tools it calls gets advice it can follow: a bare name is
// defined, not installed, so check says where to define it and install --deps says there is
// nothing to install (no "no registry"); an owner/name dependency with no registry configured
// says what would be installed and how to name a registry.
func TestMissingToolAdvice(t *testing.T) {
	e := newEnv(t)
	e.copy("../../examples/tools/tools/file-report/config.yaml", ".awf/tools/file-report/config.yaml")
	define := "define ls as a project or user tool (.awf/wrapped-tools/ls.tool, or .awf/tools/ls/config.yaml"
	r := e.mustRun(2, "tools", "check", "file-report")
	if !strings.Contains(r.stdout, "file-report needs ls") || !strings.Contains(r.stdout, define) || strings.Contains(r.stdout, "install with") {
		t.Errorf("tools check file-report:\n%s", r.stdout)
	}
	r = e.mustRun(2, "tools", "install", "--deps", "file-report")
	if !strings.Contains(r.stderr, "nothing to install: file-report needs ls") || !strings.Contains(r.stderr, define) || strings.Contains(r.stderr, "registry:") {
		t.Errorf("tools install --deps file-report:\n%s", r.stderr)
	}
	r = e.mustRun(3, "tools", "run", "file-report", "--arg", "pattern=x", "--yes")
	if !strings.Contains(r.stderr, define) || strings.Contains(r.stderr, "install with") {
		t.Errorf("tools run file-report:\n%s", r.stderr)
	}

	e.copyTree(toolsData+"/local", ".")
	r = e.mustRun(1, "tools", "install", "--deps", "welcome")
	if !strings.Contains(r.stderr, "no registry to install acme/greet@^1.0.0 from: give --registry DIR|URL") ||
		!strings.Contains(r.stderr, "AWF_TOOLS_REGISTRY") {
		t.Errorf("tools install --deps welcome without a registry:\n%s", r.stderr)
	}
}
