package main

import (
	"encoding/json"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/state"
)

// TestStatusOutputYAML: awf status --output yaml prints the run's state file, every output
// inline (a large one too, which the state directory keeps beside the file): the same shape
// for a local run as for a run of the temporal engine.
func TestStatusOutputYAML(t *testing.T) {
	e := newEnv(t)
	e.write("wf.yaml", "name: wf\nsteps:\n  - name: big\n    type: shell\n    command: yes x | head -c 300000\n  - name: small\n    type: shell\n    command: echo hi\n")
	res := e.runJSON(0, "run", "wf.yaml")
	r := e.mustRun(0, "status", res.RunID, "--output", "yaml")
	var got state.RunState
	if err := yaml.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("status --output yaml is not a state: %v\n%.500s", err, r.stdout)
	}
	if len(got.States["big"].Output) != 299999 || got.States["small"].Output != "hi" {
		t.Errorf("outputs: big %d bytes, small %q", len(got.States["big"].Output), got.States["small"].Output)
	}
	var loaded state.RunState // as awf loads the run: outputs kept beside the file read back
	if err := json.Unmarshal([]byte(e.mustRun(0, "status", res.RunID, "--output", "json").stdout), &loaded); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&loaded, &got); diff != "" {
		t.Errorf("exported state differs from the run's state (-loaded +export):\n%s", diff)
	}
	e.mustRun(1, "status", res.RunID, "--output", "xml")
}
