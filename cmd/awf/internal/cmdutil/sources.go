package cmdutil

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"

	"github.com/awf-dev/awf/internal/domain/state"
)

// Sources returns the digests ("sha256:<hex>") of the files a run of a workflow depends on,
// by absolute path: files (the workflow files compile loaded), the tool definitions that
// tools (nil: none) can reach, and also, hashed again, every file of recorded (a run's
// Sources), so that resume sees those that changed or were deleted. A file that cannot be
// read is state.SourceMissing.
func Sources(files []string, tools *Tools, recorded map[string]string) map[string]string {
	out := map[string]string{}
	add := func(p string) {
		if _, ok := out[p]; !ok && filepath.IsAbs(p) {
			out[p] = digestFile(p)
		}
	}
	for _, p := range files {
		add(p)
	}
	if tools != nil && tools.Registry != nil {
		for _, e := range tools.Registry.List() {
			add(e.Source) // "builtin" and other words are not paths
		}
	}
	for p := range recorded {
		add(p)
	}
	return out
}

// digestFile returns the digest of the file at p, or state.SourceMissing.
func digestFile(p string) string {
	f, err := os.Open(p)
	if err != nil {
		return state.SourceMissing
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return state.SourceMissing
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
