package registry

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/awf-dev/awf/internal/domain/tool"
)

// resultCache keeps the successful results of pure tools for the life of the registry (one
// run): identical name, version, arguments and input give the stored result.
type resultCache struct {
	mu sync.Mutex
	m  map[string]tool.Result
}

// cacheStage answers calls of cacheable tools from the cache and stores their successes.
func (r *Registry) cacheStage(next Handler) Handler {
	return func(ctx context.Context, c *Call) tool.Result {
		if !c.entry.cacheable {
			return next(ctx, c)
		}
		key, ok := cacheKey(c)
		if !ok {
			return next(ctx, c)
		}
		r.cache.mu.Lock()
		hit, found := r.cache.m[key]
		r.cache.mu.Unlock()
		if found {
			hit.Cached = true
			return hit
		}
		res := next(ctx, c)
		if res.Succeeded() && c.Status == "" {
			r.cache.mu.Lock()
			r.cache.m[key] = res
			r.cache.mu.Unlock()
		}
		return res
	}
}

// cacheKey identifies a call: the resolved definition, its version, the arguments as
// canonical JSON (encoding/json sorts keys) and the input.
func cacheKey(c *Call) (string, bool) {
	args, err := json.Marshal(c.Request.Args)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	for _, part := range []string{c.entry.Ref, c.entry.Version, c.entry.Source, string(args), c.Request.Input} {
		b.WriteString(part)
		b.WriteByte(0)
	}
	return b.String(), true
}
