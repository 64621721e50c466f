package process

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// TestLocalTimeoutKillsEverything checks that a timeout kills every program the script started,
// background jobs and grandchildren included: after Run returns no live process carries the
// test's marker in its environment.
func TestLocalTimeoutKillsEverything(t *testing.T) {
	env := childrenEnv(t)
	start := time.Now()
	got, err := NewLocal(Config{}).Run(t.Context(), ports.ProcessRequest{
		Script: children + "echo started; wait", Env: env, BaseEnv: MinimalEnv(), Timeout: 2 * time.Second,
	})
	if err == nil || err.Error() != "timed out after 2s" || fault.KindOf(err) != fault.Execution {
		t.Fatalf("Run(timeout) error = %v (kind %v), want \"timed out after 2s\"", err, fault.KindOf(err))
	}
	if got.Stdout != "started\n" {
		t.Errorf("partial stdout = %q, want %q", got.Stdout, "started\n")
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("Run returned after %s: something held it", d)
	}
	marker := []byte("D=" + env["D"] + "\x00")
	deadline := time.Now().Add(5 * time.Second)
	for {
		alive := processesWith(marker)
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes survived the timeout: %v", alive)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// processesWith lists live (non-zombie) processes whose environment contains marker.
func processesWith(marker []byte) []string {
	var found []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !bytes.Contains(env, marker) {
			continue
		}
		if stat, _ := os.ReadFile(filepath.Join(d, "stat")); strings.Contains(string(stat), ") Z ") {
			continue
		}
		found = append(found, filepath.Base(d))
	}
	return found
}

func TestLocalOutputCap(t *testing.T) {
	got, err := NewLocal(Config{}).Run(t.Context(), ports.ProcessRequest{Script: "yes", OutputLimit: 1 << 20})
	if err != nil {
		t.Fatalf("Run(yes) error: %v", err)
	}
	if !got.Truncated || len(got.Stdout) != 1<<20 || got.ExitCode != 137 {
		t.Errorf("Run(yes) = %d bytes, truncated %v, exit %d; want 1 MiB, truncated, 137", len(got.Stdout), got.Truncated, got.ExitCode)
	}
}

func TestLocalRefusesPolicy(t *testing.T) {
	_, err := NewLocal(Config{}).Run(t.Context(), ports.ProcessRequest{Script: "true", Policy: &workflowPolicy})
	if err == nil || fault.KindOf(err) != fault.System {
		t.Errorf("Run with a policy = %v, want a system error", err)
	}
}

var workflowPolicy = workflow.Policy{}
