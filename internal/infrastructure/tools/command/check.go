package command

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/infrastructure/sandbox"
	"github.com/awf-dev/awf/internal/infrastructure/sandbox/cmdcheck"
)

// CheckLayer is the layer that refuses a command line before anything runs, as audit
// records name it; the exec guard inside the process helper is the second layer.
const CheckLayer = "L1 command check"

// RuleOptionInjection is the rule of a value from the model that would be read as an option
// (see checkOption).
const RuleOptionInjection = "option-injection"

// Run runs req under the configuration's policy and restrictions: the command check first
// (every program the script could run, before any runs; a refusal is tool.Refused and
// nothing starts), then the process runner, whose helper guards every exec again. name
// prefixes messages. argv, when not nil, is the exact argument vector the script runs (a
// wrapped tool's), checked as such.
func (c Config) Run(ctx context.Context, name string, req ports.ProcessRequest, argv []string) tool.Result {
	req.Policy, req.Restrictions = c.Policy, c.Restrictions
	if refused, ok := c.check(name, req, argv); ok {
		return refused
	}
	res, err := c.Process.Run(ctx, req)
	return Result(name, res, err)
}

// check runs the command check of req; ok reports a refusal (or a policy that does not
// compile, which must not run either).
func (c Config) check(name string, req ports.ProcessRequest, argv []string) (tool.Result, bool) {
	if c.Policy == nil {
		return tool.Result{}, false // no sandbox at all: the runner refuses nothing either
	}
	dir, err := absDir(req.Dir)
	if err != nil {
		return tool.Errorf(fmt.Sprintf("%s: %v", name, err)), true
	}
	home, _ := os.UserHomeDir()
	list, restricted, err := sandbox.Commands(c.Policy, c.Restrictions, sandbox.Context{Dir: dir, Home: home})
	if err != nil {
		return tool.Errorf(fmt.Sprintf("%s: %v", name, err)), true
	}
	if !restricted {
		return tool.Result{}, false
	}
	allow := cmdcheck.New(list)
	if argv != nil {
		err = allow.CheckArgv(argv, dir)
	} else {
		err = allow.CheckBound(req.Script, dir, req.Vars)
	}
	var r *cmdcheck.Refusal
	if !errors.As(err, &r) {
		return tool.Result{}, false
	}
	rule := c.rule(r)
	return tool.Refused(CheckLayer, rule, fmt.Sprintf("%s: command %q refused (%s): %s; nothing was run", name, r.Program, rule, r.Detail)), true
}

// rule names the policy rule of a refusal: the list that left the program out (the tool's
// restrictions.commands or the workflow's sandbox.commands), or the check's own rule (eval,
// dynamic-command, git-config...).
func (c Config) rule(r *cmdcheck.Refusal) string {
	if r.Rule != cmdcheck.RuleAllowlist {
		return string(r.Rule)
	}
	if c.Restrictions != nil && c.Restrictions.Commands != nil &&
		(c.Policy.Commands == nil || slices.Contains(c.Policy.Commands, r.Program)) {
		return "restrictions.commands"
	}
	return "sandbox.commands"
}

func absDir(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fault.Wrap(fault.System, fmt.Errorf("working directory: %w", err))
		}
		return wd, nil
	}
	return filepath.Abs(dir)
}
