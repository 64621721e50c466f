package webui

import (
	"fmt"
	"hash/fnv"
	"net/http"
	"os"
	"strings"
	"time"
)

// events streams server-sent events: "change" whenever the state directory's files change
// (only those of run ?run=ID when given), so that a page showing a running run reloads its
// content. It looks every Poll; the stream ends when the client goes or the server stops.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	prefix := ""
	if id := r.URL.Query().Get("run"); id != "" {
		prefix = id + "."
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	fmt.Fprint(w, "retry: 1000\n\n")
	flusher.Flush()
	last := s.fingerprint(prefix)
	tick := time.NewTicker(s.cfg.Poll)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.stop:
			return
		case <-tick.C:
		}
		now := s.fingerprint(prefix)
		if now == last {
			continue
		}
		last = now
		if _, err := fmt.Fprint(w, "event: change\ndata: {}\n\n"); err != nil {
			return
		}
		flusher.Flush()
	}
}

// fingerprint sums the names, sizes and times of the files in the state directory whose
// names start with prefix (all when it is ""): a run's state file and journal change at every
// save, whatever their layout.
func (s *Server) fingerprint(prefix string) uint64 {
	h := fnv.New64a()
	entries, err := os.ReadDir(s.cfg.StateDir)
	if err != nil {
		fmt.Fprint(h, err.Error())
		return h.Sum64()
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		fmt.Fprintf(h, "%s %d %d\n", e.Name(), fi.Size(), fi.ModTime().UnixNano())
	}
	return h.Sum64()
}
