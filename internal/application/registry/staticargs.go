package registry

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
)

// StaticArgs checks a tool step's arguments against the tool's parameters before anything
// runs, as the call will be checked when the step runs: every name must be a parameter (unless
// the schema takes others), every required parameter must be given, and a value that holds no
// template must convert to its parameter's type and meet its constraints (converted as the
// call converts it: "5" for an integer is 5). A value with a template is known only when the
// step runs, so only its name is checked.
func StaticArgs(v ports.SchemaValidator, params json.RawMessage, args map[string]string) ([]tool.FieldError, error) {
	values := make(map[string]any, len(args))
	var templated []string
	for k, s := range args {
		values[k] = s
		if strings.Contains(s, "{{") {
			templated = append(templated, k)
		}
	}
	errs, err := v.Validate(params, coerce(values, propTypes(params)))
	if err != nil {
		return nil, err
	}
	out := errs[:0]
	for _, e := range errs {
		if !aboutTemplated(e, templated) {
			out = append(out, e)
		}
	}
	return out, nil
}

// aboutTemplated reports whether e is about the value of one of the templated arguments
// (unknown names stay errors: they are wrong whatever the value).
func aboutTemplated(e tool.FieldError, templated []string) bool {
	if strings.HasPrefix(e.Message, "unknown property") {
		return false
	}
	for _, k := range templated {
		for _, p := range []string{"$." + k, "$[" + strconv.Quote(k) + "]"} {
			if rest, ok := strings.CutPrefix(e.Path, p); ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
				return true
			}
		}
	}
	return false
}
