package toolwire

import (
	"fmt"
	"os"
	"strings"

	"github.com/awf-dev/awf/internal/application/registry"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/toollock"
)

// Pins returns the pin (tool.Pin) of every tool of a registry's listing that a lock file
// covers: every tool but awf's built-ins (restricted by the workflow or not), which come with
// the awf binary and change with it. Descriptions are
// taken without a working directory, so that a lock holds wherever the workflow runs; a tool
// defined in a file of its own (a manifest, a .tool file) has that file pinned too.
func Pins(entries []registry.Entry) map[string]tool.Pin {
	pins := map[string]tool.Pin{}
	for _, e := range entries {
		if e.Level == tool.LevelBuiltin || e.Source == "builtin" {
			continue
		}
		desc := e.Description
		if e.Tool != nil {
			desc = e.Tool.Description(tool.Context{})
		}
		kind, def := string(e.Kind), []byte(nil)
		switch {
		case strings.HasPrefix(e.Source, "mcp:"):
			kind = "mcp"
		case e.Level != tool.LevelWorkflow && e.Source != "":
			def, _ = os.ReadFile(e.Source) // unreadable: no definition digest, which differs from a locked one
		}
		pins[e.Ref] = tool.PinOf(kind, e.Source, desc, e.Parameters, def)
	}
	return pins
}

// CheckPins compares the tools a run of the workflow at wfPath would use (their pins) with
// the workflow's lock file. A tool whose description, schema or definition file differs from
// the lock refuses the run: a fault.Denied error naming each tool and what changed. Tools not
// in the lock, and every MCP tool when there is no lock, are warnings (unpinned), as are tools
// the lock holds that are gone. A workflow without a file (awf tools run alone) has no lock.
func CheckPins(wfPath string, pins map[string]tool.Pin) (workflow.Problems, error) {
	if wfPath == "" {
		return nil, nil
	}
	path := toollock.Path(wfPath)
	lock, ok, err := toollock.Read(path)
	if err != nil {
		return nil, err
	}
	if !ok {
		return unpinnedMCP(wfPath, pins), nil
	}
	var warnings workflow.Problems
	var refused []string
	for _, c := range tool.ComparePins(lock.Tools, pins) {
		if c.Refuses() {
			refused = append(refused, "  "+c.String())
			continue
		}
		warnings = append(warnings, workflow.Problem{Pos: workflow.Pos{File: path}, Msg: c.String(),
			Hint: "review it, then run awf tools lock --workflow " + wfPath, Severity: workflow.SeverityWarning})
	}
	if len(refused) > 0 {
		return warnings, fault.New(fault.Denied, "%s: tools differ from the lock file, refused (tool poisoning or a changed tool):\n%s\nreview them, then run awf tools lock --workflow %s",
			path, strings.Join(refused, "\n"), wfPath)
	}
	return warnings, nil
}

// unpinnedMCP warns of each MCP tool of a workflow that has no lock file.
func unpinnedMCP(wfPath string, pins map[string]tool.Pin) workflow.Problems {
	var out workflow.Problems
	for _, c := range tool.ComparePins(nil, pins) {
		if c.Pin.Kind == "mcp" {
			out = append(out, workflow.Problem{Pos: workflow.Pos{File: wfPath}, Severity: workflow.SeverityWarning,
				Msg:  fmt.Sprintf("MCP tool %s is not pinned: its server can change its description or schema unnoticed", c.Tool),
				Hint: "run awf tools lock --workflow " + wfPath})
		}
	}
	return out
}
