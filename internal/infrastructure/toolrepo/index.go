// Package toolrepo installs tool manifests from a tool registry: a directory or an HTTP(S)
// URL holding an index.json that lists versioned packages with the SHA-256 checksum of every
// file. It picks versions by semver constraint, verifies every byte it fetches, and installs
// each package atomically into <dir>/<owner>/<name>/<version>/, the layout
// manifest.Installed reads. It never runs a tool.
//
// # Registry layout
//
//	index.json
//	acme/summarize/1.0.0/config.yaml     <- a package: a seed 000 manifest ...
//	acme/summarize/1.0.0/prompt.txt      <- ... and any files it ships
//
// # index.json
//
//	{
//	  "format": 1,
//	  "tools": [
//	    {"ref": "acme/summarize", "description": "...",
//	     "versions": [
//	       {"version": "1.0.0", "dir": "acme/summarize/1.0.0",
//	        "files": [{"path": "config.yaml", "size": 312, "sha256": "9f86d0..."}]}]}
//	  ]
//	}
//
// dir is relative to the registry's root and path relative to dir, both with "/" and only
// letters, digits, ".", "_" and "-" in each element (no "..", no absolute paths). Every
// version ships a config.yaml whose name is the ref's name. BuildIndex writes this file for a
// directory laid out as above.
package toolrepo

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/awf-dev/awf/internal/bom"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/infrastructure/manifest"
	"github.com/awf-dev/awf/internal/semver"
)

// IndexFile is the name of a registry's index at its root.
const IndexFile = "index.json"

// IndexFormat is the only index format version this package reads and writes.
const IndexFormat = 1

// MaxFiles bounds the files of one package.
const MaxFiles = 256

// Index is a registry's index.json: every tool it offers, with its versions.
type Index struct {
	Format int         `json:"format"`
	Tools  []IndexTool `json:"tools"`
}

// IndexTool is one owner/name and its versions.
type IndexTool struct {
	Ref         string         `json:"ref"`
	Description string         `json:"description,omitempty"`
	Versions    []IndexVersion `json:"versions"`
}

// IndexVersion is one version's package: a directory of files, each with its checksum.
type IndexVersion struct {
	Version string      `json:"version"`
	Dir     string      `json:"dir"`
	Files   []IndexItem `json:"files"`
}

// IndexItem is one file of a package, as it must arrive: its size and SHA-256 (hex).
type IndexItem struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

var (
	pathElem = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`) })
	hexSum   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-fA-F]{64}$`) })
)

// safePath reports whether p is a relative "/"-separated path of plain elements: nothing a
// registry writes can land outside the package it installs.
func safePath(p string) bool {
	if p == "" || len(p) > 1024 {
		return false
	}
	for _, el := range strings.Split(p, "/") {
		if el == "." || el == ".." || !pathElem().MatchString(el) {
			return false
		}
	}
	return true
}

// decodeIndex reads and checks an index. Anything wrong with it is a fault.Execution error:
// the registry, not the user, is at fault.
func decodeIndex(where string, data []byte) (*Index, error) {
	data, err := bom.Strip(data)
	if err != nil {
		return nil, fault.New(fault.Execution, "registry %s: %s: %w", where, IndexFile, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var idx Index
	if err := dec.Decode(&idx); err != nil {
		return nil, fault.New(fault.Execution, "registry %s: %s is not a valid index: %v", where, IndexFile, err)
	}
	if err := idx.Check(); err != nil {
		return nil, fault.New(fault.Execution, "registry %s: %s: %w", where, IndexFile, err)
	}
	return &idx, nil
}

// Check reports the first thing wrong with the index: an unknown format, a bad or duplicate
// ref or version, an unsafe path, a missing config.yaml, a malformed checksum.
func (idx *Index) Check() error {
	if idx.Format != IndexFormat {
		return fmt.Errorf("format %d is not supported (want %d)", idx.Format, IndexFormat)
	}
	refs := map[string]bool{}
	for _, t := range idx.Tools {
		if err := checkRef(t.Ref); err != nil {
			return err
		}
		if refs[t.Ref] {
			return fmt.Errorf("tool %s is listed twice", t.Ref)
		}
		refs[t.Ref] = true
		versions := map[string]bool{}
		for _, v := range t.Versions {
			if _, err := semver.StrictNewVersion(v.Version); err != nil {
				return fmt.Errorf("tool %s: version %q is not a semantic version", t.Ref, v.Version)
			}
			if versions[v.Version] {
				return fmt.Errorf("tool %s: version %s is listed twice", t.Ref, v.Version)
			}
			versions[v.Version] = true
			if err := v.check(); err != nil {
				return fmt.Errorf("tool %s@%s: %w", t.Ref, v.Version, err)
			}
		}
	}
	return nil
}

func (v IndexVersion) check() error {
	if !safePath(v.Dir) {
		return fmt.Errorf("dir %q: want a relative path of plain names", v.Dir)
	}
	if len(v.Files) > MaxFiles {
		return fmt.Errorf("%d files: at most %d", len(v.Files), MaxFiles)
	}
	seen := map[string]bool{}
	for _, f := range v.Files {
		switch {
		case !safePath(f.Path):
			return fmt.Errorf("file %q: want a relative path of plain names", f.Path)
		case seen[f.Path]:
			return fmt.Errorf("file %s is listed twice", f.Path)
		case !hexSum().MatchString(f.SHA256):
			return fmt.Errorf("file %s: sha256 %q is not 64 hex digits", f.Path, f.SHA256)
		case f.Size < 0:
			return fmt.Errorf("file %s: negative size", f.Path)
		}
		seen[f.Path] = true
	}
	for p := range seen {
		for q := range seen {
			if strings.HasPrefix(q, p+"/") {
				return fmt.Errorf("file %s is also a directory of %s", p, q)
			}
		}
	}
	if !seen[manifest.ConfigFile] {
		return fmt.Errorf("no %s in the package", manifest.ConfigFile)
	}
	return nil
}

// checkRef checks an owner/name without a constraint; the owner becomes a directory, so "."
// and ".." are refused although the reference syntax allows dots.
func checkRef(ref string) error {
	owner, _, constraint, err := tool.ParseRef(ref)
	switch {
	case err != nil:
		return err
	case owner == "":
		return fmt.Errorf("tool %q: want owner/name", ref)
	case constraint != "":
		return fmt.Errorf("tool %q: the index lists refs without a version constraint", ref)
	case strings.Trim(owner, ".") == "":
		return fmt.Errorf("tool %q: bad owner %q", ref, owner)
	}
	return nil
}

// Tool returns the index entry of owner/name.
func (idx *Index) Tool(ref string) (IndexTool, bool) {
	i := slices.IndexFunc(idx.Tools, func(t IndexTool) bool { return t.Ref == ref })
	if i < 0 {
		return IndexTool{}, false
	}
	return idx.Tools[i], true
}

// Pick returns the highest version satisfying constraint ("" accepts any release). No
// version satisfying it is a fault.Invalid error listing what there is.
func (t IndexTool) Pick(constraint string) (IndexVersion, error) {
	var c *semver.Constraints
	if constraint != "" {
		var err error
		if c, err = semver.NewConstraint(constraint); err != nil {
			return IndexVersion{}, fault.New(fault.Usage, "%s@%s: bad version constraint: %v", t.Ref, constraint, err)
		}
	}
	var best IndexVersion
	var bestV *semver.Version
	var all []string
	for _, v := range t.Versions {
		sv := semver.MustParse(v.Version) // checked by Index.Check
		all = append(all, v.Version)
		ok := c == nil && sv.Prerelease() == "" || c != nil && c.Check(sv)
		if ok && (bestV == nil || sv.GreaterThan(bestV)) {
			best, bestV = v, sv
		}
	}
	if bestV == nil {
		want := "a release"
		if constraint != "" {
			want = constraint
		}
		return IndexVersion{}, fault.New(fault.Invalid, "no version of %s satisfies %s (the registry has: %s)",
			t.Ref, want, strings.Join(orNone(all), ", "))
	}
	return best, nil
}

func orNone(s []string) []string {
	if len(s) == 0 {
		return []string{"none"}
	}
	return s
}

// BuildIndex scans a registry directory laid out as <owner>/<name>/<version>/ and returns
// the index of every package in it with the checksums of its files. A version directory
// without config.yaml, or whose manifest names another tool, is an error. It is how a
// registry's publisher writes index.json (`awf tools index DIR`).
func BuildIndex(root string) (*Index, error) {
	idx := &Index{Format: IndexFormat, Tools: []IndexTool{}}
	owners, err := dirs(root)
	if err != nil {
		return nil, err
	}
	for _, owner := range owners {
		names, err := dirs(filepath.Join(root, owner))
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			t, err := buildTool(root, owner, name)
			if err != nil {
				return nil, err
			}
			if len(t.Versions) > 0 {
				idx.Tools = append(idx.Tools, t)
			}
		}
	}
	if err := idx.Check(); err != nil {
		return nil, fault.New(fault.Invalid, "index of %s: %w", root, err)
	}
	return idx, nil
}

func buildTool(root, owner, name string) (IndexTool, error) {
	t := IndexTool{Ref: owner + "/" + name}
	versions, err := dirs(filepath.Join(root, owner, name))
	if err != nil {
		return t, err
	}
	var sorted []*semver.Version
	for _, v := range versions {
		sv, err := semver.StrictNewVersion(v)
		if err != nil {
			return t, fault.New(fault.Invalid, "%s: %q is not a semantic version", filepath.Join(root, owner, name), v)
		}
		sorted = append(sorted, sv)
	}
	slices.SortFunc(sorted, func(a, b *semver.Version) int { return a.Compare(b) })
	for _, sv := range sorted {
		dir := owner + "/" + name + "/" + sv.Original()
		v, desc, err := buildVersion(root, dir, name)
		if err != nil {
			return t, err
		}
		t.Versions = append(t.Versions, v)
		t.Description = desc
	}
	return t, nil
}

func buildVersion(root, dir, name string) (IndexVersion, string, error) {
	v := IndexVersion{Version: filepath.Base(dir), Dir: dir}
	base := filepath.Join(root, filepath.FromSlash(dir))
	err := filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", path)
		}
		rel, _ := filepath.Rel(base, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		v.Files = append(v.Files, IndexItem{Path: filepath.ToSlash(rel), Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])})
		return nil
	})
	if err != nil {
		return v, "", fault.Wrap(fault.Invalid, fmt.Errorf("index %s: %w", base, err))
	}
	m, probs, err := manifest.LoadManifest(filepath.Join(base, manifest.ConfigFile))
	if errors.Is(err, fs.ErrNotExist) {
		return v, "", fault.New(fault.Invalid, "%s: no %s", base, manifest.ConfigFile)
	}
	if err != nil {
		return v, "", err
	}
	if errs := probs.Errors(); len(errs) > 0 {
		return v, "", fault.New(fault.Invalid, "%s", errs.Error())
	}
	if m.Name != name {
		return v, "", fault.New(fault.Invalid, "%s: manifest name %q does not match the directory %q", base, m.Name, name)
	}
	return v, m.Description, nil
}

// dirs lists the subdirectories of dir, sorted, skipping hidden ones.
func dirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fault.Wrap(fault.Usage, fmt.Errorf("read registry directory: %w", err))
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// WriteIndex writes idx as root/index.json, atomically.
func WriteIndex(root string, idx *Index) error {
	data, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return fault.Wrap(fault.System, err)
	}
	return writeAtomic(filepath.Join(root, IndexFile), append(data, '\n'))
}

// writeAtomic writes a file through a temporary file in the same directory and a rename.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".index-*")
	if err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("write %s: %w", path, err))
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fault.Wrap(fault.System, fmt.Errorf("write %s: %w", path, err))
	}
	if err := tmp.Close(); err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("write %s: %w", path, err))
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fault.Wrap(fault.System, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("write %s: %w", path, err))
	}
	return nil
}
