// Package yamlnode holds what the YAML decoders of awf (the workflow loader and the tool
// manifest reader) share about goccy/go-yaml AST nodes, so that their messages about the same
// YAML read the same. It decodes nothing itself.
package yamlnode

import (
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// Kind names a node's kind for messages, with its article: "a mapping", "a list",
// "a string", "an integer", "a number", "a boolean", "null", and "nothing" for a nil node.
// Other nodes are named after their type ("a tag").
func Kind(n ast.Node) string {
	switch n.(type) {
	case nil:
		return "nothing"
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.StringNode, *ast.LiteralNode:
		return "a string"
	case *ast.IntegerNode:
		return "an integer"
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "a number"
	case *ast.BoolNode:
		return "a boolean"
	case *ast.NullNode:
		return "null"
	}
	return "a " + strings.ToLower(n.Type().String())
}
