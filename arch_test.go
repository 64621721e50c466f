package awf_test

import (
	"os/exec"
	"strings"
	"testing"
)

// forbidden is policy: which internal packages each layer may not import. Change it in review
// with a reason, never to make CI pass (DESIGN section 1, STYLE section 5). Only non-test
// imports are checked.
var forbidden = map[string][]string{
	"internal/domain/":         {"internal/application", "internal/infrastructure", "cmd/"},
	"internal/application/":    {"internal/infrastructure", "cmd/"},
	"internal/infrastructure/": {"internal/application", "cmd/"},
	"pkg/":                     {"internal/", "cmd/"},
}

// domainBanned are standard packages that would give the domain I/O.
var domainBanned = []string{"os", "os/exec", "net", "net/http", "syscall", "log/slog", "github.com/goccy/go-yaml"}

const module = "github.com/awf-dev/awf/"

func TestLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		for _, imp := range fields[1:] {
			rel, ours := strings.CutPrefix(imp, module)
			for prefix, bans := range forbidden {
				if !strings.HasPrefix(pkg, prefix) {
					continue
				}
				for _, ban := range bans {
					if ours && strings.HasPrefix(rel, ban) {
						t.Errorf("%s imports %s: %s may not import %s", pkg, imp, prefix, ban)
					}
				}
			}
			if strings.HasPrefix(pkg, "internal/domain/") {
				for _, ban := range domainBanned {
					if imp == ban {
						t.Errorf("domain package %s imports %s: the domain has no I/O", pkg, imp)
					}
				}
			}
			if strings.HasPrefix(pkg, "pkg/toolparse") && strings.Contains(imp, ".") && !ours {
				t.Errorf("pkg/toolparse imports %s: it uses the standard library only", imp)
			}
		}
	}
}
