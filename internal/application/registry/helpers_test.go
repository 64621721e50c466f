package registry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/awf-dev/awf/internal/application/registry"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/ports/portstest"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/schema"
)

// newRegistry returns a registry on the real schema validator and a clock that moves 5ms at
// every reading, with the sources loaded; load problems of error severity fail the test.
func newRegistry(t testing.TB, sources ...ports.ToolSource) *registry.Registry {
	t.Helper()
	r := bareRegistry(t, registry.Config{})
	if probs, err := r.Load(sources...); err != nil {
		t.Fatalf("Load: %v", err)
	} else if len(probs) > 0 {
		t.Logf("load warnings:\n%v", probs)
	}
	return r
}

func bareRegistry(t testing.TB, cfg registry.Config) *registry.Registry {
	t.Helper()
	clock := portstest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	clock.SetStep(5 * time.Millisecond)
	cfg.Validator, cfg.Clock = schema.New(), clock
	r, err := registry.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func static(level tool.Level, set tool.Set) ports.ToolSource {
	return ports.StaticTools{At: level, Set: set}
}

func tools(ts ...tool.Tool) tool.Set { return tool.Set{Tools: ts} }

// echo returns its text argument (or its input), prefixed.
func echo(name, prefix string) *tool.Func {
	return &tool.Func{
		ToolName: name, Desc: "echo " + prefix,
		Params: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"additionalProperties":false}`),
		Fn: func(_ context.Context, c tool.Invocation) tool.Result {
			s, _ := c.Args["text"].(string)
			if s == "" {
				s = c.Input
			}
			return tool.OK(prefix + s)
		},
	}
}

// add adds integers a and b, returning structured data.
func add() *tool.Func {
	return &tool.Func{
		ToolName: "add", Desc: "add two integers",
		Params: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer","minimum":0}},"required":["a","b"],"additionalProperties":false}`),
		Notes:  tool.Annotations{Tags: []string{"math", "pure"}},
		Fn: func(_ context.Context, c tool.Invocation) tool.Result {
			a, _ := c.Args["a"].(json.Number).Int64()
			b, _ := c.Args["b"].(json.Number).Int64()
			return tool.Result{Status: tool.StatusOK, Output: fmt.Sprint(a + b), Data: map[string]any{"sum": a + b}}
		},
	}
}

// counter is a cacheable tool that counts its executions.
func counter(n *atomic.Int64, cacheable bool) *tool.Func {
	return &tool.Func{
		ToolName: "count", Desc: "count calls",
		Params: json.RawMessage(`{"type":"object","properties":{"k":{"type":"string"}}}`),
		Notes:  tool.Annotations{Cacheable: cacheable, Version: "1.0.0"},
		Fn: func(context.Context, tool.Invocation) tool.Result {
			return tool.OK(fmt.Sprint(n.Add(1)))
		},
	}
}

func args(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

func num(s string) json.Number { return json.Number(s) }

// manifest builds a meta-tool manifest in Go, as the loader would (input defaults to {input}).
func manifest(name string, steps ...tool.MetaStep) *tool.Manifest {
	for i := range steps {
		if steps[i].Input == "" {
			steps[i].Input = "{input}"
		}
		steps[i].Pos = workflow.Pos{File: name + ".yaml", Line: 5 + i}
	}
	return &tool.Manifest{Name: name, Description: "meta " + name, Steps: steps, Path: name + ".yaml",
		Pos: workflow.Pos{File: name + ".yaml", Line: 1, Col: 1}}
}

func problemsText(ps workflow.Problems) string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}
