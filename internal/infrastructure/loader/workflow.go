package loader

import (
	"fmt"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/yamlnode"
)

var topKeys = []string{
	"name", "version", "description", "inputs", "providers", "sandbox", "approval",
	"tools", "mcp_servers", "steps", "output",
}

// decodeWorkflow fills a Workflow from the document's root mapping.
// It returns nil when the root is not a mapping (reported), as nothing more can be checked.
func (d *decoder) decodeWorkflow(root ast.Node) *workflow.Workflow {
	wf := &workflow.Workflow{Pos: d.pos(root)}
	o := d.object("", "the workflow", root)
	if o == nil {
		return nil
	}
	o.checkKeys("the workflow", append(slices.Clone(topKeys), extensionKeys(o)...))
	wf.Name = o.str("name")
	wf.Version = o.str("version")
	wf.Description = o.str("description")
	if raw, ok := o.raw("inputs"); ok {
		wf.Inputs = d.inputs(raw)
	}
	wf.Providers = d.providers(o)
	if raw, ok := o.raw("sandbox"); ok {
		wf.Sandbox = d.policy("sandbox", raw)
	}
	if raw, ok := o.raw("approval"); ok {
		wf.Approval = d.approval("approval", raw)
	}
	wf.Tools = d.tools(o)
	wf.MCPServers = d.mcpServers(o)
	top := d.split != nil && !d.split.nested
	if raw, _ := o.raw("steps"); top && raw != ast.Node(d.split.tail) {
		d.split.failed = true // the split list is a duplicate key the decoder skips
	}
	if items, ok := o.list("steps"); ok {
		if top && !d.split.failed {
			wf.Steps = d.splitSteps("steps", items, 0)
		} else {
			wf.Steps = d.steps("steps", items, 0)
		}
	}
	wf.Output = o.str("output")
	if o.has("output") {
		_, wf.OutputPos, _ = o.get("output")
	}
	return wf
}

// extensionKeys returns the top-level keys starting with "x-": they are ignored, so that a
// file can hold anchors for reuse (as Compose files do).
func extensionKeys(o *object) []string {
	var out []string
	for _, e := range o.entries {
		if strings.HasPrefix(e.key, "x-") {
			out = append(out, e.key)
		}
	}
	return out
}

// namedEntries decodes a mapping of names to specs (providers, mcp_servers) and calls fn for
// each, in source order.
func (d *decoder) namedEntries(o *object, key string, fn func(name string, spec *object, pos workflow.Pos)) {
	raw, ok := o.raw(key)
	if !ok {
		return
	}
	m := d.object(key, fmt.Sprintf("%q", key), raw)
	if m == nil {
		return
	}
	for _, e := range m.entries {
		spec := d.object(m.child(e.key), fmt.Sprintf("%s %q", key, e.key), e.val)
		if spec != nil {
			fn(e.key, spec, e.keyPos)
		}
	}
}

var providerKeys = []string{"type", "base_url", "model", "api_key_env", "command", "args", "options"}

func (d *decoder) providers(o *object) map[string]workflow.ProviderConfig {
	var out map[string]workflow.ProviderConfig
	d.namedEntries(o, "providers", func(name string, p *object, pos workflow.Pos) {
		p.checkKeys(fmt.Sprintf("provider %q", name), providerKeys)
		if out == nil {
			out = map[string]workflow.ProviderConfig{}
		}
		out[name] = workflow.ProviderConfig{
			Name: name, Type: p.str("type"), BaseURL: p.str("base_url"), Model: p.str("model"),
			APIKeyEnv: p.str("api_key_env"), Command: p.str("command"), Args: p.strings("args"),
			Options: p.anymap("options"), Pos: pos,
		}
	})
	return out
}

var mcpKeys = []string{"command", "args", "env", "url"}

func (d *decoder) mcpServers(o *object) map[string]workflow.MCPServer {
	var out map[string]workflow.MCPServer
	d.namedEntries(o, "mcp_servers", func(name string, s *object, pos workflow.Pos) {
		s.checkKeys(fmt.Sprintf("MCP server %q", name), mcpKeys)
		if out == nil {
			out = map[string]workflow.MCPServer{}
		}
		out[name] = workflow.MCPServer{
			Name: name, Command: s.str("command"), Args: s.strings("args"),
			Env: s.strmap("env"), URL: s.str("url"), Pos: pos,
		}
	})
	return out
}

var inputKeys = []string{
	"name", "type", "default", "required", "description", "enum", "pattern", "min", "max",
	"file_exists", "dir_exists",
}

// inputs decodes both forms: a list of specs with a name, or a mapping of name to spec (a
// mapping, or a bare value meaning the default).
func (d *decoder) inputs(raw ast.Node) []workflow.Input {
	n, _ := d.resolve("inputs", raw)
	switch v := n.(type) {
	case nil:
		return nil
	case *ast.SequenceNode:
		return d.inputList(v)
	case *ast.MappingNode, *ast.MappingValueNode:
		return d.inputMap(v)
	case *ast.NullNode:
		return nil
	default:
		d.errorf("inputs", d.pos(raw), "", "\"inputs\" must be a list of inputs or a mapping of names to inputs, got %s", yamlnode.Kind(n))
		return nil
	}
}

func (d *decoder) inputList(seq *ast.SequenceNode) []workflow.Input {
	var out []workflow.Input
	for _, item := range seq.Values {
		path := fmt.Sprintf("inputs[%d]", len(out))
		pos := d.pos(item)
		d.record(path, pos)
		o := d.object(path, "an input", item)
		if o == nil {
			out = append(out, workflow.Input{Pos: pos}) // keeps indexes aligned with paths
			continue
		}
		o.checkKeys("input", inputKeys)
		in := d.input(o, o.str("name"), pos)
		out = append(out, in)
	}
	return out
}

func (d *decoder) inputMap(n ast.Node) []workflow.Input {
	m := d.object("inputs", "\"inputs\"", n)
	if m == nil {
		return nil
	}
	var out []workflow.Input
	for _, e := range m.entries {
		path := fmt.Sprintf("inputs[%d]", len(out))
		d.record(path, e.keyPos)
		val, _ := d.resolve(path, e.val)
		switch val.(type) {
		case *ast.MappingNode, *ast.MappingValueNode:
			o := d.object(path, "an input", val)
			if o == nil {
				out = append(out, workflow.Input{Name: e.key, Pos: e.keyPos})
				continue
			}
			o.checkKeys(fmt.Sprintf("input %q", e.key), slices.DeleteFunc(slices.Clone(inputKeys), func(k string) bool { return k == "name" }))
			out = append(out, d.input(o, e.key, e.keyPos))
		default:
			in := workflow.Input{Name: e.key, Pos: e.keyPos}
			if !isNull(val) {
				in.Default = d.toAny(path+".default", val)
				in.HasDefault = true
				in.Type = typeOf(in.Default)
				d.record(path+".default", e.valPos)
			}
			out = append(out, in)
		}
	}
	return out
}

// input decodes one input spec.
func (d *decoder) input(o *object, name string, pos workflow.Pos) workflow.Input {
	in := workflow.Input{
		Name: name, Type: workflow.InputType(o.str("type")), Description: o.str("description"),
		Required: o.boolean("required"), Pattern: o.str("pattern"), Min: o.number("min"),
		Max: o.number("max"), FileExists: o.boolean("file_exists"), DirExists: o.boolean("dir_exists"),
		Pos: pos,
	}
	in.Default, in.HasDefault = o.value("default")
	if in.Type == "" && in.HasDefault {
		in.Type = typeOf(in.Default)
	}
	if enum, ok := o.value("enum"); ok {
		list, isList := enum.([]any)
		if !isList {
			_, epos, _ := o.get("enum")
			d.errorf(o.child("enum"), epos, "", "\"enum\" must be a list of allowed values")
		}
		in.Enum = list
	}
	return in
}

// typeOf infers an input's type from its default; strings (and nothing) give "" (string).
func typeOf(v any) workflow.InputType {
	switch v.(type) {
	case int64:
		return workflow.TypeInteger
	case float64:
		return workflow.TypeNumber
	case bool:
		return workflow.TypeBoolean
	case []any:
		return workflow.TypeArray
	case map[string]any:
		return workflow.TypeObject
	}
	return ""
}
