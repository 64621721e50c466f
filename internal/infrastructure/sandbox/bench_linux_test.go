//go:build linux

package sandbox

import (
	"testing"
	"time"

	"github.com/awf-dev/awf/internal/domain/workflow"
)

// BenchmarkHelperStartup measures one helper running `true`: bare (the process helper as it
// is without a sandbox) and sandboxed (Prepare, the namespaces, Enter). The difference is
// the sandbox's start-up cost per process.
func BenchmarkHelperStartup(b *testing.B) {
	ws := b.TempDir()
	env := []string{"PATH=/usr/bin:/bin"}
	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			if r := runLaunch(b, nil, "true", env, 10*time.Second); r.status != 0 {
				b.Fatalf("status %d: %s", r.status, r.stderr)
			}
		}
	})
	spec, err := Compile(nil, nil, Context{Dir: ws})
	if err != nil {
		b.Fatal(err)
	}
	rep := Probe()
	b.Run("sandboxed", func(b *testing.B) {
		for b.Loop() {
			if r := runSandboxed(b, spec, rep, "true", env, 10*time.Second); r.status != 0 {
				b.Fatalf("status %d: %s %s %v", r.status, r.stderr, r.setupErr, r.prepareErr)
			}
		}
	})
}

func BenchmarkCompile(b *testing.B) {
	p := &workflow.Policy{
		Paths:    workflow.PathPolicy{Read: []string{"src/**", "~/go/pkg/mod"}, Write: []string{"build/**", "~/.cache/go-build"}},
		Commands: []string{"go", "git", "make", "ls", "cat", "grep"},
		Hosts:    []string{"*.github.com", "proxy.golang.org"},
		Limits:   workflow.Limits{Memory: 2 << 30, PIDs: 256},
	}
	r := &workflow.Restrictions{Commands: []string{"go", "git"}, Hosts: []string{"api.github.com"}}
	for b.Loop() {
		if _, err := Compile(p, r, Context{Dir: "/work/ws", Home: "/home/u"}); err != nil {
			b.Fatal(err)
		}
	}
}
