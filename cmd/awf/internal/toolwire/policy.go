package toolwire

import (
	"context"
	"errors"
	"os"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/sandbox"
)

// policyReport is the sandbox part of every call's policy decision: which layer enforces the
// policy for this tool and, for tools that start processes, the OS sandbox their helper will
// apply on this machine (sandbox.Expect), so that the audit record shows what was in force.
// A layer the policy requires and the machine lacks denies the call here, before it runs.
type policyReport struct {
	policy    *workflow.Policy
	workDir   string
	processes map[string]bool // tools that start processes: shell and command tools
	machine   sandbox.Report
}

var _ ports.PolicyChecker = (*policyReport)(nil)

// NewPolicyReport is the ports.PolicyChecker of the tools of wf run in workDir.
func NewPolicyReport(wf *workflow.Workflow, workDir string) ports.PolicyChecker {
	p := &policyReport{policy: wf.Sandbox, workDir: workDir, machine: sandbox.Probe(),
		processes: map[string]bool{"shell": true, "run_command": true}}
	for _, t := range wf.Tools {
		if t.Command != "" {
			p.processes[t.Name] = true
		}
	}
	return p
}

// Check reports the layer for call's tool. The tools enforce the paths and hosts themselves
// (L1) and the helper the OS layer (L2); this decision denies only what is known before the
// call: a required layer this machine lacks.
func (p *policyReport) Check(ctx context.Context, call ports.GovernedCall) ports.PolicyDecision {
	if !p.processes[call.Tool] {
		switch call.Tool {
		case "read_file", "write_file", "list_dir", "glob", "grep":
			return ports.PolicyDecision{Allowed: true, Rule: "sandbox.paths", Layer: "L1 os.Root", Backend: "in-process"}
		case "http_request":
			return ports.PolicyDecision{Allowed: true, Rule: "sandbox.hosts", Layer: "L1 connect-time IP guard", Backend: "in-process"}
		}
		return ports.PolicyDecision{Allowed: true, Rule: "tool", Layer: "L0 gate"}
	}
	if p.policy != nil && p.policy.Backend == "container" {
		return ports.PolicyDecision{Allowed: true, Rule: "sandbox.backend", Layer: "L2 container", Backend: "container"}
	}
	home, _ := os.UserHomeDir()
	spec, err := sandbox.Compile(p.policy, nil, sandbox.Context{Dir: p.workDir, Home: home})
	if err != nil {
		return ports.PolicyDecision{Allowed: false, Rule: "sandbox", Layer: "L2", Reason: err.Error()}
	}
	applied, err := sandbox.Expect(spec, p.machine)
	var missing *sandbox.MissingError
	if errors.As(err, &missing) {
		return ports.PolicyDecision{Allowed: false, Rule: "sandbox.require", Layer: "L2", Reason: err.Error()}
	}
	if err != nil {
		return ports.PolicyDecision{Allowed: false, Rule: "sandbox", Layer: "L2", Reason: err.Error()}
	}
	return ports.PolicyDecision{Allowed: true, Rule: "sandbox", Layer: "L2 " + applied.String(), Backend: applied.Backend, Applied: applied.Map()}
}
