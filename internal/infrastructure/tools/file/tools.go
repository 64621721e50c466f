package file

import (
	"fmt"
	"strings"

	"github.com/awf-dev/awf/internal/domain/tool"
)

// Interfaces every file tool implements.
var (
	_ tool.Tool       = (*ReadFile)(nil)
	_ tool.Summarizer = (*ReadFile)(nil)
	_ tool.Annotated  = (*ReadFile)(nil)
	_ tool.Tool       = (*WriteFile)(nil)
	_ tool.Summarizer = (*WriteFile)(nil)
	_ tool.Annotated  = (*WriteFile)(nil)
	_ tool.Tool       = (*ListDir)(nil)
	_ tool.Summarizer = (*ListDir)(nil)
	_ tool.Annotated  = (*ListDir)(nil)
	_ tool.Tool       = (*Glob)(nil)
	_ tool.Summarizer = (*Glob)(nil)
	_ tool.Annotated  = (*Glob)(nil)
	_ tool.Tool       = (*Grep)(nil)
	_ tool.Summarizer = (*Grep)(nil)
	_ tool.Annotated  = (*Grep)(nil)
)

// NewTools compiles the policy once and returns read_file, write_file, list_dir, glob and grep
// sharing it, in that order. It fails with a fault.Invalid error when the working directory
// does not exist or a glob does not compile.
func NewTools(p Policy) ([]tool.Tool, error) {
	c, err := p.compile()
	if err != nil {
		return nil, err
	}
	return []tool.Tool{&ReadFile{c}, &WriteFile{c}, &ListDir{c}, &Glob{c}, &Grep{c}}, nil
}

// NewReadFile returns the read_file tool under policy p (its Read and Protect lists apply).
func NewReadFile(p Policy) (*ReadFile, error) {
	c, err := p.compile()
	if err != nil {
		return nil, err
	}
	return &ReadFile{c}, nil
}

// NewWriteFile returns the write_file tool under policy p (its Write and Protect lists apply).
func NewWriteFile(p Policy) (*WriteFile, error) {
	c, err := p.compile()
	if err != nil {
		return nil, err
	}
	return &WriteFile{c}, nil
}

// NewListDir returns the list_dir tool under policy p (its Read and Protect lists apply).
func NewListDir(p Policy) (*ListDir, error) {
	c, err := p.compile()
	if err != nil {
		return nil, err
	}
	return &ListDir{c}, nil
}

// NewGlob returns the glob tool under policy p (its Read and Protect lists apply).
func NewGlob(p Policy) (*Glob, error) {
	c, err := p.compile()
	if err != nil {
		return nil, err
	}
	return &Glob{c}, nil
}

// NewGrep returns the grep tool under policy p (its Read and Protect lists apply).
func NewGrep(p Policy) (*Grep, error) {
	c, err := p.compile()
	if err != nil {
		return nil, err
	}
	return &Grep{c}, nil
}

// failure turns an error into an error result prefixed with the tool's name; a policy
// refusal becomes a tool.Refused result, which the governed path records as a denial.
func failure(name string, err error) tool.Result {
	if r, ok := tool.AsRefused(err, name+": "+err.Error()); ok {
		return r
	}
	return tool.Errorf(name + ": " + err.Error())
}

// readOnly are the annotations of the tools that never change anything.
func readOnly() tool.Annotations {
	return tool.Annotations{ReadOnly: true, Idempotent: true, Tags: []string{"file"}, Source: "builtin"}
}

// policyText describes the allowed paths for a tool's description.
func (c *checker) policyText(a access) string {
	_, shown := c.rules(a)
	allowed := "nothing"
	if len(shown) > 0 {
		allowed = strings.Join(shown, ", ")
	}
	return fmt.Sprintf("Paths are relative to the working directory %s unless absolute. Allowed %s paths: %s. "+
		".git internals, .awf/ and .env files are protected: never read or written.", c.given, a, allowed)
}

// metaPath shows the path argument as the tools will resolve it, for one-line summaries.
func (c *checker) metaPath(v any, def string) string {
	s, _ := v.(string)
	if s == "" {
		s = def
	}
	if s == "" {
		return "?"
	}
	abs, err := c.resolve(s)
	if err != nil {
		return fmt.Sprintf("%q", s)
	}
	return c.display(abs)
}
