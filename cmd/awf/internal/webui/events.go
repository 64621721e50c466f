package webui

import (
	"fmt"
	"hash/fnv"
	"net/http"
	"os"
	"slices"
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
	if r.Method == http.MethodHead {
		return
	}
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
	return readDirIndex(s.cfg.StateDir).fingerprint(prefix)
}

// dirIndex is the state directory's listing, sorted by name, read once for a page.
type dirIndex struct {
	entries []os.DirEntry
	err     error
}

func readDirIndex(dir string) dirIndex {
	entries, err := os.ReadDir(dir) // sorted by name
	return dirIndex{entries: entries, err: err}
}

// fingerprint is Server.fingerprint over this listing: a binary search finds the entries
// with the prefix, so that the runs list asks it of every run at little cost.
func (d dirIndex) fingerprint(prefix string) uint64 {
	h := fnv.New64a()
	if d.err != nil {
		fmt.Fprint(h, d.err.Error())
		return h.Sum64()
	}
	i, _ := slices.BinarySearchFunc(d.entries, prefix, func(e os.DirEntry, p string) int { return strings.Compare(e.Name(), p) })
	for _, e := range d.entries[i:] {
		if !strings.HasPrefix(e.Name(), prefix) {
			break
		}
		if fi, err := e.Info(); err == nil {
			fmt.Fprintf(h, "%s %d %d\n", e.Name(), fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return h.Sum64()
}
