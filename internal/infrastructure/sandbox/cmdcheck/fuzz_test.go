package cmdcheck

import (
	"errors"
	"testing"
)

// FuzzCheck states two properties of any command line: checking never panics and either
// allows it or refuses it with a rule; and when a list allows a line, every program the line
// names is in the list (or is a transparent wrapper), so nothing the parser saw escaped it.
func FuzzCheck(f *testing.F) {
	for _, seed := range []string{
		"git status", "sh -c 'curl x'", "env -i A=1 timeout 5 git log", "find . -exec cat {} +",
		"x=$(curl y); $x", "git -c alias.a='!sh -c id' a", "f() { ls; }; f", "echo ${x@P}",
		"xargs -I{} sh -c 'echo {}'", "awk 'BEGIN{system(\"id\")}'", `c\url`, "trap 'ls' EXIT",
	} {
		f.Add(seed)
	}
	allow := []string{"git", "ls", "cat", "sh", "find", "xargs", "awk"}
	list := New(allow)
	f.Fuzz(func(t *testing.T, script string) {
		err := list.Check(script, "/ws")
		if err != nil {
			if _, ok := errors.AsType[*Refusal](err); !ok {
				t.Fatalf("Check(%q) = %v, not a refusal", script, err)
			}
			return
		}
		progs, err := Programs(script)
		if err != nil {
			t.Fatalf("Check(%q) allowed a line Programs cannot parse: %v", script, err)
		}
		for _, p := range progs {
			if p.Name == "" {
				t.Fatalf("Check(%q) allowed a dynamic command", script)
			}
			if _, known := lookupProgram(programKey(p.Name)); !list.allows(list.absFor(p.Name)) && !(known && isTransparent(p.Name)) {
				t.Fatalf("Check(%q) allowed %q, which is not in %v", script, p.Name, allow)
			}
		}
	})
}

func (a *Allowlist) absFor(name string) string {
	z := &analyzer{dir: "/ws"}
	return z.abs(name)
}

func isTransparent(name string) bool {
	p, ok := lookupProgram(programKey(name))
	return ok && p.transparent
}
