package cmdutil

import (
	"github.com/awf-dev/awf/internal/application/registry"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// Tools is the tool set of one run: the registry of every tool the workflow can reach, and
// the governed invoker in front of it that steps and agents call.
type Tools struct {
	Registry *registry.Registry
	Invoker  ports.ToolInvoker // governed: policy, approval, audit
	// Refuser audits calls refused before they reach Invoker (the agent loop's refusals).
	Refuser   ports.CallRefuser
	Validator ports.SchemaValidator
	// Audit is the run's audit log, and Settler the person at the terminal, for what resume
	// decides about a call a crash cut off.
	Audit   ports.AuditSink
	Settler ports.Settler
	// Warnings are tool definitions shadowed by others and duplicate .tool names.
	Warnings workflow.Problems
}
