package durable

import (
	"runtime/debug"
	"testing"
)

// TestSameBuild: a helper on PATH is used only when it is provably the same build: same
// module version, Go version and VCS stamp; a build without a VCS stamp matches only a
// released version.
func TestSameBuild(t *testing.T) {
	build := func(version, rev, modified string) *debug.BuildInfo {
		bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/awf-dev/awf", Version: version}}
		if rev != "" {
			bi.Settings = []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: "t"}, {Key: "vcs.modified", Value: modified}}
		}
		return bi
	}
	other := build("(devel)", "abc", "false")
	other.GoVersion = "go1.25.0"
	for _, c := range []struct {
		a, b *debug.BuildInfo
		want bool
	}{
		{build("(devel)", "abc", "false"), build("(devel)", "abc", "false"), true},
		{build("v1.2.3", "", ""), build("v1.2.3", "", ""), true},
		{build("(devel)", "", ""), build("(devel)", "", ""), false},
		{build("(devel)", "abc", "false"), build("(devel)", "abd", "false"), false},
		{build("(devel)", "abc", "false"), build("(devel)", "abc", "true"), false},
		{build("v1.2.3", "", ""), build("v1.2.4", "", ""), false},
		{build("(devel)", "abc", "false"), other, false},
	} {
		if got := sameBuild(c.a, c.b); got != c.want {
			t.Errorf("sameBuild(%+v, %+v) = %v, want %v", c.a.Main, c.b.Settings, got, c.want)
		}
	}
}
