package webui

import (
	"context"
	"sync"

	"github.com/awf-dev/awf/internal/domain/state"
)

// runCacheSize is how many loaded runs the run cache keeps: the pages a reviewer goes back
// and forth between. A run of thousands of calls takes longer to load than to show.
const runCacheSize = 8

// runCache keeps the last runs loaded, each with the fingerprint of its files when it was
// loaded: a run whose files have not changed since is not read again. Safe for concurrent
// use; the runs it returns are shared and must not be changed.
type runCache struct {
	mu   sync.Mutex
	runs []cachedRun // most recently used last
}

type cachedRun struct {
	id  string
	key uint64
	run *state.RunState
}

// load returns run id, from the cache when its files are as they were.
func (s *Server) load(ctx context.Context, id string) (*state.RunState, error) {
	key := s.fingerprint(id + ".")
	c := s.cache
	c.mu.Lock()
	for i, e := range c.runs {
		if e.id == id && e.key == key {
			c.runs = append(append(c.runs[:i:i], c.runs[i+1:]...), e)
			c.mu.Unlock()
			return e.run, nil
		}
	}
	c.mu.Unlock()
	run, err := s.cfg.Runs.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.runs {
		if e.id == id {
			c.runs = append(c.runs[:i:i], c.runs[i+1:]...)
			break
		}
	}
	c.runs = append(c.runs, cachedRun{id: id, key: key, run: run})
	if len(c.runs) > runCacheSize {
		c.runs = c.runs[1:]
	}
	return run, nil
}
