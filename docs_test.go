package awf_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/application/compile"
	"github.com/awf-dev/awf/internal/infrastructure/loader"
	"github.com/awf-dev/awf/internal/infrastructure/manifest"
	"github.com/awf-dev/awf/internal/infrastructure/templater"
)

var yamlBlock = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// TestDocsExamplesCompile loads every ```yaml block of docs/ that is a whole workflow (starts
// with "name:") and every workflow under workflows/, so the documentation cannot drift from
// the loader. Workflows an example calls are compiled too (lib/ is workflows/lib).
func TestDocsExamplesCompile(t *testing.T) {
	docs, _ := filepath.Glob("docs/*.md")
	docs = append(docs, "README.md")
	l, tp := loader.New(), templater.New()
	// Examples that call other workflows (lib/report.yaml) find the example workflows'.
	dir := t.TempDir()
	lib, err := filepath.Abs(filepath.Join("workflows", "lib"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(lib, filepath.Join(dir, "lib")); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, doc := range docs {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range yamlBlock.FindAllStringSubmatch(string(data), -1) {
			if strings.HasPrefix(m[1], manifestMark) {
				checkManifestBlock(t, doc, i, m[1])
				continue
			}
			if !strings.HasPrefix(m[1], "name:") {
				continue
			}
			n++
			path := filepath.Join(dir, strings.ReplaceAll(doc, "/", "_")+"-"+string(rune('a'+i))+".yaml")
			if err := os.WriteFile(path, []byte(m[1]), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := compile.File(l, tp, path); err != nil {
				t.Errorf("%s, yaml block %d:\n%v", doc, i+1, err)
			}
		}
	}
	if n == 0 {
		t.Error("no workflow examples found in docs/")
	}
}

// manifestMark starts a ```yaml block that is a tool manifest (docs/tools.md), not a workflow.
const manifestMark = "# manifest"

// checkManifestBlock decodes a tool manifest example; it must have no errors.
func checkManifestBlock(t *testing.T, doc string, i int, text string) {
	t.Helper()
	if _, probs := manifest.Decode(doc, []byte(text)); len(probs.Errors()) > 0 {
		t.Errorf("%s, yaml block %d (a manifest):\n%v", doc, i+1, probs.Errors())
	}
}

func TestExampleWorkflowsCompile(t *testing.T) {
	files, _ := filepath.Glob("workflows/*.yaml")
	more, _ := filepath.Glob("workflows/lib/*.yaml")
	files = append(files, more...)
	if len(files) == 0 {
		t.Fatal("no workflows")
	}
	l, tp := loader.New(), templater.New()
	for _, f := range files {
		if _, err := compile.File(l, tp, f); err != nil {
			t.Errorf("%s:\n%v", f, err)
		}
	}
}

// TestArchitectureNamesEveryPackage keeps docs/architecture.md's map of the code whole: every
// package under internal/domain, internal/application and internal/infrastructure, and every
// command under cmd/awf/internal/cmd, is named in it.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, layer := range []string{"internal/domain", "internal/application", "internal/infrastructure", "cmd/awf/internal/cmd"} {
		entries, err := os.ReadDir(layer)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			name := e.Name()
			if layer == "cmd/awf/internal/cmd" {
				if !strings.Contains(string(doc), name) {
					t.Errorf("docs/architecture.md does not name the command package %s/%s", layer, name)
				}
				continue
			}
			if !strings.Contains(string(doc), name+"/") {
				t.Errorf("docs/architecture.md does not name %s/%s/", layer, name)
			}
		}
	}
}
