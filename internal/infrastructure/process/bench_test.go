package process

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/domain/ports"
)

// The helper here is the test binary, whose start-up is close to awf's minus awf's package
// initialisers (see BenchmarkRunTrue's note in the package report).

// BenchmarkRunTrue is the whole overhead of a step that does nothing: spawn the helper, send
// the request, interpret the builtin `true`, reap, kill the (empty) group.
func BenchmarkRunTrue(b *testing.B) {
	benchRun(b, ports.ProcessRequest{Script: "true"})
}

// BenchmarkRunExternalTrue adds one external command started by the interpreter.
func BenchmarkRunExternalTrue(b *testing.B) {
	benchRun(b, ports.ProcessRequest{Script: "/bin/true"})
}

// BenchmarkRunLargeOutput prints a 10 MB variable: the wire, the capture and the conversion.
func BenchmarkRunLargeOutput(b *testing.B) {
	big := strings.Repeat("x", 10<<20)
	b.SetBytes(int64(len(big)))
	benchRun(b, ports.ProcessRequest{Script: `printf '%s' "$AWF_T1"`, Vars: map[string]string{"AWF_T1": big}})
}

// BenchmarkBareSpawnShTrue is the floor to compare with: os/exec running `sh -c true`.
func BenchmarkBareSpawnShTrue(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("sh", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

func benchRun(b *testing.B, req ports.ProcessRequest) {
	r := New(Config{})
	b.ReportAllocs()
	for b.Loop() {
		res, err := r.Run(b.Context(), req)
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("Run(%q) = exit %d, %v; stderr %q", req.Script, res.ExitCode, err, res.Stderr)
		}
	}
}
