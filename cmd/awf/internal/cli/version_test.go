package cli

import (
	"testing"

	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
)

// TestVersionLine: --version prints the version and, when one was stamped (make build,
// goreleaser), the commit.
func TestVersionLine(t *testing.T) {
	defer func(v, c string) { Version, Commit = v, c }(Version, Commit)
	for _, tc := range []struct{ version, commit, want string }{
		{"dev", "", "awf dev\n"},
		{"1.2.3", "abc1234", "awf 1.2.3 (commit abc1234)\n"},
	} {
		Version, Commit = tc.version, tc.commit
		ios, _, out, _ := iostreams.Test()
		if code := Main(t.Context(), []string{"--version"}, ios, func(string) string { return "" }, nil); code != 0 || out.String() != tc.want {
			t.Errorf("--version with %q, %q = %d, %q; want %q", tc.version, tc.commit, code, out.String(), tc.want)
		}
	}
}
