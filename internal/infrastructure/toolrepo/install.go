package toolrepo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/infrastructure/manifest"
	"github.com/awf-dev/awf/internal/semver"
)

// MaxPackages bounds how many packages one install may fetch, dependencies included.
const MaxPackages = 500

// Request is a tool to install: owner/name and an optional semver constraint.
type Request struct {
	Ref        string // owner/name
	Constraint string // "" means the highest release
}

// String is owner/name[@constraint].
func (q Request) String() string {
	if q.Constraint == "" {
		return q.Ref
	}
	return q.Ref + "@" + q.Constraint
}

// ParseRequest reads "owner/name[@constraint]". A bare name, a bad owner or a bad constraint
// is a fault.Usage error.
func ParseRequest(s string) (Request, error) {
	owner, name, constraint, err := tool.ParseRef(s)
	if err != nil {
		return Request{}, fault.Wrap(fault.Usage, err)
	}
	if owner == "" {
		return Request{}, fault.New(fault.Usage, "%q: want owner/name[@constraint]", s)
	}
	ref := owner + "/" + name
	if err := checkRef(ref); err != nil {
		return Request{}, fault.Wrap(fault.Usage, err)
	}
	if constraint != "" {
		if _, err := semver.NewConstraint(constraint); err != nil {
			return Request{}, fault.New(fault.Usage, "%s: bad version constraint %q: %v", ref, constraint, err)
		}
	}
	return Request{Ref: ref, Constraint: constraint}, nil
}

// Installer installs packages from a registry into Dir.
type Installer struct {
	Repo *Repo
	// Dir is the install root: packages go to <Dir>/<owner>/<name>/<version>/.
	Dir string
	// Deps installs the dependencies of every package installed or found installed,
	// recursively; without it they are only reported (Report.Unmet).
	Deps bool
}

// Package is one package an install dealt with.
type Package struct {
	Ref     string `json:"ref"` // owner/name
	Version string `json:"version"`
	Dir     string `json:"dir"`
	// Reason says why a package was skipped ("already installed", "installed version
	// satisfies ^1.0.0").
	Reason string `json:"reason,omitempty"`
	// For names the request or the package that needed this one.
	For string `json:"for,omitempty"`
}

// Unmet is a dependency of an installed package that is not installed and was not asked for
// (install with --deps).
type Unmet struct {
	Tool       string `json:"tool"`       // owner/name@version needing it
	Dependency string `json:"dependency"` // owner/name[@constraint]
}

// Report is what Install did.
type Report struct {
	Installed []Package `json:"installed"`
	Skipped   []Package `json:"skipped"`
	Unmet     []Unmet   `json:"unmet,omitempty"`
}

// job is a request on the install queue; top marks one the user asked for.
type job struct {
	req Request
	by  string
	top bool
}

// staged is a package fetched, verified and written to the staging directory.
type staged struct {
	pkg Package
	dir string
	sv  *semver.Version
}

// install is the state of one Install call.
type install struct {
	in      *Installer
	index   *Index
	stage   string
	queue   []job
	seen    map[string]bool // owner/name@version handled
	planned map[string][]*staged
	report  Report
	fetched int
}

// Install installs the requests and, with Deps, what they depend on, cycle-safe. Each
// request gets the highest registry version satisfying its constraint unless that version is
// installed already; a dependency is skipped when any installed version satisfies it.
// Everything is fetched and verified before anything is installed: a checksum or size that
// does not match the index is a fault.Denied error and installs nothing. Each package then
// appears at once (a rename of a complete directory). A request the registry cannot satisfy
// is a fault.Invalid error; an unreachable or malformed registry fault.Execution.
func (in *Installer) Install(ctx context.Context, reqs ...Request) (Report, error) {
	if in.Repo == nil || in.Dir == "" {
		return Report{}, fault.New(fault.System, "toolrepo: Installer needs a Repo and a Dir")
	}
	st := &install{in: in, seen: map[string]bool{}, planned: map[string][]*staged{},
		report: Report{Installed: []Package{}, Skipped: []Package{}}}
	for _, q := range reqs {
		st.queue = append(st.queue, job{req: q, top: true})
	}
	defer func() {
		if st.stage != "" {
			os.RemoveAll(st.stage)
			os.Remove(filepath.Dir(st.stage)) // only when no other install is staging
		}
	}()
	var order []*staged
	for len(st.queue) > 0 {
		j := st.queue[0]
		st.queue = st.queue[1:]
		s, err := st.plan(ctx, j)
		if err != nil {
			return st.report, err
		}
		if s != nil {
			order = append(order, s)
		}
	}
	// Dependencies were queued after their dependents: install them first, so that a
	// dependent never appears before what it needs.
	slices.Reverse(order)
	for _, s := range order {
		if err := st.commit(s); err != nil {
			return st.report, err
		}
	}
	return st.report, nil
}

// plan handles one job: skip it, or fetch and stage its package. It queues dependencies.
func (st *install) plan(ctx context.Context, j job) (*staged, error) {
	if !j.top {
		if p, ok := st.satisfied(j.req); ok {
			if !st.seen[p.Ref+"@"+p.Version] {
				st.seen[p.Ref+"@"+p.Version] = true
				p.For = j.by
				st.report.Skipped = append(st.report.Skipped, p)
				st.queueDeps(p, j)
			}
			return nil, nil
		}
	}
	if st.index == nil {
		idx, err := st.in.Repo.Index(ctx)
		if err != nil {
			return nil, err
		}
		st.index = idx
	}
	t, ok := st.index.Tool(j.req.Ref)
	if !ok {
		msg := fmt.Sprintf("registry %s has no tool %s", st.in.Repo, j.req.Ref)
		if j.by != "" {
			msg += " (needed by " + j.by + ")"
		}
		return nil, fault.New(fault.Invalid, "%s", msg)
	}
	v, err := t.Pick(j.req.Constraint)
	if err != nil {
		if j.by != "" {
			return nil, fmt.Errorf("%w (needed by %s)", err, j.by)
		}
		return nil, err
	}
	key := t.Ref + "@" + v.Version
	if st.seen[key] {
		return nil, nil
	}
	st.seen[key] = true
	final := st.final(t.Ref, v.Version)
	if hasManifest(final) {
		p := Package{Ref: t.Ref, Version: v.Version, Dir: final, Reason: "already installed", For: j.by}
		st.report.Skipped = append(st.report.Skipped, p)
		st.queueDeps(p, j)
		return nil, nil
	}
	s, m, err := st.fetch(ctx, t.Ref, v)
	if err != nil {
		return nil, err
	}
	s.pkg.For = j.by
	st.planned[t.Ref] = append(st.planned[t.Ref], s)
	st.queueManifestDeps(s.pkg, m, j)
	return s, nil
}

// satisfied finds an installed or already planned version that satisfies a dependency.
func (st *install) satisfied(q Request) (Package, bool) {
	var c *semver.Constraints
	if q.Constraint != "" {
		var err error
		if c, err = semver.NewConstraint(q.Constraint); err != nil {
			return Package{}, false
		}
	}
	fits := func(v *semver.Version) bool { return c == nil || c.Check(v) }
	for _, v := range installedVersions(filepath.Join(st.in.Dir, filepath.FromSlash(q.Ref))) {
		if fits(v) {
			reason := "installed version satisfies " + q.Constraint
			if q.Constraint == "" {
				reason = "already installed"
			}
			return Package{Ref: q.Ref, Version: v.Original(), Dir: st.final(q.Ref, v.Original()), Reason: reason}, true
		}
	}
	for _, s := range st.planned[q.Ref] {
		if fits(s.sv) {
			return Package{Ref: q.Ref, Version: s.pkg.Version, Dir: s.pkg.Dir, Reason: "installed by this command"}, true
		}
	}
	return Package{}, false
}

// queueDeps queues the dependencies of an installed package, read from its manifest.
func (st *install) queueDeps(p Package, j job) {
	m, probs, err := manifest.LoadManifest(filepath.Join(p.Dir, manifest.ConfigFile))
	if err != nil || m == nil || len(probs.Errors()) > 0 {
		return // the registry reports a broken installed manifest when it loads it
	}
	st.queueManifestDeps(p, m, j)
}

// queueManifestDeps queues (with Deps) or reports the owner/name tools a manifest needs: its
// dependencies and the owner/name tools its steps call. Bare names are the project's, the
// user's or built-ins: no registry provides them.
func (st *install) queueManifestDeps(p Package, m *tool.Manifest, j job) {
	by := p.Ref + "@" + p.Version
	for _, d := range dependencies(m) {
		q := Request{Ref: d.Ref, Constraint: d.Constraint}
		if st.in.Deps {
			st.queue = append(st.queue, job{req: q, by: by})
			continue
		}
		if _, ok := st.satisfied(q); !ok {
			st.report.Unmet = append(st.report.Unmet, Unmet{Tool: by, Dependency: q.String()})
		}
	}
}

// dependencies lists a manifest's owner/name dependencies, declared or called, once each.
func dependencies(m *tool.Manifest) []tool.Dependency {
	var out []tool.Dependency
	seen := map[string]bool{}
	add := func(s string) {
		d, err := tool.ParseDependency(s)
		if err != nil || !strings.Contains(d.Ref, "/") || seen[d.String()] {
			return
		}
		seen[d.String()] = true
		out = append(out, d)
	}
	for _, d := range m.Dependencies {
		add(d.String())
	}
	for _, r := range m.References() {
		add(r.Tool)
	}
	return out
}

// fetch downloads one version's files, verifies each against the index and writes them to a
// fresh staging directory. It returns the package's manifest, checked.
func (st *install) fetch(ctx context.Context, ref string, v IndexVersion) (*staged, *tool.Manifest, error) {
	st.fetched++
	if st.fetched > MaxPackages {
		return nil, nil, fault.New(fault.Execution, "more than %d packages to install: stopping", MaxPackages)
	}
	where := fmt.Sprintf("%s@%s from %s", ref, v.Version, st.in.Repo)
	if err := st.ensureStage(); err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp(st.stage, "pkg-")
	if err != nil {
		return nil, nil, fault.Wrap(fault.System, fmt.Errorf("stage %s: %w", where, err))
	}
	var total int64
	var config []byte
	for _, f := range v.Files {
		data, err := st.verified(ctx, v.Dir+"/"+f.Path, f, where)
		if err != nil {
			return nil, nil, err
		}
		if total += int64(len(data)); total > st.in.Repo.opts.MaxPackageSize {
			return nil, nil, fault.New(fault.Execution, "%s: the package is larger than %d bytes", where, st.in.Repo.opts.MaxPackageSize)
		}
		if f.Path == manifest.ConfigFile {
			config = data
		}
		if err := writeFile(filepath.Join(dir, filepath.FromSlash(f.Path)), data); err != nil {
			return nil, nil, fault.Wrap(fault.System, fmt.Errorf("stage %s: %w", where, err))
		}
	}
	m, err := checkManifest(ref, v.Version, config, where)
	if err != nil {
		return nil, nil, err
	}
	if err := syncDir(dir); err != nil {
		return nil, nil, fault.Wrap(fault.System, fmt.Errorf("stage %s: %w", where, err))
	}
	sv := semver.MustParse(v.Version)
	return &staged{pkg: Package{Ref: ref, Version: v.Version, Dir: st.final(ref, v.Version)}, dir: dir, sv: sv}, m, nil
}

// verified fetches a file and checks its size and SHA-256 against the index.
func (st *install) verified(ctx context.Context, rel string, f IndexItem, where string) ([]byte, error) {
	if f.Size > st.in.Repo.opts.MaxFileSize {
		return nil, fault.New(fault.Execution, "%s: %s has %d bytes, more than the limit of %d", where, f.Path, f.Size, st.in.Repo.opts.MaxFileSize)
	}
	data, err := st.in.Repo.fetch(ctx, rel, f.Size)
	if err != nil {
		if errors.Is(err, errTooLarge) {
			return nil, fault.New(fault.Denied, "%s: refused: %s is larger than the index says (%d bytes): the registry's files do not match its index; nothing was installed",
				where, f.Path, f.Size)
		}
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if int64(len(data)) != f.Size {
		return nil, fault.New(fault.Denied, "%s: refused: %s has %d bytes, the index says %d: the registry's files do not match its index; nothing was installed",
			where, f.Path, len(data), f.Size)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); !strings.EqualFold(got, f.SHA256) {
		return nil, fault.New(fault.Denied, "%s: refused: checksum mismatch for %s: sha256 %s, the index says %s; nothing was installed",
			where, f.Path, got, strings.ToLower(f.SHA256))
	}
	return data, nil
}

// checkManifest decodes a package's config.yaml and checks it names the tool and version
// the index says it is.
func checkManifest(ref, version string, data []byte, where string) (*tool.Manifest, error) {
	_, name, _ := strings.Cut(ref, "/")
	m, probs := manifest.Decode(manifest.ConfigFile, data)
	if errs := probs.Errors(); len(errs) > 0 || m == nil {
		return nil, fault.New(fault.Execution, "%s: the package's manifest is invalid: %v", where, errs)
	}
	if m.Name != name {
		return nil, fault.New(fault.Execution, "%s: the package's manifest is named %q, not %q", where, m.Name, name)
	}
	if m.Version != "" {
		mv, err := semver.NewVersion(m.Version)
		if err != nil || !mv.Equal(semver.MustParse(version)) {
			return nil, fault.New(fault.Execution, "%s: the package's manifest says version %s", where, m.Version)
		}
	}
	return m, nil
}

// commit moves a staged package into place with one rename. A version that appeared
// meanwhile (another install) is kept.
func (st *install) commit(s *staged) error {
	final := s.pkg.Dir
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("install %s@%s: %w", s.pkg.Ref, s.pkg.Version, err))
	}
	if err := os.Rename(s.dir, final); err != nil {
		if hasManifest(final) {
			s.pkg.Reason = "installed meanwhile by another command"
			st.report.Skipped = append(st.report.Skipped, s.pkg)
			return nil
		}
		return fault.Wrap(fault.System, fmt.Errorf("install %s@%s: %w", s.pkg.Ref, s.pkg.Version, err))
	}
	if err := syncDir(filepath.Dir(final)); err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("install %s@%s: %w", s.pkg.Ref, s.pkg.Version, err))
	}
	st.report.Installed = append(st.report.Installed, s.pkg)
	return nil
}

// ensureStage creates the staging directory beside the install root (so that the final
// rename stays on one file system), outside the tree manifest.Installed reads.
func (st *install) ensureStage() error {
	if st.stage != "" {
		return nil
	}
	root := filepath.Clean(st.in.Dir)
	parent := filepath.Join(filepath.Dir(root), "."+filepath.Base(root)+".staging")
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("create staging directory: %w", err))
	}
	dir, err := os.MkdirTemp(parent, "install-")
	if err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("create staging directory: %w", err))
	}
	st.stage = dir
	return nil
}

func (st *install) final(ref, version string) string {
	return filepath.Join(st.in.Dir, filepath.FromSlash(ref), version)
}

// installedVersions lists the versions installed under <dir> (<Dir>/<owner>/<name>), highest
// first: directories named by a semantic version that hold a config.yaml.
func installedVersions(dir string) []*semver.Version {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []*semver.Version
	for _, e := range entries {
		v, err := semver.StrictNewVersion(e.Name())
		if err == nil && e.IsDir() && hasManifest(filepath.Join(dir, e.Name())) {
			out = append(out, v)
		}
	}
	slices.SortFunc(out, func(a, b *semver.Version) int { return b.Compare(a) })
	return out
}

func hasManifest(dir string) bool {
	info, err := os.Stat(filepath.Join(dir, manifest.ConfigFile))
	return err == nil && info.Mode().IsRegular()
}

// writeFile creates a new file (never through an existing one) and syncs it.
func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, fs.ErrInvalid) {
		return err
	}
	return nil
}
