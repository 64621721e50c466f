package govern_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/awf-dev/awf/internal/application/approval"
	"github.com/awf-dev/awf/internal/application/govern"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/infrastructure/audit"
	"github.com/awf-dev/awf/internal/infrastructure/templater"
)

// BenchmarkGate measures the governed path's overhead per call around a tool that does
// nothing: the gate and policy alone (audit discarded), then with approval (auto) and the real
// audit log without and with fsync, then a whole Invoke through the registry.
func BenchmarkGate(b *testing.B) {
	discard := ports.AuditSinkFunc(func(context.Context, ports.AuditRecord) error { return nil })
	args := map[string]any{"command": "git status --short"}
	noop := func(context.Context) (tool.Result, bool) { return tool.OK("clean"), false }
	sh := shell()
	newGate := func(b *testing.B, sink ports.AuditSink, cfg approval.Config) *govern.Gate {
		cfg.Eval = templater.New()
		flow, err := approval.New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		g, err := govern.New(govern.Deps{Approval: flow, Policy: denyDotDot, Audit: sink, Clock: ports.ClockFunc(time.Now)})
		if err != nil {
			b.Fatal(err)
		}
		return g
	}
	auto := approval.Config{Override: "auto"}
	call := govern.Call{RunID: "r", Step: "s", CallID: "c", Tool: sh, Name: "shell", Args: args}
	run := func(b *testing.B, g *govern.Gate) {
		for b.Loop() {
			if res, _ := g.Run(b.Context(), call, noop); !res.Succeeded() {
				b.Fatal(res.Error)
			}
		}
	}
	b.Run("gate+policy/read_file", func(b *testing.B) {
		g := newGate(b, discard, auto)
		rf := govern.Call{RunID: "r", Step: "s", CallID: "c", Tool: readFile(), Name: "read_file", Args: map[string]any{"path": "src/main.go"}}
		for b.Loop() {
			if res, _ := g.Run(b.Context(), rf, noop); !res.Succeeded() {
				b.Fatal(res.Error)
			}
		}
	})
	b.Run("gate+policy/shell", func(b *testing.B) { run(b, newGate(b, discard, auto)) })
	b.Run("gate+policy+rule/shell", func(b *testing.B) {
		run(b, newGate(b, discard, approval.Config{Policy: rulePolicy()}))
	})
	for _, sync := range []bool{false, true} {
		name := "gate+policy+approval+audit/nosync"
		if sync {
			name = "gate+policy+approval+audit/fsync"
		}
		b.Run(name, func(b *testing.B) {
			log, err := audit.Open(filepath.Join(b.TempDir(), "audit.jsonl"), audit.Options{NoSync: !sync})
			if err != nil {
				b.Fatal(err)
			}
			defer log.Close()
			run(b, newGate(b, log, auto))
		})
	}
	b.Run("invoke-through-registry/nosync", func(b *testing.B) {
		log, err := audit.Open(filepath.Join(b.TempDir(), "audit.jsonl"), audit.Options{NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		defer log.Close()
		s := newSetup(b, options{policy: denyDotDot, audit: log, approval: auto}, shell())
		r := req("shell", args)
		for b.Loop() {
			if res, err := s.tools.Invoke(b.Context(), r); err != nil || !res.Succeeded() {
				b.Fatal(res.Error, err)
			}
		}
	})
}
