package govern

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/awf-dev/awf/internal/application/registry"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
)

// Stage is the governed path as a registry pipeline stage: put it in registry.Config.Stages.
// It runs after the registry resolved the name and validated the arguments against the schema,
// for top-level and nested (meta-tool, chain) calls alike. A refused call gets
// tool.OutcomeDenied as its status; a fault that ends the run is set as Call.Err.
func (g *Gate) Stage(next registry.Handler) registry.Handler {
	return func(ctx context.Context, c *registry.Call) tool.Result {
		if m, ok := ctx.Value(markKey{}).(*mark); ok {
			m.governed.Store(true)
		}
		req := c.Request
		res, v := g.Run(ctx, Call{
			RunID: req.RunID, Step: req.Step, CallID: req.CallID, Tool: c.Tool, Name: req.Name,
			Args: req.Args, Depth: c.Depth,
		}, func(ctx context.Context) (tool.Result, bool) {
			res := next(ctx, c)
			return res, c.Status == tool.OutcomeTimeout
		})
		if v.Denied {
			c.Status = tool.OutcomeDenied
		}
		if v.Err != nil {
			c.Err = errors.Join(c.Err, v.Err)
		}
		return res
	}
}

// Invoker wraps the registry's Invoke so that calls refused before the governed stage (an
// unknown tool, arguments that do not match the schema, nesting too deep) leave an audit
// record too, and come back marked Denied by the gate.
func (g *Gate) Invoker(next ports.ToolInvoker) ports.ToolInvoker {
	return &invoker{g: g, next: next}
}

type invoker struct {
	g    *Gate
	next ports.ToolInvoker
}

type markKey struct{}

// mark is set by the stage when a call reaches it.
type mark struct{ governed atomic.Bool }

// Invoke runs req through the registry and audits it if the governed stage never saw it.
func (i *invoker) Invoke(ctx context.Context, req ports.ToolRequest) (tool.Result, error) {
	m := &mark{}
	res, err := i.next.Invoke(context.WithValue(ctx, markKey{}, m), req)
	if m.governed.Load() {
		return res, err
	}
	if res.Succeeded() {
		// Only a registry built without Stage runs a call the gate never saw.
		return res, errors.Join(err, fault.New(fault.System, "tool %q ran outside the governed path: the registry lacks govern's stage", req.Name))
	}
	reason := res.Error
	if reason == "" && err != nil {
		reason = err.Error()
	}
	layer, rule := ports.LayerGate, ports.RuleArgsSchema
	if r := res.Refusal; r != nil {
		layer, rule = r.Layer, r.Rule
	}
	if aerr := i.g.refuse(ctx, Call{RunID: req.RunID, Step: req.Step, CallID: req.CallID, Name: req.Name, Args: req.Args}, layer, rule, reason); aerr != nil {
		err = errors.Join(err, aerr)
	}
	res.Denied, res.Approval = true, ports.ByGate
	return res, err
}

// Refuse audits a call refused before it reached the invoker (ports.CallRefuser).
func (i *invoker) Refuse(ctx context.Context, req ports.ToolRequest, rule, reason string) error {
	return i.g.Refuse(ctx, req, rule, reason)
}
