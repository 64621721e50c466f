package manifest

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/awf-dev/awf/internal/bom"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// annotations are the keywords of a .tool file, in the order messages list them.
var annotations = []string{"title", "name", "wrapped", "command", "param"}

// ToolFile is a parsed .tool file: exactly one of Alias and Wrapped is set when it has no
// errors.
type ToolFile struct {
	Alias   *tool.Alias
	Wrapped *tool.WrapSpec
}

// ParseToolFile reads a seed 004 .tool file. Every problem names the file and line.
func ParseToolFile(file string, data []byte) (ToolFile, workflow.Problems) {
	p := &toolParser{file: file, seen: map[string]int{}}
	data, err := bom.Strip(data) // a mark left in would begin the description, or hide an @line
	if err != nil {
		p.errorf(1, "", "%v", err)
		return ToolFile{}, p.probs
	}
	p.parse(string(data))
	if len(p.probs) > 0 {
		return ToolFile{}, p.probs
	}
	tf := p.build()
	return tf, p.probs
}

type toolParser struct {
	file  string
	probs workflow.Problems
	desc  []string
	vals  map[string]string
	seen  map[string]int // annotation -> line
	param []tool.Param
	first int // line of the first annotation
}

func (p *toolParser) errorf(line int, hint, format string, args ...any) {
	p.probs = append(p.probs, workflow.Problem{Pos: workflow.Pos{File: p.file, Line: line, Col: 1},
		Msg: fmt.Sprintf(format, args...), Hint: hint})
}

func (p *toolParser) parse(src string) {
	p.vals = map[string]string{}
	for i, line := range strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n") {
		n := i + 1
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "@"):
			if p.first == 0 {
				p.first = n
			}
			p.annotation(n, trimmed)
		case trimmed == "":
		case p.first != 0:
			p.errorf(n, "", "text after the annotations: the description comes first, then a blank line, then the @lines")
		default:
			p.desc = append(p.desc, trimmed)
		}
	}
	if p.first == 0 {
		p.errorf(1, "", "no annotations: a .tool file needs at least @name and @wrapped")
	}
}

func (p *toolParser) annotation(line int, text string) {
	key, rest, _ := strings.Cut(text[1:], " ")
	key, rest = strings.TrimSpace(key), strings.TrimSpace(rest)
	switch {
	case key == "type" || key == "property":
		p.errorf(line, "", "@%s is not supported in .tool files (use @param with a type such as {array<string>})", key)
		return
	case !slices.Contains(annotations, key):
		p.errorf(line, workflow.DidYouMean(key, annotations), "unknown annotation @%s (known: @%s)", key, strings.Join(annotations, ", @"))
		return
	case key == "param":
		p.paramLine(line, rest)
		return
	case rest == "":
		p.errorf(line, "", "@%s needs a value", key)
		return
	}
	if prev, dup := p.seen[key]; dup {
		p.errorf(line, "", "@%s appears twice (first on line %d)", key, prev)
		return
	}
	p.seen[key], p.vals[key] = line, rest
}

var paramLine = sync.OnceValue(func() *regexp.Regexp { // compiled on first use, not at every start
	return regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_-]*)\s+\{([^}]*)\}\s*(?:\[(required|optional)\])?\s*(.*)$`)
})

// paramLine reads "@param name {type} [required] description".
func (p *toolParser) paramLine(line int, rest string) {
	m := paramLine().FindStringSubmatch(rest)
	if m == nil {
		p.errorf(line, "", "malformed @param %q: want @param <name> {<type>} [required] <description>", rest)
		return
	}
	param := tool.Param{Name: m[1], Type: strings.TrimSpace(m[2]), Required: m[3] == "required", Description: m[4]}
	if err := tool.CheckType(param.Type); err != nil {
		p.errorf(line, "", "@param %s: %v", param.Name, err)
		return
	}
	if slices.ContainsFunc(p.param, func(q tool.Param) bool { return q.Name == param.Name }) {
		p.errorf(line, "", "@param %s is declared twice", param.Name)
		return
	}
	if _, seen := p.seen["param"]; !seen {
		p.seen["param"] = line
	}
	p.param = append(p.param, param)
}

// build checks the combination of annotations and makes the alias or the wrapped tool.
func (p *toolParser) build() ToolFile {
	pos := workflow.Pos{File: p.file, Line: p.first, Col: 1}
	for _, required := range []string{"name", "wrapped"} {
		if _, ok := p.vals[required]; !ok {
			p.errorf(p.first, "", "missing @%s (a .tool file needs @name and @wrapped)", required)
		}
	}
	name := p.vals["name"]
	if name != "" && !tool.ValidName(name) {
		p.errorf(p.seen["name"], "", "@name %q: use 1 to 64 letters, digits, _ and -", name)
	}
	desc := strings.Join(p.desc, "\n")
	_, hasCommand := p.vals["command"]
	_, hasTitle := p.vals["title"]
	if !hasCommand {
		for _, extra := range []string{"title", "param"} {
			if line, ok := p.seen[extra]; ok {
				p.errorf(line, "", "@%s without @command: an alias has only @name and @wrapped; a wrapped tool needs @command", extra)
			}
		}
		if desc != "" {
			p.errorf(1, "", "a description without @command: an alias has only @name and @wrapped; a wrapped tool needs @command")
		}
	} else {
		if !hasTitle {
			p.errorf(p.seen["command"], "", "a wrapped tool (with @command) needs @title")
		}
		if desc == "" {
			p.errorf(p.seen["command"], "", "a wrapped tool (with @command) needs a description before its annotations")
		}
	}
	if len(p.probs) > 0 {
		return ToolFile{}
	}
	if !hasCommand {
		return ToolFile{Alias: &tool.Alias{Name: name, Target: p.vals["wrapped"], Source: p.file, Pos: pos}}
	}
	return ToolFile{Wrapped: &tool.WrapSpec{Name: name, Title: p.vals["title"], Description: desc, Wraps: p.vals["wrapped"],
		Command: p.vals["command"], Params: p.param, Source: p.file, Pos: pos}}
}
