package portstest

import (
	"context"
	"maps"
	"slices"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// Catalog is a [ports.ToolCatalog] over a fixed map of tools. Like the registry, an unknown
// name is a fault.Invalid error suggesting the nearest name. A ToolInfo whose Schema.Name is
// empty is described under its key. Safe for concurrent use once built.
type Catalog map[string]ports.ToolInfo

var _ ports.ToolCatalog = Catalog(nil)

// Describe returns the named tools in order.
func (c Catalog) Describe(_ context.Context, q ports.ToolQuery) ([]ports.ToolInfo, error) {
	out := make([]ports.ToolInfo, 0, len(q.Names))
	for _, name := range q.Names {
		info, ok := c[name]
		if !ok {
			names := slices.Sorted(maps.Keys(c))
			if hint := workflow.DidYouMean(name, names); hint != "" {
				return nil, fault.New(fault.Invalid, "unknown tool %q (%s)", name, hint)
			}
			return nil, fault.New(fault.Invalid, "unknown tool %q", name)
		}
		if info.Schema.Name == "" {
			info.Schema.Name = name
		}
		out = append(out, info)
	}
	return out, nil
}
