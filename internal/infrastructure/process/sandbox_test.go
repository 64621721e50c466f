package process

// [sandbox] Runs through the helper with a sandbox policy. The attack suite is in package
// sandbox; these check the wiring: the spec on the wire, the clone flags, the hooks.

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/sandbox"
	"github.com/google/go-cmp/cmp"
)

func TestWireSandboxSpec(t *testing.T) {
	req := &Request{Script: "true", Vars: map[string]string{}, Sandbox: []byte(`{"version":1}`)}
	var buf strings.Builder
	if err := writeRequest(&buf, req); err != nil {
		t.Fatal(err)
	}
	got, err := readRequest(strings.NewReader(buf.String()))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(req, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	twice := wireMagic + frame(tagScript, "true") + frame(tagSandbox, "a") + frame(tagSandbox, "b") + frame(tagEnd, "")
	if _, err := readRequest(strings.NewReader(twice)); err == nil || !strings.Contains(err.Error(), "two sandbox specs") {
		t.Errorf("two specs: %v, want an error", err)
	}
}

// sandboxedRunner returns a runner whose machine is rep (nil: this one), skipping when this
// machine cannot run the sandbox at all.
func sandboxedRunner(t *testing.T, weaken func(sandbox.Report) sandbox.Report) *Runner {
	t.Helper()
	rep := sandbox.Probe()
	if !rep.Root || !rep.Available(sandbox.LayerUID) || !rep.Available(sandbox.LayerLandlock) {
		t.Skip("needs root, namespaces and Landlock")
	}
	if weaken != nil {
		rep = weaken(rep)
	}
	return New(Config{SandboxReport: func() sandbox.Report { return rep }})
}

func TestRunSandboxed(t *testing.T) {
	r := sandboxedRunner(t, nil)
	ws, outside := t.TempDir(), t.TempDir()
	os.Chmod(outside, 0o777)
	script := `id -u; echo made > made; echo x > ` + outside + `/x || echo refused; echo $HOME | grep -q awf-sandbox && echo private-home`
	res, err := r.Run(t.Context(), ports.ProcessRequest{Script: script, Dir: ws, Policy: &workflow.Policy{}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "65534\nrefused\nprivate-home\n"; res.Stdout != want {
		t.Errorf("stdout = %q, want %q\nstderr: %s", res.Stdout, want, res.Stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "made")); err != nil {
		t.Errorf("the workspace was not writable: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Error("a write outside the workspace went through")
	}
}

func TestRunSandboxedAllowlist(t *testing.T) {
	r := sandboxedRunner(t, nil)
	res, err := r.Run(t.Context(), ports.ProcessRequest{Script: "cat /dev/null && echo ok; x=id; $x", Dir: t.TempDir(),
		Policy: &workflow.Policy{Commands: []string{"cat", "id"}}, Restrictions: &workflow.Restrictions{Commands: []string{"cat"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "ok\n" || res.ExitCode != 126 || !strings.Contains(res.Stderr, `command "id" refused (rule sandbox.commands)`) {
		t.Errorf("result = %+v; want ok, then id refused by the narrowed allowlist with 126", res)
	}
}

func TestRunSandboxedFailsClosed(t *testing.T) {
	r := sandboxedRunner(t, func(rep sandbox.Report) sandbox.Report { return rep.Without(sandbox.LayerLandlock) })
	ws := t.TempDir()
	_, err := r.Run(t.Context(), ports.ProcessRequest{Script: "echo ran > ran", Dir: ws,
		Policy: &workflow.Policy{Require: []string{"landlock"}}})
	if me, ok := errors.AsType[*sandbox.MissingError](err); !ok || me.Layer != sandbox.LayerLandlock || fault.KindOf(err) != fault.Denied {
		t.Fatalf("Run = %v, want a denied missing landlock", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
		t.Error("the script ran")
	}
}

func TestRunWithoutPolicyIsUnsandboxed(t *testing.T) {
	r := sandboxedRunner(t, nil)
	res, err := r.Run(t.Context(), ports.ProcessRequest{Script: "id -u", Dir: t.TempDir()})
	if err != nil || res.Stdout != "0\n" {
		t.Errorf("Run without a policy = %q, %v; want uid 0 as before", res.Stdout, err)
	}
}
