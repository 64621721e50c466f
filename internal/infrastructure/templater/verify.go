package templater

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/awf-dev/awf/internal/infrastructure/shellsyntax"
)

// placement is what verify learns about one bound variable.
type placement struct {
	command    string
	optionLike bool
}

// verify parses script as bash and checks that every bound variable appears exactly once, as
// a quoted expansion, in no context that would evaluate its value as code. raws are the raw
// values spliced into script, for positions. It does not modify ct.
func (ct *commandTemplate) verify(script string, raws []string) (map[string]placement, error) {
	f, err := shellsyntax.Parse(script, "")
	if err != nil {
		return nil, ct.parseError(err, raws)
	}
	byName := make(map[string]*hole, len(ct.holes))
	for _, h := range ct.holes {
		if h.name != "" {
			byName[h.name] = h
		}
	}
	places := map[string]placement{}
	seen := map[string]int{}
	var stack []syntax.Node
	var bad error
	syntax.Walk(f, func(n syntax.Node) bool {
		if bad != nil {
			return false
		}
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		if pe, ok := n.(*syntax.ParamExp); ok && pe.Param != nil && strings.HasPrefix(pe.Param.Value, VarPrefix) {
			seen[pe.Param.Value]++
			var p placement
			p, bad = checkPlacement(byName, pe, stack)
			places[pe.Param.Value] = p
		}
		stack = append(stack, n)
		return true
	})
	if bad != nil {
		return nil, bad
	}
	return places, checkCounts(ct.holes, byName, seen)
}

// checkPlacement checks one expansion of a bound variable against its ancestors.
func checkPlacement(byName map[string]*hole, pe *syntax.ParamExp, stack []syntax.Node) (placement, error) {
	h, ok := byName[pe.Param.Value]
	if !ok {
		return placement{}, errReserved(pe.Param.Value)
	}
	at := func(format string, args ...any) (placement, error) {
		return placement{}, &SyntaxError{Offset: h.start, Msg: fmt.Sprintf(format, args...)}
	}
	if pe.Short || pe.Index != nil || pe.Slice != nil || pe.Repl != nil || pe.Exp != nil || pe.Excl || pe.Length {
		return placement{}, errReserved(pe.Param.Value) // not the form awf writes
	}
	if ctx := codeContext(stack); ctx != "" {
		return at("a template value %s would be evaluated as code; compute it in the expression instead", ctx)
	}
	if !quoted(stack) {
		return at("the shell would not see {{ }} as one quoted word here (check the quotes around it)")
	}
	if cmd, bad := runsAsCode(stack); bad {
		return at("%s runs its argument as shell code, so this value would be code: pass it as a separate argument (sh -c 'grep -- \"$1\" f' sh {{ x }})", cmd)
	}
	cmd, opt := optionLike(stack, pe)
	return placement{command: cmd, optionLike: opt}, nil
}

func errReserved(name string) error {
	return &SyntaxError{Msg: fmt.Sprintf("the command uses $%s: names starting with %s are reserved for template values", name, VarPrefix)}
}

func checkCounts(holes []*hole, byName map[string]*hole, seen map[string]int) error {
	for _, h := range holes {
		if h.name == "" {
			continue
		}
		want := 1
		if h.comment {
			want = 0
		}
		if seen[h.name] > want {
			return errReserved(h.name)
		}
		if seen[h.name] != want {
			return &SyntaxError{Offset: h.start, Msg: "the shell would not read {{ }} as one value here (check the quotes and here-documents around it)"}
		}
	}
	for name := range seen {
		if _, ok := byName[name]; !ok {
			return errReserved(name)
		}
	}
	return nil
}

// quoted reports whether the innermost node of stack (an expansion) is one quoted word: inside
// double quotes that belong to the same word, or in a here-document body. Double quotes
// inside an unquoted ${x:-...} do not count: the outer expansion's result is split.
func quoted(stack []syntax.Node) bool {
	found := false
	for i := len(stack) - 1; i >= 0; i-- {
		switch n := stack[i].(type) {
		case *syntax.DblQuoted:
			found = true
		case *syntax.ParamExp:
			found = false // the enclosing expansion's own quoting decides
		case *syntax.Redirect:
			if i+1 < len(stack) && n.Hdoc != nil && stack[i+1] == syntax.Node(n.Hdoc) {
				return true
			}
			return found
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.Stmt:
			return found // quotes outside a command substitution do not count inside it
		}
	}
	return found
}

// codeContext names an arithmetic context around the innermost node, where bash evaluates a
// variable's value as an expression (which can run commands: a[$(cmd)]). A command
// substitution does not end the context: its output is evaluated.
func codeContext(stack []syntax.Node) string {
	for i := len(stack) - 1; i >= 0; i-- {
		var child any
		if i+1 < len(stack) {
			child = stack[i+1]
		}
		switch n := stack[i].(type) {
		case *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.LetClause, *syntax.CStyleLoop:
			return "in arithmetic"
		case *syntax.ParamExp:
			if child != nil && (child == any(n.Index) || n.Slice != nil && (child == any(n.Slice.Offset) || child == any(n.Slice.Length))) {
				return "in a subscript or offset"
			}
		case *syntax.Assign:
			if child != nil && child == any(n.Index) {
				return "in a subscript"
			}
		case *syntax.ArrayElem:
			if child != nil && child == any(n.Index) {
				return "in a subscript"
			}
		case *syntax.BinaryTest:
			if n.Op >= syntax.TsEql && n.Op <= syntax.TsGtr {
				return "in a numeric [[ ]] comparison"
			}
		}
	}
	return ""
}

// shells run their -c argument as code.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "ash": true, "mksh": true, "busybox": true}

// runsAsCode reports whether the innermost word is, or is inside, an argument that a command
// runs as shell code: any argument of eval, the first of trap, the -c string of a shell. A
// value inside a command substitution counts too: its output becomes the argument.
func runsAsCode(stack []syntax.Node) (string, bool) {
	for i := len(stack) - 2; i >= 0; i-- {
		call, ok := stack[i].(*syntax.CallExpr)
		if !ok {
			continue
		}
		word, ok := stack[i+1].(*syntax.Word)
		if !ok {
			continue
		}
		if arg := argIndex(call, word); arg >= 0 {
			if cmd, bad := codeArg(call, arg); bad {
				return cmd, true
			}
		}
	}
	return "", false
}

func argIndex(call *syntax.CallExpr, w *syntax.Word) int {
	for i, a := range call.Args {
		if a == w {
			return i
		}
	}
	return -1
}

func codeArg(call *syntax.CallExpr, arg int) (string, bool) {
	lits := make([]string, len(call.Args))
	for i, a := range call.Args {
		lits[i] = a.Lit()
	}
	switch lits[0] {
	case "eval":
		return "eval", arg > 0
	case "trap":
		first := 1
		for first < len(lits) && strings.HasPrefix(lits[first], "-") {
			first++
		}
		return "trap", arg == first
	}
	for i, lit := range lits {
		name := lit[strings.LastIndexByte(lit, '/')+1:]
		if shells[name] {
			if code := shellCodeArg(lits, i+1); code > 0 {
				return name + " -c", arg == code
			}
		}
	}
	return "", false
}

// shellCodeArg returns the index of the argument a shell started with options at lits[from:]
// reads its commands from (the first operand after -c), or -1.
func shellCodeArg(lits []string, from int) int {
	c := false
	for j := from; j < len(lits); j++ {
		f := lits[j]
		switch {
		case f == "--":
			if c && j+1 < len(lits) {
				return j + 1
			}
			return -1
		case f == "-o" || f == "+o" || f == "-O" || f == "+O":
			j++ // the option's value
		case len(f) > 1 && (f[0] == '-' || f[0] == '+'):
			c = c || f[0] == '-' && strings.ContainsRune(f, 'c')
		default:
			if c {
				return j
			}
			return -1
		}
	}
	return -1
}

// optionLike reports whether pe starts an argument (not the command name) of a simple command
// with no "--" before it, and names the command.
func optionLike(stack []syntax.Node, pe *syntax.ParamExp) (string, bool) {
	for i := len(stack) - 2; i >= 0; i-- {
		call, ok := stack[i].(*syntax.CallExpr)
		if !ok {
			continue
		}
		word, ok := stack[i+1].(*syntax.Word)
		if !ok {
			return "", false
		}
		arg := argIndex(call, word)
		if arg <= 0 || !startsWith(word, pe) {
			return "", false
		}
		name := call.Args[0].Lit()
		for _, a := range call.Args[1:arg] {
			if a.Lit() == "--" {
				return "", false
			}
			if v, ok := fixedWord(a); stopsAtOperand[name] && ok && !strings.HasPrefix(v, "-") {
				return "", false // after printf's format, echo's first word: never an option
			}
		}
		return name, true
	}
	return "", false
}

// stopsAtOperand are the shell builtins that read options only before their first operand.
var stopsAtOperand = map[string]bool{"printf": true, "echo": true}

// fixedWord returns the value of a word of literal text and quotes, or false.
func fixedWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(lit.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), b.Len() > 0
}

// startsWith reports whether the first non-empty part of w is the expansion pe.
func startsWith(w *syntax.Word, pe *syntax.ParamExp) bool {
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.SglQuoted:
			if p.Value != "" {
				return false
			}
		case *syntax.DblQuoted:
			if len(p.Parts) == 0 {
				continue
			}
			return p.Parts[0] == syntax.WordPart(pe)
		case *syntax.ParamExp:
			return p == pe
		default:
			return false
		}
	}
	return false
}
