package semver

import (
	"fmt"
	"testing"

	upstream "github.com/Masterminds/semver/v3"
)

// versions and constraints are inputs from the original's tests and the grammar's corners.
var (
	versions = []string{
		"1.2.3", "v1.2.3", "1.0", "v1.0", "1", "v1.2.3-beta.1", "1.2.3-alpha.01", "1.2.3+test.01",
		"1.2.3-alpha.-1", "v1.2.3-alpha.1+build.2", "1.2.3-beta.1+build.345", "1.2-5", "1.2-beta.5",
		"\n1.2", "1.2.0-x.Y.0+metadata", "1.2.0-x.Y.0+metadata-width-hyphen", "1.2.3-rc1-with-hyphen",
		"1.2.3.4", "1.2.2147483648", "1.2147483648.3", "2147483648.3.0", "20221209-update-renovatejson-v4",
		"1.2.beta", "foo", "", "01.2.3", "1.02.3", "1.2.03", "v", "1.2.3-", "1.2.3+", "1.2.3-0", "1.2.3-00",
		"0.0.0", "0.1.0", "0.0.1", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta",
		"1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "2.0.0", "2.1.1", "4.1.0", "5.0.0-alpha",
		"99999999999999999999.0.0", "1.2.3-a.b.c.1.2.3", "1.2.3-🙂", "1.2.x", "v1.x", "1.2.3 ",
	}
	constraints = []string{
		"1.2.3", "=1.2.3", "!=4.1", ">1.1", "<2", ">=1.1", "=>1.1", "<=1.1", "=<1.1", "~1.2.3", "~>1.2.3",
		"^1.2.3", "^0.2.3", "^0.0.3", "^0.0", "^0", "~0", "~1", "~1.x", "1.x", "1.2.x", "*", "x", "X",
		">= 1.1 <2", ">1.1, <3", "1.1 - 2", "1.1 - 3.4.5-beta.2", "1.1-3", ">1.1 || <1.0", "4.1 || 1.2 - 1.5",
		"^1.2.3-beta.1", ">=1.0.0-alpha", "<1.0.0-rc.1", "!=1.x", ">1.x", "<=2.x", "~1.2.3-beta.2",
		">= 1.2, < 3.0.0 || >= 4.2.3", "1.2.3 - 4.5.6", "^ 1.2", "foo", ">>1", "", "1 ||", "|| 2",
		"=v1.2.3", "v1.2.3 - v2", "> 1.1 < 2.0", "1.1 - 2 || 3.0.0 - 4", ">1,<", "^1.2.3+meta",
	}
)

// TestVersionsAsUpstream parses every version as the original does: same error or the same
// version, and the same order between every two of them.
func TestVersionsAsUpstream(t *testing.T) {
	type parsed struct {
		ours *Version
		up   *upstream.Version
	}
	var ok []parsed
	for _, s := range versions {
		for name, parse := range map[string]func(string) (*Version, error){"NewVersion": NewVersion, "StrictNewVersion": StrictNewVersion} {
			upParse := upstream.NewVersion
			if name == "StrictNewVersion" {
				upParse = upstream.StrictNewVersion
			}
			v, err := parse(s)
			uv, uerr := upParse(s)
			if fmt.Sprint(err) != fmt.Sprint(uerr) {
				t.Errorf("%s(%q) error = %v, upstream %v", name, s, err, uerr)
				continue
			}
			if err != nil {
				continue
			}
			if v.String() != uv.String() || v.Original() != uv.Original() || v.Prerelease() != uv.Prerelease() ||
				v.Metadata() != uv.Metadata() || v.Major() != uv.Major() || v.Minor() != uv.Minor() || v.Patch() != uv.Patch() {
				t.Errorf("%s(%q) = %v, upstream %v", name, s, v, uv)
			}
			ok = append(ok, parsed{v, uv})
		}
	}
	for _, a := range ok {
		for _, b := range ok {
			if a.ours.Compare(b.ours) != a.up.Compare(b.up) || a.ours.Equal(b.ours) != a.up.Equal(b.up) ||
				a.ours.LessThan(b.ours) != a.up.LessThan(b.up) || a.ours.GreaterThan(b.ours) != a.up.GreaterThan(b.up) {
				t.Errorf("%s against %s: compared unlike upstream", a.ours.Original(), b.ours.Original())
			}
		}
	}
}

// TestConstraintsAsUpstream parses every constraint as the original does and checks every
// version against it, with and without pre-releases.
func TestConstraintsAsUpstream(t *testing.T) {
	for _, s := range constraints {
		c, err := NewConstraint(s)
		uc, uerr := upstream.NewConstraint(s)
		if fmt.Sprint(err) != fmt.Sprint(uerr) {
			t.Errorf("NewConstraint(%q) error = %v, upstream %v", s, err, uerr)
			continue
		}
		if err != nil {
			continue
		}
		if c.String() != uc.String() {
			t.Errorf("NewConstraint(%q) = %q, upstream %q", s, c, uc)
		}
		for _, vs := range versions {
			v, err := NewVersion(vs)
			if err != nil {
				continue
			}
			uv := upstream.MustParse(vs)
			for _, pre := range []bool{false, true} {
				c.IncludePrerelease, uc.IncludePrerelease = pre, pre
				if got, want := c.Check(v), uc.Check(uv); got != want {
					t.Errorf("NewConstraint(%q).Check(%q) with pre-releases %v = %v, upstream %v", s, vs, pre, got, want)
				}
			}
		}
	}
}

// TestLimits keeps the original's bounds on input length.
func TestLimits(t *testing.T) {
	long := fmt.Sprintf("%0300d", 1)
	if _, err := NewVersion(long); err != ErrVersionTooLong {
		t.Errorf("NewVersion(300 digits) = %v, want ErrVersionTooLong", err)
	}
	if _, err := NewConstraint(long + long); err != ErrConstraintTooLong {
		t.Errorf("NewConstraint(600 digits) = %v, want ErrConstraintTooLong", err)
	}
	many := "1"
	for range MaxConstraintGroups {
		many += " || 1"
	}
	if _, err := NewConstraint(many); err != ErrTooManyConstraintGroups {
		t.Errorf("NewConstraint(33 groups) = %v, want ErrTooManyConstraintGroups", err)
	}
}
