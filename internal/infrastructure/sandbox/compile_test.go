package sandbox

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/google/go-cmp/cmp"
)

var ctx = Context{Dir: "/work/ws", Home: "/home/u"}

func withSystem(user ...string) []string {
	return minimalRoots(append(slices.Clone(SystemRead), user...))
}

var defaultProtect = []string{"/work/ws/**/.env", "/work/ws/**/.env.*", "/work/ws/**/.git/config", "/work/ws/**/.git/hooks", "/work/ws/.awf", "/work/ws/.envrc", "/work/ws/.git/config", "/work/ws/.git/config.worktree", "/work/ws/.git/hooks", "/work/ws/.git/modules/**/config", "/work/ws/.git/modules/**/hooks"}

func TestCompileDefaults(t *testing.T) {
	got, err := Compile(nil, nil, ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := &Spec{
		Version: SpecVersion,
		Dir:     "/work/ws",
		Read:    SystemRead,
		Write:   []string{"/work/ws"},
		Protect: defaultProtect,
		Network: Network{Mode: NetworkNone},
		Limits:  Limits{PIDs: DefaultPIDs, NoFile: DefaultNoFile},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Compile(nil) mismatch (-want +got):\n%s", diff)
	}
}

func TestCompilePaths(t *testing.T) {
	tests := []struct {
		name        string
		paths       workflow.PathPolicy
		narrow      []string
		read, write []string
	}{
		{
			name:  "globs become their static prefix",
			paths: workflow.PathPolicy{Read: []string{"src/**/*.go", "docs/*.md"}, Write: []string{"build/**"}},
			read:  withSystem("/work/ws/docs", "/work/ws/src"),
			write: []string{"/work/ws/build"},
		},
		{
			name:  "home and absolute paths",
			paths: workflow.PathPolicy{Read: []string{"~/go/pkg/mod", "/data/x/../y"}, Write: []string{"~/.cache/go-build"}},
			read:  withSystem("/data/y", "/home/u/go/pkg/mod"),
			write: []string{"/home/u/.cache/go-build"},
		},
		{
			name:  "write covers read",
			paths: workflow.PathPolicy{Read: []string{"src"}, Write: []string{"."}},
			read:  SystemRead,
			write: []string{"/work/ws"},
		},
		{
			name:  "an explicit empty write list writes nothing",
			paths: workflow.PathPolicy{Write: []string{}},
			read:  withSystem("/work/ws"),
			write: []string{},
		},
		{
			name:   "restrictions narrow read and write",
			paths:  workflow.PathPolicy{Read: []string{"."}, Write: []string{"."}},
			narrow: []string{"src/**", "/etc/passwd"},
			read:   SystemRead,
			write:  []string{"/work/ws/src"},
		},
		{
			name:   "restrictions cannot widen",
			paths:  workflow.PathPolicy{Write: []string{"build"}},
			narrow: []string{"/", "/tmp"},
			read:   withSystem("/work/ws"),
			write:  []string{"/work/ws/build"},
		},
		{
			name:   "disjoint restrictions leave nothing",
			paths:  workflow.PathPolicy{Read: []string{"a"}, Write: []string{"a"}},
			narrow: []string{"b"},
			read:   SystemRead,
			write:  []string{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Compile(&workflow.Policy{Paths: tc.paths}, &workflow.Restrictions{Paths: tc.narrow}, ctx)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.read, got.Read); diff != "" {
				t.Errorf("Read mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.write, got.Write); diff != "" {
				t.Errorf("Write mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompileProtectAlwaysHasDefaults(t *testing.T) {
	got, err := Compile(&workflow.Policy{Paths: workflow.PathPolicy{Protect: []string{"secrets/*", "/etc/x"}}}, nil, ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]string{"/etc/x"}, defaultProtect...)
	want = append(want, "/work/ws/secrets/*")
	slices.Sort(want)
	if diff := cmp.Diff(want, got.Protect); diff != "" {
		t.Errorf("Protect mismatch (-want +got):\n%s", diff)
	}
}

func TestCompileCommands(t *testing.T) {
	tests := []struct {
		name           string
		policy, narrow []string
		want           []string
		restrict       bool
	}{
		{name: "no allowlist"},
		{name: "policy", policy: []string{"go", "git", "go"}, want: []string{"git", "go"}, restrict: true},
		{name: "relative paths become absolute", policy: []string{"./build.sh"}, want: []string{"/work/ws/build.sh"}, restrict: true},
		{name: "restriction alone", narrow: []string{"git"}, want: []string{"git"}, restrict: true},
		{name: "intersection", policy: []string{"git", "go"}, narrow: []string{"go", "curl"}, want: []string{"go"}, restrict: true},
		{name: "empty intersection allows nothing", policy: []string{"git"}, narrow: []string{"curl"}, want: []string{}, restrict: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Compile(&workflow.Policy{Commands: tc.policy}, &workflow.Restrictions{Commands: tc.narrow}, ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !cmp.Equal(tc.want, got.Commands) || got.RestrictCommands != tc.restrict {
				t.Errorf("Compile commands %v ∩ %v = %v (restrict %v), want %v (restrict %v)", tc.policy, tc.narrow, got.Commands, got.RestrictCommands, tc.want, tc.restrict)
			}
		})
	}
}

func TestCompileNetwork(t *testing.T) {
	tests := []struct {
		name   string
		mode   string
		hosts  []string
		narrow []string
		want   Network
	}{
		{name: "default none", want: Network{Mode: NetworkNone}},
		{name: "hosts imply allowlist", hosts: []string{"API.github.com "}, want: Network{Mode: NetworkAllowlist, Hosts: []string{"api.github.com"}}},
		{name: "allowlist without hosts is none", mode: "allowlist", want: Network{Mode: NetworkNone}},
		{name: "host", mode: "host", hosts: []string{"x"}, want: Network{Mode: NetworkHost}},
		{name: "restriction narrows host to allowlist", mode: "host", narrow: []string{"pypi.org"}, want: Network{Mode: NetworkAllowlist, Hosts: []string{"pypi.org"}}},
		{name: "wildcards intersect", hosts: []string{"*.github.com", "example.org"}, narrow: []string{"api.github.com", "*.example.org", "evil.com"},
			want: Network{Mode: NetworkAllowlist, Hosts: []string{"api.github.com"}}},
		{name: "wildcard restriction keeps the narrower", hosts: []string{"api.github.com"}, narrow: []string{"*.github.com"},
			want: Network{Mode: NetworkAllowlist, Hosts: []string{"api.github.com"}}},
		{name: "none stays none", mode: "none", narrow: []string{"x.com"}, want: Network{Mode: NetworkNone}},
		{name: "disjoint hosts give none", hosts: []string{"a.com"}, narrow: []string{"b.com"}, want: Network{Mode: NetworkNone}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Compile(&workflow.Policy{Network: tc.mode, Hosts: tc.hosts}, &workflow.Restrictions{Hosts: tc.narrow}, ctx)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Network); diff != "" {
				t.Errorf("Network mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name   string
		policy workflow.Policy
		ctx    Context
		want   string
	}{
		{name: "network typo", policy: workflow.Policy{Network: "nnoe"}, want: `unknown mode nnoe (want none, allowlist or host): did you mean "none"?`},
		{name: "enforce typo", policy: workflow.Policy{Enforce: "stric"}, want: `did you mean "strict"?`},
		{name: "unknown layer", policy: workflow.Policy{Require: []string{"landlok"}}, want: `unknown layer "landlok"`},
		{name: "home unknown", policy: workflow.Policy{Paths: workflow.PathPolicy{Read: []string{"~/x"}}}, ctx: Context{Dir: "/w"}, want: "home directory unknown"},
		{name: "empty path", policy: workflow.Policy{Paths: workflow.PathPolicy{Write: []string{""}}}, want: "sandbox.paths.write: empty path"},
		{name: "bad command", policy: workflow.Policy{Commands: []string{"a\nb"}}, want: "bad command name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.ctx
			if c.Dir == "" {
				c = ctx
			}
			_, err := Compile(&tc.policy, nil, c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Compile = %v, want an error containing %q", err, tc.want)
			}
			if fault.KindOf(err) != fault.Invalid {
				t.Errorf("Compile error kind = %v, want invalid", fault.KindOf(err))
			}
		})
	}
	if _, err := Compile(nil, nil, Context{Dir: "relative"}); fault.KindOf(err) != fault.System {
		t.Errorf("Compile with a relative dir = %v, want a system error", err)
	}
}

func TestCompileLimitsAndEnforcement(t *testing.T) {
	p := &workflow.Policy{
		Limits:  workflow.Limits{Memory: 1 << 30, PIDs: 50, FileSize: 1 << 20, CPU: 1.5},
		Enforce: "strict",
		Require: []string{"landlock", "seccomp"},
		Env:     workflow.EnvPolicy{Allow: []string{"GOPATH"}, Set: map[string]string{"CI": "1"}},
	}
	got, err := Compile(p, nil, ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Limits{Memory: 1 << 30, PIDs: 50, FileSize: 1 << 20, CPU: 1.5, NoFile: DefaultNoFile}); got.Limits != want {
		t.Errorf("Limits = %+v, want %+v", got.Limits, want)
	}
	if !got.Strict || !cmp.Equal(got.Require, []Layer{LayerLandlock, LayerSeccomp}) {
		t.Errorf("Strict, Require = %v, %v; want true, [landlock seccomp]", got.Strict, got.Require)
	}
	wantReq := []Layer{LayerLandlock, LayerMountNS, LayerNetNS, LayerNoNewPrivs, LayerPIDNS, LayerRlimits, LayerSeccomp, LayerUID}
	if diff := cmp.Diff(wantReq, got.Required()); diff != "" {
		t.Errorf("Required mismatch (-want +got):\n%s", diff)
	}
}

func TestSpecEncodeDecode(t *testing.T) {
	s, err := Compile(&workflow.Policy{Commands: []string{"git"}, Hosts: []string{"x.org"}}, nil, ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Plan = &Plan{DropUID: NobodyUID, TempDir: "/tmp/awf-sandbox-1", Namespaces: []Layer{LayerMountNS}}
	data, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeSpec(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s, back); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
	bad := []struct{ name, json string }{
		{"unknown field", `{"version":1,"dir":"/w","network":{"mode":"none"},"limits":{},"env":{},"surprise":1}`},
		{"other version", `{"version":2,"dir":"/w","network":{"mode":"none"},"limits":{},"env":{}}`},
		{"relative dir", `{"version":1,"dir":"w","network":{"mode":"none"},"limits":{},"env":{}}`},
		{"unclean path", `{"version":1,"dir":"/w","write":["/w/../etc"],"network":{"mode":"none"},"limits":{},"env":{}}`},
		{"bad mode", `{"version":1,"dir":"/w","network":{"mode":"open"},"limits":{},"env":{}}`},
		{"bad layer", `{"version":1,"dir":"/w","network":{"mode":"none"},"limits":{},"env":{},"require":["magic"]}`},
	}
	for _, tc := range bad {
		if _, err := DecodeSpec([]byte(tc.json)); err == nil {
			t.Errorf("DecodeSpec(%s) = nil error, want one", tc.name)
		}
	}
}

func TestEnvironment(t *testing.T) {
	s := &Spec{Env: Env{Allow: []string{"GOPATH"}, Set: map[string]string{"CI": "1", "PATH": "/opt/bin"}}}
	base := s.BaseEnv([]string{"PATH=/usr/bin", "OPENAI_API_KEY=sk-x", "GOPATH=/go", "LANG=C", "HOME=/root", "broken"})
	if want := []string{"GOPATH=/go", "LANG=C", "CI=1", "PATH=/opt/bin"}; !cmp.Equal(want, base) {
		t.Errorf("BaseEnv = %q, want %q", base, want)
	}
	s.Plan = &Plan{TempDir: "/tmp/awf-sandbox-1"}
	s.Network = Network{Mode: NetworkAllowlist, Hosts: []string{"x"}, ProxyPort: 3128}
	got := s.Environ([]string{"HOME=/root", "A=1", "TMPDIR=/tmp", "https_proxy=http://evil"})
	want := []string{"A=1", "HOME=/tmp/awf-sandbox-1", "TMPDIR=/tmp/awf-sandbox-1", "TMP=/tmp/awf-sandbox-1", "TEMP=/tmp/awf-sandbox-1",
		"HTTP_PROXY=http://127.0.0.1:3128", "http_proxy=http://127.0.0.1:3128", "HTTPS_PROXY=http://127.0.0.1:3128",
		"https_proxy=http://127.0.0.1:3128", "ALL_PROXY=http://127.0.0.1:3128", "all_proxy=http://127.0.0.1:3128"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Environ mismatch (-want +got):\n%s", diff)
	}
}

func TestParseLayer(t *testing.T) {
	for _, l := range Layers() {
		if got, err := ParseLayer(string(l)); err != nil || got != l {
			t.Errorf("ParseLayer(%q) = %q, %v", l, got, err)
		}
		if Hint(l) == "" {
			t.Errorf("Hint(%q) is empty", l)
		}
	}
	_, err := ParseLayer("secomp")
	if err == nil || !strings.Contains(err.Error(), `did you mean "seccomp"?`) {
		t.Errorf("ParseLayer(secomp) = %v, want a did-you-mean", err)
	}
	me := &MissingError{Layer: LayerLandlock, Reason: "kernel has Landlock ABI 0"}
	if fault.KindOf(me) != fault.Denied || !strings.Contains(me.Error(), "CONFIG_SECURITY_LANDLOCK") {
		t.Errorf("MissingError = %q (%v), want denied with a hint", me, fault.KindOf(me))
	}
	var target *MissingError
	if !errors.As(error(me), &target) {
		t.Error("MissingError does not match errors.As")
	}
}

func TestCompileExec(t *testing.T) {
	ctx := Context{Dir: "/work/ws"}
	for _, tc := range []struct {
		name    string
		p       *workflow.Policy
		r       *workflow.Restrictions
		want    bool
		wantErr string
	}{
		{"default", &workflow.Policy{Commands: []string{"ls"}}, nil, false, ""},
		{"policy", &workflow.Policy{Commands: []string{"ls"}, Exec: "allowlist"}, nil, true, ""},
		{"a restriction turns it on", nil, &workflow.Restrictions{Commands: []string{"ls"}, Exec: "allowlist"}, true, ""},
		{"a restriction cannot turn it off", &workflow.Policy{Commands: []string{"ls"}, Exec: "allowlist"}, &workflow.Restrictions{Exec: "any"}, true, ""},
		{"no writable program", &workflow.Policy{Commands: []string{"/work/ws/bin/tool"}, Exec: "allowlist"}, nil, false, "is or holds a writable path"},
		{"no directory holding a writable path", &workflow.Policy{Commands: []string{"/work"}, Exec: "allowlist"}, nil, false, "is or holds a writable path"},
		{"needs commands", &workflow.Policy{Exec: "allowlist"}, nil, false, "needs a command allowlist"},
		{"unknown", &workflow.Policy{Exec: "allowlst"}, nil, false, `sandbox.exec: unknown value allowlst (want any or allowlist): did you mean "allowlist"?`},
		{"unknown restriction", nil, &workflow.Restrictions{Exec: "all"}, false, "restrictions.exec: unknown value all"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Compile(tc.p, tc.r, ctx)
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || fault.KindOf(err) != fault.Invalid {
					t.Errorf("err = %v, want fault.Invalid with %q", err, tc.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case s.ExecAllowlist != tc.want:
				t.Errorf("ExecAllowlist = %v, want %v", s.ExecAllowlist, tc.want)
			case tc.want && !slices.Contains(s.Required(), LayerLandlock):
				t.Errorf("an exec allowlist must require Landlock: %v", s.Required())
			}
		})
	}
}
