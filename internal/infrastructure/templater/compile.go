package templater

import (
	"errors"
	"fmt"
	"reflect"
	"unicode/utf8"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/checker"
	"github.com/expr-lang/expr/compiler"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/optimizer"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"

	"github.com/awf-dev/awf/internal/shorten"
)

// fetchFunc is the function every name and member access is rewritten to call. Its name is not
// an identifier expr can lex, so an expression can neither call it nor shadow it.
const fetchFunc = "awf:fetch"

// rawFunc marks a value that a command template splices into the shell source on purpose.
const rawFunc = "raw"

// program is one compiled expression.
type program struct {
	src  string
	prog *vm.Program
	// chains are the outermost name-rooted references (inputs.x, states.a.output), for
	// static checks.
	chains []*ref
	// raws are the raw() calls; whole is true when raw(...) is the entire expression.
	raws []rawUse
	// typ is the expression's static type as expr-lang's checker infers it: every name is
	// fetched at run time (an interface), so it is a concrete type only when the result does
	// not come straight from a name (a literal, a comparison, a len()).
	typ reflect.Type
}

type rawUse struct {
	offset int
	whole  bool
}

// wholeRaw reports whether the expression is exactly one raw(...) call.
func (p *program) wholeRaw() bool { return len(p.raws) == 1 && p.raws[0].whole }

// compileExpr parses src, rewrites every name and member access into a checked fetch (so that a
// miss is an error naming its path rather than expr's silent nil), and compiles the result.
//
// expr-lang returns nil for a missing map key and has no hook for it, so the tree is rewritten
// before compilation: `inputs.x` becomes `fetch(fetch($env, "inputs", r1), "x", r2)`
// where r1 and r2 describe the accesses for error messages. Rewriting our own copy of the
// tree, with parents known, keeps function names and let-bound names untouched; expr's Patch
// visitors see nodes without their parents.
func compileExpr(src string) (*program, error) {
	if off, deep := tooDeep(src); deep {
		return nil, &SyntaxError{Offset: off, Msg: fmt.Sprintf("expression nested deeper than %d levels; awf refuses expressions this deep", maxExprDepth)}
	}
	cfg := config()
	tree, err := parser.ParseWithConfig(src, cfg)
	if err != nil {
		return nil, syntaxError(src, err)
	}
	rw := &rewriter{src: src}
	rw.visit(&tree.Node, true)
	typ, err := checker.Check(tree, cfg)
	if err != nil {
		return nil, syntaxError(src, err)
	}
	if err := optimizer.Optimize(&tree.Node, cfg); err != nil {
		return nil, syntaxError(src, err)
	}
	prog, err := compiler.Compile(tree, cfg)
	if err != nil {
		return nil, syntaxError(src, err)
	}
	p := &program{src: src, prog: prog, raws: rw.raws, typ: typ}
	for _, r := range rw.refs {
		if !r.parent && r.root != "" {
			p.chains = append(p.chains, r)
		}
	}
	return p, nil
}

// config is the expr configuration of every expression: the builtins, raw and the fetch.
func config() *conf.Config {
	c := conf.CreateNew()
	expr.Function(fetchFunc, fetch, new(func(any, any, *ref) any))(c)
	expr.Function(rawFunc, func(params ...any) (any, error) { return params[0], nil }, new(func(any) any))(c)
	return c
}

// syntaxError turns expr's error into a SyntaxError with a byte offset into src.
func syntaxError(src string, err error) error {
	var fe *file.Error
	if !errors.As(err, &fe) {
		return &SyntaxError{Msg: fmt.Sprintf("%q: %v", shortened(trimSpace(src)), err)}
	}
	return &SyntaxError{Offset: byteOffset(src, fe.From), Msg: fmt.Sprintf("%s in %q", fe.Message, shortened(trimSpace(src)))}
}

// shortened is s cut to 120 bytes: a message quotes the expression it is about, which the
// position already points at, and a file of long expressions with errors would otherwise
// print each of them whole.
func shortened(s string) string { return shorten.To(s, 120) }

// maxExprDepth is how deeply an expression may nest: brackets, and prefix operators in a row
// (!, not, -, +). expr-lang parses by recursive descent; 100,000 levels took 265 MB of stack
// before its node limit refused them.
const maxExprDepth = 256

// tooDeep returns the offset of the first bracket or prefix operator of src that takes it
// past maxExprDepth, counting outside string literals. A run of prefix operators counts on
// top of the brackets open, so the count can only be above the parser's depth, never below.
func tooDeep(src string) (int, bool) {
	depth, run := 0, 0
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			if i = stringEnd(src, i); i < 0 {
				return 0, false // unterminated: the parser says so
			}
			run = 0
		case c == '(' || c == '[' || c == '{':
			if depth++; depth+run > maxExprDepth {
				return i, true
			}
		case c == ')' || c == ']' || c == '}':
			depth, run = max(depth-1, 0), 0
		case c == '!' || c == '-' || c == '+':
			if run++; depth+run > maxExprDepth {
				return i, true
			}
		case isSpace(c):
		case isWordByte(c):
			j := i
			for j < len(src) && isWordByte(src[j]) {
				j++
			}
			if src[i:j] != "not" {
				run = 0
			} else if run++; depth+run > maxExprDepth {
				return i, true
			}
			i = j - 1
		default:
			run = 0
		}
	}
	return 0, false
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// byteOffset converts expr's rune offset to a byte offset.
func byteOffset(s string, runes int) int {
	off := 0
	for i := 0; i < runes && off < len(s); i++ {
		_, size := utf8.DecodeRuneInString(s[off:])
		off += size
	}
	return off
}

// rewriter replaces names and member accesses by fetch calls, collecting what it saw.
type rewriter struct {
	src  string
	lets []string // names bound by enclosing let declarations
	refs []*ref
	raws []rawUse
}

// visit rewrites the tree at p. whole says whether p is the root of the expression.
func (rw *rewriter) visit(p *ast.Node, whole bool) {
	switch n := (*p).(type) {
	case *ast.IdentifierNode:
		rw.name(p, n)
	case *ast.MemberNode:
		rw.member(p, n)
	case *ast.CallNode:
		if id, ok := n.Callee.(*ast.IdentifierNode); ok {
			if id.Value == rawFunc {
				rw.raws = append(rw.raws, rawUse{offset: byteOffset(rw.src, n.Location().From), whole: whole})
			}
		} else {
			rw.visit(&n.Callee, false)
		}
		rw.visitAll(n.Arguments)
	case *ast.VariableDeclaratorNode:
		rw.visit(&n.Value, false)
		rw.lets = append(rw.lets, n.Name)
		rw.visit(&n.Expr, false)
		rw.lets = rw.lets[:len(rw.lets)-1]
	case *ast.BinaryNode:
		rw.visit(&n.Left, false)
		rw.visit(&n.Right, false)
		if n.Operator == "??" {
			markLenient(n.Left)
		}
	case *ast.ChainNode:
		rw.visit(&n.Node, whole)
	case *ast.UnaryNode:
		rw.visit(&n.Node, false)
	case *ast.SliceNode:
		rw.visit(&n.Node, false)
		rw.visitOpt(&n.From)
		rw.visitOpt(&n.To)
	case *ast.BuiltinNode:
		rw.visitAll(n.Arguments)
	case *ast.PredicateNode:
		rw.visit(&n.Node, false)
	case *ast.SequenceNode:
		rw.visitAll(n.Nodes)
	case *ast.ConditionalNode:
		rw.visit(&n.Cond, false)
		rw.visit(&n.Exp1, false)
		rw.visit(&n.Exp2, false)
	case *ast.ArrayNode:
		rw.visitAll(n.Nodes)
	case *ast.MapNode:
		rw.visitAll(n.Pairs)
	case *ast.PairNode:
		rw.visit(&n.Key, false)
		rw.visit(&n.Value, false)
	}
}

func (rw *rewriter) visitAll(nodes []ast.Node) {
	for i := range nodes {
		rw.visit(&nodes[i], false)
	}
}

func (rw *rewriter) visitOpt(p *ast.Node) {
	if *p != nil {
		rw.visit(p, false)
	}
}

// name rewrites a free name into a fetch from the scope.
func (rw *rewriter) name(p *ast.Node, n *ast.IdentifierNode) {
	if n.Value == "$env" || rw.isLet(n.Value) {
		return
	}
	r := &ref{
		text: n.Value, full: n.Value, key: n.Value, static: true, segs: []string{n.Value},
		root: n.Value, offset: byteOffset(rw.src, n.Location().From),
	}
	rw.replace(p, &ast.IdentifierNode{Value: "$env"}, &ast.StringNode{Value: n.Value}, r)
}

// member rewrites a.b, a["b"] and a[i] into a fetch.
func (rw *rewriter) member(p *ast.Node, n *ast.MemberNode) {
	text, baseText := n.String(), n.Node.String()
	rw.visit(&n.Node, false)
	rw.visit(&n.Property, false)
	if n.Method {
		return // a method call on a Go value: expr resolves it
	}
	r := &ref{text: text, full: text, baseText: baseText, lenient: n.Optional,
		offset: byteOffset(rw.src, n.Location().From)}
	if s, ok := n.Property.(*ast.StringNode); ok {
		r.key = s.Value
	}
	if b := refOf(n.Node); b != nil {
		b.parent = true
		r.base, r.root, r.offset = b, b.root, b.offset
		r.lenient = r.lenient || b.lenient
		if _, ok := n.Property.(*ast.StringNode); ok && b.static {
			r.static, r.segs = true, append(append([]string(nil), b.segs...), r.key)
		}
		for x := b; x != nil; x = x.base {
			x.full = text
		}
	}
	rw.replace(p, n.Node, n.Property, r)
}

func (rw *rewriter) replace(p *ast.Node, base, key ast.Node, r *ref) {
	loc := (*p).Location()
	callee := &ast.IdentifierNode{Value: fetchFunc}
	callee.SetLocation(loc)
	meta := &ast.ConstantNode{Value: r}
	meta.SetLocation(loc)
	if base.Location() == (file.Location{}) {
		base.SetLocation(loc)
	}
	if key.Location() == (file.Location{}) {
		key.SetLocation(loc)
	}
	ast.Patch(p, &ast.CallNode{Callee: callee, Arguments: []ast.Node{base, key, meta}})
	rw.refs = append(rw.refs, r)
}

func (rw *rewriter) isLet(name string) bool {
	for _, l := range rw.lets {
		if l == name {
			return true
		}
	}
	return false
}

// refOf returns the reference a rewritten node fetches, or nil.
func refOf(n ast.Node) *ref {
	if c, ok := n.(*ast.ChainNode); ok {
		n = c.Node
	}
	call, ok := n.(*ast.CallNode)
	if !ok || len(call.Arguments) != 3 {
		return nil
	}
	if id, ok := call.Callee.(*ast.IdentifierNode); !ok || id.Value != fetchFunc {
		return nil
	}
	meta, ok := call.Arguments[2].(*ast.ConstantNode)
	if !ok {
		return nil
	}
	r, _ := meta.Value.(*ref)
	return r
}

// markLenient makes the chain on the left of ?? tolerate a miss at any depth.
func markLenient(n ast.Node) {
	for r := refOf(n); r != nil; r = r.base {
		r.lenient = true
	}
}

func trimSpace(s string) string {
	start, end := 0, len(s)
	for start < end && isSpace(s[start]) {
		start++
	}
	for end > start && isSpace(s[end-1]) {
		end--
	}
	return s[start:end]
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
