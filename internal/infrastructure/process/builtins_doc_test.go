package process

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/interp"

	"github.com/awf-dev/awf/internal/domain/ports"
)

// shellBuiltinNames are every POSIX and bash builtin (those interp.IsBuiltin knows).
var shellBuiltinNames = strings.Fields(`alias bg cd command false fc fg getopts hash jobs kill newgrp pwd
read true umask unalias wait break : continue . eval exec exit export readonly return set shift times
trap unset source bind builtin caller compgen complete compopt declare typeset dirs disown enable
history help let local logout mapfile readarray popd pushd shopt suspend type ulimit echo printf test [`)

// TestDocumentedBuiltinsAreExactlyTheShells checks docs/dsl.md's list of the shell's builtins
// ("Its builtins are exactly:") against the shell itself: each builtin is run alone in a
// subshell, and those that do not fail with "unsupported builtin" (ulimit is refused on
// purpose, with its own message) must be exactly the ones listed.
func TestDocumentedBuiltinsAreExactlyTheShells(t *testing.T) {
	data, err := os.ReadFile("../../../docs/dsl.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	start := strings.Index(doc, "Its builtins are exactly:")
	if start < 0 {
		t.Fatal(`docs/dsl.md lacks "Its builtins are exactly:"`)
	}
	parts := strings.SplitN(doc[start:], "\n\n", 3) // the heading, the list, the rest
	if len(parts) < 3 {
		t.Fatal("docs/dsl.md: no list after \"Its builtins are exactly:\"")
	}
	list := parts[1]
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(list, -1) {
		if m[1] != "&" && m[1] != "$!" {
			documented[m[1]] = true
		}
	}
	supported := map[string]bool{}
	for _, name := range shellBuiltinNames {
		if !interp.IsBuiltin(name) && !slices.Contains([]string{"declare", "typeset", "export", "readonly", "local", "let"}, name) {
			t.Errorf("%s is no longer a builtin of the interpreter: update shellBuiltinNames", name)
		}
		got, err := NewLocal(Config{}).Run(t.Context(), ports.ProcessRequest{
			Script: "( " + name + " ) </dev/null >/dev/null", BaseEnv: MinimalEnv(), Timeout: time.Minute})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !strings.Contains(got.Stderr, "unsupported builtin") && name != "ulimit" {
			supported[name] = true
		}
	}
	t.Logf("%d documented, %d supported", len(documented), len(supported))
	if !maps.Equal(documented, supported) {
		t.Errorf("docs/dsl.md lists the builtins\n%v\nthe shell has\n%v", slices.Sorted(maps.Keys(documented)), slices.Sorted(maps.Keys(supported)))
	}
}
