package workflow

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Name forms, checked by hand rather than with package-level regexps: every process awf
// starts (including the shell helper) pays for package initialisation, and compiling four
// regexps cost about 0.5 ms of it.
var (
	workflowName = nameForm{lower: true, digitFirst: true, dash: true}
	stepName     = nameForm{upper: true, lower: true, digitFirst: true, dash: true}
	inputName    = nameForm{upper: true, lower: true}
	toolName     = nameForm{upper: true, lower: true, digitFirst: true, dash: true, max: 64}
)

// nameForm is a name made of ASCII letters (of the allowed cases), digits, underscores and,
// if dash, hyphens; digitFirst and dash allow those characters first; max limits the length
// (0: none).
type nameForm struct {
	upper, lower, digitFirst, dash bool
	max                            int
}

// MatchString reports whether s has the form.
func (f nameForm) MatchString(s string) bool {
	if s == "" || (f.max > 0 && len(s) > f.max) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c == '_' ||
			(f.upper && 'A' <= c && c <= 'Z') ||
			(f.lower && 'a' <= c && c <= 'z') ||
			('0' <= c && c <= '9' && (i > 0 || f.digitFirst)) ||
			(c == '-' && f.dash)
		if !ok {
			return false
		}
	}
	return true
}

// Allowed values of the enumerated fields, in the order messages list them.
var (
	inputTypes      = []InputType{TypeString, TypeInteger, TypeNumber, TypeBoolean, TypeArray, TypeObject}
	backoffs        = []Backoff{BackoffConstant, BackoffLinear, BackoffExponential}
	approvalModes   = []string{ApprovalAuto, ApprovalPrompt, ApprovalDeny}
	outputFormats   = []string{"text", "json"}
	strategies      = []string{"sliding_window", "truncate_middle", "summarize"}
	toolFormats     = []string{"auto", "json", "xml"}
	onMaxCallsModes = []string{"fail", "stop"}
	networkModes    = []string{"none", "allowlist", "host"}
	enforceModes    = []string{"best_effort", "strict"}
	execModes       = []string{"any", "allowlist"}
	backends        = []string{"process", "container"}
	providerTypes   = []string{"openai", "anthropic", "claude", "ollama", "cli", "replay"}
)

// modeConversation is the agent step mode that keeps a multi-turn conversation.
const modeConversation = "conversation"

// Validate checks what can be known about the workflow without I/O: names, required fields,
// references between steps, enumerated values and input declarations. It returns every
// problem found, errors and warnings, each with the dotted Field it concerns and the best
// position the model holds (a loader may point it more precisely by Field). It is pure: it
// reads no file and evaluates no template.
func (w *Workflow) Validate() Problems {
	v := &validator{w: w, stepPos: map[string]Pos{}, stepTypes: map[string]StepType{}, agentAt: map[string]int{}, hints: NewHinter()}
	v.workflowName()
	v.inputs()
	v.tools()
	v.providers()
	v.mcpServers()
	v.policy()
	v.approval()
	v.steps()
	return v.probs
}

// validator accumulates problems during one Validate call.
type validator struct {
	w         *Workflow
	probs     Problems
	stepPos   map[string]Pos      // first definition of each step name
	stepTypes map[string]StepType // type of each step name's first definition
	outVars   map[string]Pos
	// agentAt is where each agent step's name is in the workflow's list of agent steps
	// (see stepList).
	agentAt map[string]int
	hints   *Hinter
}

func (v *validator) errorf(field string, pos Pos, hint, format string, args ...any) {
	v.probs = append(v.probs, Problem{Pos: pos, Field: field, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

func (v *validator) warnf(field string, pos Pos, format string, args ...any) {
	v.probs = append(v.probs, Problem{Pos: pos, Field: field, Msg: fmt.Sprintf(format, args...), Severity: SeverityWarning})
}

// oneOf reports a value not in allowed (empty is allowed when optional), suggesting the
// nearest allowed value. owner names what holds the value ("tool \"x\""), or is empty.
func (v *validator) oneOf(field string, pos Pos, owner, what, got string, allowed []string, optional bool) {
	if (got == "" && optional) || slices.Contains(allowed, got) {
		return
	}
	expected := "expected " + strings.Join(allowed, ", ")
	if len(allowed) > 1 {
		expected = "expected one of " + strings.Join(allowed, ", ")
	}
	switch {
	case got == "" && owner != "":
		v.errorf(field, pos, "", "%s has no %s; %s", owner, what, expected)
	case got == "":
		v.errorf(field, pos, "", "%s is missing; %s", what, expected)
	case owner != "":
		v.errorf(field, pos, DidYouMean(got, allowed), "%s has unknown %s %q; %s", owner, what, got, expected)
	default:
		v.errorf(field, pos, DidYouMean(got, allowed), "unknown %s %q; %s", what, got, expected)
	}
}

func stringsOf[T ~string](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}

func (v *validator) workflowName() {
	switch {
	case v.w.Name == "":
		v.errorf("name", v.w.Pos, "", "the workflow has no name (add name: with lowercase letters, digits, - and _)")
	case !workflowName.MatchString(v.w.Name):
		v.errorf("name", v.w.Pos, "", "workflow name %q may hold only lowercase letters, digits, - and _", v.w.Name)
	}
}

func (v *validator) inputs() {
	seen := map[string]Pos{}
	for i, in := range v.w.Inputs {
		path := fmt.Sprintf("inputs[%d]", i)
		switch {
		case in.Name == "":
			v.errorf(path+".name", in.Pos, "", "input has no name")
		case !inputName.MatchString(in.Name):
			v.errorf(path+".name", in.Pos, "", "input name %q may hold only letters, digits and _, and must not start with a digit", in.Name)
		}
		if first, dup := seen[in.Name]; dup && in.Name != "" {
			v.errorf(path+".name", in.Pos, "", "duplicate input %q%s", in.Name, atLine("first declared at", first))
		} else {
			seen[in.Name] = in.Pos
		}
		v.input(path, "input", in)
	}
}

// input checks one declaration: its type, default, enum, pattern and bounds.
func (v *validator) input(path, kind string, in Input) {
	label := describeNamed(kind, in.Name)
	if in.Type != "" && !slices.Contains(inputTypes, in.Type) {
		v.oneOf(path+".type", in.Pos, label, "type", string(in.Type), stringsOf(inputTypes), true)
		return
	}
	if in.Pattern != "" {
		if _, err := regexp.Compile(in.Pattern); err != nil {
			v.errorf(path+".pattern", in.Pos, "", "%s: pattern %q does not compile: %v", label, in.Pattern, err)
			return
		}
		if in.Type != "" && in.Type != TypeString {
			v.errorf(path+".pattern", in.Pos, "", "%s: pattern applies to string inputs, not %s", label, in.Type)
		}
	}
	if in.Min != nil && in.Max != nil && *in.Min > *in.Max {
		v.errorf(path+".min", in.Pos, "", "%s: min %s is more than max %s", label, formatNum(*in.Min), formatNum(*in.Max))
	}
	if in.FileExists && in.DirExists {
		v.errorf(path+".dir_exists", in.Pos, "", "%s: file_exists and dir_exists exclude each other", label)
	}
	if (in.FileExists || in.DirExists) && in.Type != "" && in.Type != TypeString {
		v.errorf(path+".type", in.Pos, "", "%s: file_exists and dir_exists apply to string inputs, not %s", label, in.Type)
	}
	for _, e := range in.Enum {
		if _, err := convertInput(in.Type, e); err != nil {
			v.errorf(path+".enum", in.Pos, "", "%s: enum value %s", label, err)
		}
	}
	if in.HasDefault && in.Default != nil {
		if _, err := in.coerce(in.Default); err != nil {
			v.errorf(path+".default", in.Pos, "", "default of %s: %s", label, err)
		}
	}
}

func (v *validator) tools() {
	seen := map[string]Pos{}
	for i, t := range v.w.Tools {
		path := fmt.Sprintf("tools[%d]", i)
		switch {
		case t.Name == "":
			v.errorf(path+".name", t.Pos, "", "tool has no name")
		case !toolName.MatchString(t.Name):
			v.errorf(path+".name", t.Pos, "", "tool name %q may hold only letters, digits, - and _ (at most 64)", t.Name)
		}
		if first, dup := seen[t.Name]; dup && t.Name != "" {
			v.errorf(path+".name", t.Pos, "", "duplicate tool %q%s", t.Name, atLine("first defined at", first))
		} else {
			seen[t.Name] = t.Pos
		}
		v.oneOf(path+".approval", t.Pos, describeNamed("tool", t.Name), "approval", t.Approval, approvalModes, true)
		v.toolKind(path, t)
		v.params(path, t)
		v.restrictions(path, t)
		if r := t.Restrictions; r != nil {
			v.oneOf(path+".restrictions.exec", t.Pos, describeNamed("tool", t.Name), "exec", r.Exec, execModes, true)
		}
	}
}

// toolKind checks that a tool is at most one of: a built-in, a command template, a library tool.
func (v *validator) toolKind(path string, t ToolSpec) {
	var kinds []string
	if t.Builtin {
		kinds = append(kinds, "builtin")
	}
	if t.Command != "" {
		kinds = append(kinds, "command")
	}
	if t.Use != "" {
		kinds = append(kinds, "use")
	}
	if len(kinds) > 1 {
		v.errorf(path+"."+kinds[1], t.Pos, "", "tool %q sets %s; a tool is a built-in, a command or a library tool, only one", t.Name, strings.Join(kinds, " and "))
	}
	if len(t.Parameters) > 0 && t.Command == "" {
		v.errorf(path+".parameters", t.Pos, "", "tool %q has parameters but no command to use them", t.Name)
	}
	if t.Verify != "" && t.Command == "" {
		v.errorf(path+".verify", t.Pos, "", "tool %q has verify but no command: verify checks a command tool's calls "+
			"(built-in tools bring their own checks)", t.Name)
	}
}

func (v *validator) params(path string, t ToolSpec) {
	seen := map[string]bool{}
	for j, p := range t.Parameters {
		ppath := fmt.Sprintf("%s.parameters[%d]", path, j)
		switch {
		case p.Name == "":
			v.errorf(ppath+".name", p.Pos, "", "parameter of tool %q has no name", t.Name)
		case seen[p.Name]:
			v.errorf(ppath+".name", p.Pos, "", "tool %q: duplicate parameter %q", t.Name, p.Name)
		}
		seen[p.Name] = true
		in := Input{Name: p.Name, Type: p.Type, Enum: p.Enum, Default: p.Default, HasDefault: p.Default != nil, Pos: p.Pos}
		v.input(ppath, "parameter", in)
	}
}

func (v *validator) providers() {
	for _, name := range sortedNames(v.w.Providers) {
		p := v.w.Providers[name]
		if p.Type == "" && slices.Contains(providerTypes, name) {
			continue
		}
		v.oneOf("providers."+name+".type", p.Pos, describeNamed("provider", name), "type", p.Type, providerTypes, false)
	}
}

func (v *validator) mcpServers() {
	for _, name := range sortedNames(v.w.MCPServers) {
		s := v.w.MCPServers[name]
		switch {
		case s.Command == "" && s.URL == "":
			v.errorf("mcp_servers."+name, s.Pos, "", "MCP server %q needs a command or a url", name)
		case s.Command != "" && s.URL != "":
			v.errorf("mcp_servers."+name+".url", s.Pos, "", "MCP server %q has both a command and a url; keep one", name)
		}
	}
}

func (v *validator) policy() {
	p := v.w.Sandbox
	if p == nil {
		return
	}
	v.oneOf("sandbox.network", p.Pos, "", "network", p.Network, networkModes, true)
	v.oneOf("sandbox.enforce", p.Pos, "", "enforce", p.Enforce, enforceModes, true)
	v.oneOf("sandbox.exec", p.Pos, "", "exec", p.Exec, execModes, true)
	v.oneOf("sandbox.backend", p.Pos, "", "backend", p.Backend, backends, true)
	v.interpreters("sandbox.commands", p.Pos, p.Commands)
	if p.Image != "" && p.Backend != "container" {
		v.warnf("sandbox.image", p.Pos, "image is used only with backend: container")
	}
	l := p.Limits
	if l.Timeout < 0 || l.Output < 0 || l.Memory < 0 || l.PIDs < 0 || l.FileSize < 0 || l.CPU < 0 {
		v.errorf("sandbox.limits", p.Pos, "", "sandbox limits must not be negative")
	}
}

func (v *validator) approval() {
	a := v.w.Approval
	if a == nil {
		return
	}
	v.oneOf("approval.default", a.Pos, "", "approval default", a.Default, approvalModes, true)
	for i, r := range a.Rules {
		v.oneOf(fmt.Sprintf("approval.rules[%d].decision", i), r.Pos, "approval rule", "decision", r.Decision, approvalModes, false)
	}
	if a.Timeout < 0 {
		v.errorf("approval.timeout", a.Pos, "", "approval timeout must not be negative")
	}
}

func sortedNames[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// describeNamed names a thing for messages: `tool "x"`, or just "tool" when it has no name.
func describeNamed(kind, name string) string {
	if name == "" {
		return kind
	}
	return fmt.Sprintf("%s %q", kind, name)
}

// atLine points at an earlier definition: " (first defined at line 3)", or "" when the
// position is unknown.
func atLine(what string, p Pos) string {
	if p.Line <= 0 {
		return ""
	}
	return fmt.Sprintf(" (%s line %d)", what, p.Line)
}
