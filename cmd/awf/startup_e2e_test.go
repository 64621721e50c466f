//go:build linux

package main

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Package initialisation runs before main in every awf process: each command and each
// sandboxed call's helper (the binary re-executed) pays all of it, whatever it does. These
// budgets, in bytes and allocations that GODEBUG=inittrace=1 reports (counts, not time: they
// do not move with the machine's load), keep a heavy initialisation from coming back
// unnoticed: a package-level regexp, table or template of our own, a dependency that builds
// a big table at init, or a package that belongs elsewhere (the Temporal SDK lives in
// awf-temporal). Measured with Go 1.26.8 on linux/amd64; a Go or dependency upgrade may move
// them: re-measure (GODEBUG=inittrace=1 awf --version) and change the budget in the same
// commit, saying why.
const (
	initBytesBudget   = 250_000 // all packages; 233,100 measured (275,400 with the MCP SDK)
	initAllocsBudget  = 1_450   // 1,352 measured (1,940 with the MCP SDK)
	ownBytesBudget    = 16_000  // github.com/awf-dev/awf/...: 15,000 measured
	ownAllocsBudget   = 180     // 171 measured; one small regexp compiled at init is ~30
	otherBytesBudget  = 6_000   // any package not named in knownHeavyInits
	otherAllocsBudget = 100
)

// knownHeavyInits are the dependencies whose package initialisation allocates more than
// otherBytesBudget, each with its budget (about 10% over what was measured). None can be
// avoided while awf keeps the dependency: jsonschema-go builds its field tables by
// reflection, html/template (awf ui) and mvdan.cc/sh (the shell) their maps.
var knownHeavyInits = map[string][2]int{ // bytes, allocs
	"github.com/google/jsonschema-go/jsonschema": {90_000, 330},
	"html/template":                       {20_000, 100},
	"mvdan.cc/sh/v3/fileutil":             {17_000, 115},
	"unicode":                             {12_500, 18},
	"github.com/expr-lang/expr/builtin":   {11_000, 80},
	"mvdan.cc/sh/v3/interp":               {8_400, 10},
	"vendor/golang.org/x/net/http2/hpack": {8_100, 10},
	"debug/dwarf":                         {7_300, 5},
}

// notInAwf are module and package paths awf must not link: each is another program's
// (awf-temporal's Temporal SDK and its gRPC and protobuf) or the tests' (testcontainers,
// chromedp, the original semver whose regexps compiled at init; the MCP SDK, which brought
// encoding/gob, golang.org/x/oauth2 and segmentio's JSON and CPU detection into every awf
// start: awf speaks MCP through internal/infrastructure/mcp/wire, and the SDK is the tests'
// peer).
var notInAwf = []string{
	"go.temporal.io/", "google.golang.org/grpc", "google.golang.org/protobuf",
	"github.com/testcontainers/", "github.com/chromedp/", "github.com/Masterminds/semver",
	"github.com/moby/moby/client",
	"github.com/modelcontextprotocol/go-sdk", "encoding/gob", "golang.org/x/oauth2", "github.com/segmentio/",
}

// initRecord is one line of GODEBUG=inittrace=1: "init PKG @T ms, C ms clock, B bytes, A allocs".
type initRecord struct {
	pkg           string
	bytes, allocs int
}

func parseInitTrace(t *testing.T, stderr string) []initRecord {
	t.Helper()
	var recs []initRecord
	for line := range strings.Lines(stderr) {
		f := strings.Fields(line)
		if len(f) != 11 || f[0] != "init" || f[8] != "bytes," || f[10] != "allocs" {
			continue
		}
		b, err1 := strconv.Atoi(f[7])
		a, err2 := strconv.Atoi(f[9])
		if err1 != nil || err2 != nil {
			t.Fatalf("inittrace line %q: %v %v", line, err1, err2)
		}
		recs = append(recs, initRecord{pkg: f[1], bytes: b, allocs: a})
	}
	return recs
}

// TestStartupInitBudget runs awf --version with GODEBUG=inittrace=1 and holds the package
// initialisation of the binary to the budgets above.
func TestStartupInitBudget(t *testing.T) {
	if os.Getenv("GOCOVERDIR") != "" {
		t.Skip("awf built with -cover: its counters allocate at init")
	}
	if info, err := buildinfo.ReadFile(awfBin); err == nil {
		// A module linked without package initialisation of its own shows in the build info.
		for _, m := range info.Deps {
			for _, p := range notInAwf {
				if strings.HasPrefix(m.Path, p) {
					t.Errorf("module %s is linked into awf (it belongs to another program or to the tests)", m.Path)
				}
			}
		}
		for _, s := range info.Settings {
			if (s.Key == "-race" || s.Key == "-cover") && s.Value == "true" {
				t.Skipf("awf built with %s: its instrumentation allocates at init", s.Key)
			}
		}
	}
	e := newEnv(t)
	cmd := e.cmd(t.Context(), "--version")
	cmd.Env = append(cmd.Env, "GODEBUG=inittrace=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("awf --version: %v\n%s", err, stderr.String())
	}
	recs := parseInitTrace(t, stderr.String())
	if len(recs) < 50 {
		t.Fatalf("inittrace printed %d package records; want the whole binary's:\n%s", len(recs), stderr.String())
	}
	var total, own initRecord
	var problems []string
	for _, r := range recs {
		total.bytes += r.bytes
		total.allocs += r.allocs
		for _, p := range notInAwf {
			if strings.HasPrefix(r.pkg, p) {
				problems = append(problems, fmt.Sprintf("%s is linked into awf (it belongs to another program or to the tests)", r.pkg))
			}
		}
		if strings.HasPrefix(r.pkg, "github.com/awf-dev/awf/") {
			own.bytes += r.bytes
			own.allocs += r.allocs
			continue
		}
		limit, known := knownHeavyInits[r.pkg]
		if !known {
			limit = [2]int{otherBytesBudget, otherAllocsBudget}
		}
		if r.bytes > limit[0] || r.allocs > limit[1] {
			problems = append(problems, fmt.Sprintf("%s allocates %d bytes in %d allocations at init, budget %d and %d",
				r.pkg, r.bytes, r.allocs, limit[0], limit[1]))
		}
	}
	if own.bytes > ownBytesBudget || own.allocs > ownAllocsBudget {
		problems = append(problems, fmt.Sprintf("awf's own packages allocate %d bytes in %d allocations at init, budget %d and %d: build tables, regexps and templates on first use (sync.OnceValue)",
			own.bytes, own.allocs, ownBytesBudget, ownAllocsBudget))
	}
	if total.bytes > initBytesBudget || total.allocs > initAllocsBudget {
		problems = append(problems, fmt.Sprintf("all packages allocate %d bytes in %d allocations at init, budget %d and %d",
			total.bytes, total.allocs, initBytesBudget, initAllocsBudget))
	}
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("%d packages initialised: %d bytes in %d allocations (own: %d bytes in %d)", len(recs), total.bytes, total.allocs, own.bytes, own.allocs)
}
