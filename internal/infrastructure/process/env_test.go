package process

import (
	"os"
	"testing"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/google/go-cmp/cmp"
)

func TestMergeEnv(t *testing.T) {
	tests := []struct {
		name  string
		base  []string
		extra map[string]string
		want  []string
	}{
		{"nothing", nil, nil, []string{}},
		{"base only", []string{"A=1", "B=2"}, nil, []string{"A=1", "B=2"}},
		{"override in place", []string{"A=1", "B=2"}, map[string]string{"A": "x"}, []string{"A=x", "B=2"}},
		{"new names sorted after base", []string{"M=1"}, map[string]string{"Z": "z", "A": "a"}, []string{"M=1", "A=a", "Z=z"}},
		{"later base duplicate wins", []string{"A=1", "A=2"}, nil, []string{"A=2"}},
		{"junk dropped", []string{"junk", "=x", "A=1"}, nil, []string{"A=1"}},
		{"values kept verbatim", []string{"A=b=c"}, map[string]string{"E": ""}, []string{"A=b=c", "E="}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mergeEnv(tc.base, tc.extra)
			if err != nil {
				t.Fatalf("mergeEnv(%q, %v) error: %v", tc.base, tc.extra, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("mergeEnv(%q, %v) mismatch (-want +got):\n%s", tc.base, tc.extra, diff)
			}
		})
	}
	for _, name := range []string{"", "A=B", "A\x00"} {
		if _, err := mergeEnv(nil, map[string]string{name: "x"}); fault.KindOf(err) != fault.Invalid {
			t.Errorf("mergeEnv with name %q = %v, want a fault.Invalid error", name, err)
		}
	}
}

func TestMinimalEnv(t *testing.T) {
	t.Setenv("HOME", "/home/someone")
	t.Setenv("TMPDIR", "/var/tmp")
	t.Setenv("AWF_API_KEY", "secret")
	want := []string{"PATH=" + DefaultPath, "HOME=/home/someone", "LANG=C.UTF-8", "TMPDIR=/var/tmp"}
	if diff := cmp.Diff(want, MinimalEnv()); diff != "" {
		t.Errorf("MinimalEnv() mismatch (-want +got):\n%s", diff)
	}
	os.Unsetenv("HOME")
	if diff := cmp.Diff([]string{"PATH=" + DefaultPath, "LANG=C.UTF-8", "TMPDIR=/var/tmp"}, MinimalEnv()); diff != "" {
		t.Errorf("MinimalEnv() without HOME mismatch (-want +got):\n%s", diff)
	}
}

func TestCheckVars(t *testing.T) {
	for _, name := range []string{"A", "_x", "AWF_T1", "a1"} {
		if err := checkVars(map[string]string{name: ""}); err != nil {
			t.Errorf("checkVars(%q) = %v, want nil", name, err)
		}
	}
	for _, name := range []string{"", "1a", "a-b", "a b", "a=b", "é"} {
		if err := checkVars(map[string]string{name: ""}); fault.KindOf(err) != fault.Invalid {
			t.Errorf("checkVars(%q) = %v, want a fault.Invalid error", name, err)
		}
	}
}

func TestHelperEnv(t *testing.T) {
	t.Setenv("GODEBUG", "x=1")
	t.Setenv("GOCOVERDIR", "/cov")
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	if diff := cmp.Diff([]string{"GOCOVERDIR=/cov", "GORACE=atexit_sleep_ms=0"}, helperEnv()); diff != "" {
		t.Errorf("helperEnv() mismatch (-want +got):\n%s", diff)
	}
}

func TestIsHelper(t *testing.T) {
	tests := []struct {
		args []string
		want bool
	}{
		{[]string{"awf", HelperArg}, true},
		{[]string{"awf", HelperArg, "extra"}, true},
		{[]string{"awf"}, false},
		{nil, false},
		{[]string{"awf", "run", HelperArg}, false},
	}
	for _, tc := range tests {
		if got := IsHelper(tc.args); got != tc.want {
			t.Errorf("IsHelper(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}
