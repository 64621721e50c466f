package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// seatbeltSpec is a spec as Compile makes it for a workspace dir: the system directories
// readable, the workspace writable, the default protected patterns, a private temp dir.
func seatbeltSpec(dir string) *Spec {
	s := &Spec{Version: SpecVersion, Dir: dir, Read: []string{"/bin", "/etc", "/usr"}, Write: []string{dir},
		Network: Network{Mode: NetworkNone}, Plan: &Plan{DropUID: -1, TempDir: "/private/tmp/awf-sandbox-1", Seatbelt: true}}
	for _, p := range DefaultProtect {
		s.Protect = append(s.Protect, filepath.Join(dir, p))
	}
	return s
}

// renderProfile is a profile as the golden files hold it: the text, then the parameters.
func renderProfile(p SeatbeltProfile) string {
	var b strings.Builder
	b.WriteString(p.Text)
	b.WriteString(";; parameters (sandbox-exec -D NAME=VALUE)\n")
	for _, prm := range p.Params {
		fmt.Fprintf(&b, ";; %s=%q\n", prm.Name, prm.Value)
	}
	return b.String()
}

// TestSeatbeltGolden pins the profile generated for each policy shape: paths and protected
// paths, git hooks left readable, the three network modes, the exec allowlist. The files
// under testdata/seatbelt are what was reviewed; UPDATE_GOLDEN=1 rewrites them.
func TestSeatbeltGolden(t *testing.T) {
	self := "/usr/local/bin/awf"
	tests := []struct {
		name string
		edit func(*Spec)
		exec *ExecSet
	}{
		{"paths", func(*Spec) {}, nil},
		{"protect-extra-and-hooks-visible", func(s *Spec) {
			s.Protect = append(s.Protect, "/Users/dev/proj/secrets/*.pem", "/Users/dev/proj/**/id_rsa*")
			s.Visible = []string{"/Users/dev/proj/.git/hooks"}
		}, nil},
		{"network-allowlist", func(s *Spec) {
			s.Network = Network{Mode: NetworkAllowlist, Hosts: []string{"proxy.golang.org"}, ProxyPort: 41234}
		}, nil},
		{"network-host", func(s *Spec) { s.Network = Network{Mode: NetworkHost} }, nil},
		{"exec-allowlist", func(s *Spec) {
			s.ExecAllowlist, s.RestrictCommands, s.Commands = true, true, []string{"git", "go"}
		}, &ExecSet{Programs: []string{"/usr/bin/git", "/usr/local/go/bin/go", "/bin/sh"},
			Libraries: []string{"/usr/local/lib/libgit2.dylib"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := seatbeltSpec("/Users/dev/proj")
			tc.edit(s)
			p, err := Seatbelt(s, SeatbeltInput{Self: self, Exec: tc.exec})
			if err != nil {
				t.Fatal(err)
			}
			checkGoldenFile(t, filepath.Join("testdata", "seatbelt", tc.name+".sb"), renderProfile(p))
		})
	}
}

// checkGoldenFile compares got with the file, or rewrites it with UPDATE_GOLDEN=1.
func checkGoldenFile(t *testing.T, path, got string) {
	t.Helper()
	if os.Getenv("UPDATE_GOLDEN") != "" {
		must(t, os.MkdirAll(filepath.Dir(path), 0o755))
		must(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with UPDATE_GOLDEN=1 to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s is stale (UPDATE_GOLDEN=1 rewrites it); got:\n%s", path, got)
	}
}

// TestSeatbeltNetworkAllowlistWithoutPortIsNone: no proxy port, no network rule at all.
func TestSeatbeltNetworkAllowlistWithoutPortIsNone(t *testing.T) {
	none, allow := seatbeltSpec("/w"), seatbeltSpec("/w")
	allow.Network = Network{Mode: NetworkAllowlist, Hosts: []string{"example.com"}}
	a, err := Seatbelt(none, SeatbeltInput{Self: "/awf"})
	must(t, err)
	b, err := Seatbelt(allow, SeatbeltInput{Self: "/awf"})
	must(t, err)
	if a.Text != b.Text || strings.Contains(b.Text, "network") {
		t.Errorf("allowlist without a proxy port differs from none or allows network:\n%s", b.Text)
	}
}

// TestSeatbeltHostilePaths: paths with quotes, parentheses, semicolons, backslashes and
// newlines reach sandbox-exec as parameters only; the profile's text holds none of them and
// is the same as for a plain path but for the protected patterns, which become the paths
// matching them (the Linux layer's rule) instead of regular expressions.
func TestSeatbeltHostilePaths(t *testing.T) {
	hostile := []string{
		`/Users/x/a"b`,
		"/Users/x/a)(allow default)(b",
		"/Users/x/line\n(allow default)",
		`/Users/x/back\slash; comment`,
		"/Users/x/#\"regex\"",
	}
	for _, dir := range hostile {
		s := seatbeltSpec(dir)
		s.Read = append(s.Read, dir+"/ro")
		var asked []string
		p, err := Seatbelt(s, SeatbeltInput{Self: dir + "/awf", Matches: func(pattern string) []string {
			asked = append(asked, pattern)
			return []string{filepath.Join(dir, ".env")}
		}})
		if err != nil {
			t.Fatalf("%q: %v", dir, err)
		}
		if strings.Contains(p.Text, "/Users/x") || strings.Contains(p.Text, "allow default") {
			t.Errorf("%q reached the profile's text:\n%s", dir, p.Text)
		}
		want := map[string]bool{dir: false, dir + "/ro": false, dir + "/awf": false, filepath.Join(dir, ".env"): false}
		for _, prm := range p.Params {
			if _, ok := want[prm.Value]; ok {
				want[prm.Value] = true
			}
		}
		for v, found := range want {
			if !found {
				t.Errorf("%q: no parameter holds %q exactly; params %q", dir, v, p.Params)
			}
		}
		if len(asked) == 0 {
			t.Errorf("%q: the ** patterns were not protected by their matches", dir)
		}
	}
}

// TestSeatbeltRegex checks the regular expressions of protected globs with Go's regexp,
// whose syntax they share for the constructs used (anchors, groups, ?, *, brackets).
func TestSeatbeltRegex(t *testing.T) {
	tests := []struct {
		glob    string
		match   []string
		nomatch []string
	}{
		{"/w/**/.env", []string{"/w/.env", "/w/a/b/.ENV", "/w/.env/x", "/w/a/.Env"},
			[]string{"/w/x.env", "/w/.envrc", "/other/.env", "/wx/.env"}},
		{"/w/**/.env.*", []string{"/w/.env.local", "/w/a/.ENV.prod", "/w/.env.local/x"},
			[]string{"/w/.env", "/w/.envrc"}},
		{"/w/**/.git/hooks", []string{"/w/sub/.git/hooks", "/w/a/b/.git/hooks/pre-commit"},
			[]string{"/w/.git/hooks", "/w/.git/hooksx"}},
		{"/w/.git/modules/**/hooks", []string{"/w/.git/modules/sub/hooks", "/w/.git/modules/a/b/hooks/pre-commit"},
			[]string{"/w/.git/hooks", "/w/.git/modules/sub/hooksx"}},
		{"/w/secrets/*.pem", []string{"/w/secrets/a.pem", "/w/secrets/a.PEM"},
			[]string{"/w/secrets/sub/a.pem", "/w/secrets/a.pem2"}},
		{"/w/k[ab]y", []string{"/w/kay", "/w/kBy"}, []string{"/w/kcy"}},
	}
	for _, tc := range tests {
		re, ok := globRegex(tc.glob)
		if !ok {
			t.Fatalf("globRegex(%q) refused", tc.glob)
		}
		rx := regexp.MustCompile(re)
		for _, p := range tc.match {
			if !rx.MatchString(p) {
				t.Errorf("%q (%s) does not match %q", tc.glob, re, p)
			}
		}
		for _, p := range tc.nomatch {
			if rx.MatchString(p) {
				t.Errorf("%q (%s) matches %q", tc.glob, re, p)
			}
		}
	}
	for _, glob := range []string{`/w/"x"/*`, "/w/a\nb/*", `/w/\/*`, "/w/(x)/*", "/w/[a-z]", "/w/x$/*"} {
		if re, ok := globRegex(glob); ok {
			t.Errorf("globRegex(%q) = %q, want a refusal", glob, re)
		}
	}
}

func TestSBPLString(t *testing.T) {
	for in, want := range map[string]string{
		`plain`:    `"plain"`,
		`a"b`:      `"a\"b"`,
		`a\b`:      `"a\\b"`,
		"a\nb\x7f": `"a\x0ab\x7f"`,
	} {
		if got := sbplString(in); got != want {
			t.Errorf("sbplString(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestSeatbeltRefusals(t *testing.T) {
	s := seatbeltSpec("/w")
	if _, err := Seatbelt(s, SeatbeltInput{Self: "awf"}); err == nil {
		t.Error("a relative executable was accepted")
	}
	s.ExecAllowlist = true
	if _, err := Seatbelt(s, SeatbeltInput{Self: "/awf"}); err == nil {
		t.Error("an exec allowlist without its resolved programs was accepted")
	}
}

// TestExpectOn covers layer selection and fail-closed refusals with fake probes of macOS and
// Windows, and a Linux spec that requires Seatbelt.
func TestExpectOn(t *testing.T) {
	mac := Report{OS: "darwin", Arch: "arm64", UID: 501, Seatbelt: true}
	noSeatbelt := Report{OS: "darwin", Arch: "arm64", UID: 501}
	win := Report{OS: "windows", Arch: "amd64", UID: -1}
	tests := []struct {
		name        string
		rep         Report
		edit        func(*Spec)
		backend     string
		missing     Layer // "" when allowed
		reasonHas   string
		execApplied bool
	}{
		{"mac best effort", mac, func(*Spec) {}, "seatbelt", "", "", false},
		{"mac strict", mac, func(s *Spec) { s.Strict = true }, "seatbelt", "", "", false},
		{"mac exec allowlist", mac, func(s *Spec) { s.ExecAllowlist = true }, "seatbelt", "", "", true},
		{"mac require landlock", mac, func(s *Spec) { s.Require = []Layer{LayerLandlock} }, "seatbelt", LayerLandlock, "Linux only (this is darwin)", false},
		{"mac without seatbelt, best effort", noSeatbelt, func(*Spec) {}, "none", "", "", false},
		{"mac without seatbelt, strict", noSeatbelt, func(s *Spec) { s.Strict = true }, "none", LayerSeatbelt, "did not apply a test profile", false},
		{"mac without seatbelt, exec allowlist", noSeatbelt, func(s *Spec) { s.ExecAllowlist = true }, "none", LayerSeatbelt, "", false},
		{"mac seatbelt simulated away", mac, func(s *Spec) { s.Unavailable = []Layer{LayerSeatbelt}; s.Require = []Layer{LayerSeatbelt} }, "none", LayerSeatbelt, "simulated", false},
		{"windows best effort", win, func(*Spec) {}, "none", "", "", false},
		{"windows strict", win, func(s *Spec) { s.Strict = true }, "none", LayerLandlock, "Linux only (this is windows)", false},
		{"windows exec allowlist", win, func(s *Spec) { s.ExecAllowlist = true }, "none", LayerLandlock, "Linux only", false},
		{"windows require seatbelt", win, func(s *Spec) { s.Require = []Layer{LayerSeatbelt} }, "none", LayerSeatbelt, "macOS only (this is windows)", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := seatbeltSpec("/w")
			s.Plan = nil
			tc.edit(s)
			a, err := ExpectOn(s, tc.rep)
			if a.Backend != tc.backend || a.Has(LayerSeatbelt) != (tc.backend == "seatbelt") || (a.Exec != "") != tc.execApplied {
				t.Errorf("applied = %+v, want backend %s", a, tc.backend)
			}
			var miss *MissingError
			switch {
			case tc.missing == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.missing != "" && (!errors.As(err, &miss) || miss.Layer != tc.missing || !strings.Contains(miss.Reason, tc.reasonHas)):
				t.Errorf("error = %v, want layer %s missing (%q)", err, tc.missing, tc.reasonHas)
			}
		})
	}
}

// TestRequireSeatbeltOnLinux: a policy that requires Seatbelt is refused on Linux, saying it
// is not a layer there.
func TestRequireSeatbeltOnLinux(t *testing.T) {
	s := seatbeltSpec("/w")
	s.Require = []Layer{LayerSeatbelt}
	a := Applied{Backend: "clone", Layers: LayersOn("linux")}
	var miss *MissingError
	if err := a.missingOn(s, "linux"); !errors.As(err, &miss) || miss.Layer != LayerSeatbelt || !strings.Contains(err.Error(), "no such layer on linux") {
		t.Errorf("missingOn = %v, want seatbelt refused as no layer of linux", err)
	}
	if _, err := ParseLayer("seatbelt"); err != nil {
		t.Errorf("ParseLayer(seatbelt) = %v", err)
	}
}

// TestReportPerOS: awf doctor lists the layers of the machine's OS only.
func TestReportPerOS(t *testing.T) {
	mac := Report{OS: "darwin", Arch: "arm64", Seatbelt: true}
	mac.Layers = mac.verdicts()
	if len(mac.Layers) != 1 || mac.Layers[0].Layer != LayerSeatbelt || !mac.Layers[0].Available ||
		!strings.HasSuffix(mac.String(), "every layer is available: tool processes run under all of them\n") {
		t.Errorf("macOS report = %+v\n%s", mac.Layers, mac)
	}
	if weaker := mac.Without(LayerSeatbelt); weaker.Available(LayerSeatbelt) || weaker.Seatbelt {
		t.Errorf("Without(seatbelt) keeps it: %+v", weaker.Layers)
	}
	mac.Seatbelt = false
	mac.Layers = mac.verdicts()
	if mac.Layers[0].Available || !strings.Contains(mac.String(), "missing: seatbelt") || !strings.Contains(mac.String(), "sandbox-exec") {
		t.Errorf("macOS report without Seatbelt:\n%s", mac)
	}
	win := Report{OS: "windows", Arch: "amd64"}
	win.Layers = win.verdicts()
	if len(win.Layers) != 0 || !strings.Contains(win.String(), "awf has no OS layer on windows") {
		t.Errorf("windows report:\n%s", win)
	}
	linux := Report{OS: "linux", Arch: "amd64"}
	linux.Layers = linux.verdicts()
	for _, s := range linux.Layers {
		if s.Layer == LayerSeatbelt {
			t.Errorf("the Linux report lists seatbelt")
		}
	}
}
