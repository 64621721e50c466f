package webui

import (
	"os"
	"sync"
	"time"

	"github.com/awf-dev/awf/internal/domain/workflow"
)

// workflowCache keeps the workflows of runs by file while the file is unchanged: a live run
// page is rendered at every save of the run.
type workflowCache struct {
	mu    sync.Mutex
	files map[string]cachedWorkflow
}

type cachedWorkflow struct {
	mod  time.Time
	size int64
	wf   *workflow.Workflow
}

// workflow returns the workflow in file, or nil when there is no loader or it cannot be read
// or loaded as it is now.
func (s *Server) workflow(file string) *workflow.Workflow {
	if s.cfg.Workflows == nil || file == "" {
		return nil
	}
	fi, err := os.Stat(file)
	if err != nil || !fi.Mode().IsRegular() { // the state names it: a FIFO would hang the page
		return nil
	}
	c := s.wfs
	c.mu.Lock()
	e, ok := c.files[file]
	c.mu.Unlock()
	if ok && e.mod.Equal(fi.ModTime()) && e.size == fi.Size() {
		return e.wf
	}
	wf, err := s.cfg.Workflows.Load(file)
	if err != nil {
		wf = nil
	}
	c.mu.Lock()
	c.files[file] = cachedWorkflow{mod: fi.ModTime(), size: fi.Size(), wf: wf}
	c.mu.Unlock()
	return wf
}
