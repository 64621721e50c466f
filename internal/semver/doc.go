// Package semver parses semantic versions and checks them against constraints (^1.2, ~1.2.3,
// >= 1.0 < 2, 1.2 - 1.4, 1.x, ||): the versions and constraints of tool manifests and
// registries.
//
// It is a trimmed copy of github.com/Masterminds/semver/v3 v3.5.0 (MIT licence, in
// LICENSE.txt), with the same behaviour and error messages: that package compiles six regular
// expressions in its init functions, 0.3 ms and 200 KB of every awf process, CLI command and
// sandbox helper alike, whether or not it looks at a version. Here they compile on first use.
// What awf does not use (JSON, text and SQL encodings, Inc*, Set*, Validate, collections) is
// left out. The tests check this copy against the original on the original's test vectors.
package semver
