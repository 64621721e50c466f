package durable

import (
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// TestReplayRecordedHistories replays histories recorded from a real Temporal server (a run
// of shell steps, a parallel group and tool calls; a failed step; a denied durable approval;
// a shared-workspace run; a sub-workflow as a child workflow; the first and the last
// execution of a run that continued as new, with the payloads they reference in
// testdata/payloads; an agent step of four model turns, parallel read-only calls, a refused
// call and a prompt_file, each its own activity; an agent step's call approved by a person
// while it waited) with the SDK's replayer: a change to the workflow (awf's runner included)
// that would make runs in flight fail their replay fails here. Record new ones with
// `temporal workflow show -w RUN_ID --output json` when a change is meant to be incompatible
// (and version it with workflow.GetVersion).
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "histories", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			r, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{
				DataConverter: converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), casCodec{dir: filepath.Join("testdata", "payloads")}),
			})
			if err != nil {
				t.Fatal(err)
			}
			r.RegisterWorkflowWithOptions(Run, workflow.RegisterOptions{Name: WorkflowName})
			if err := r.ReplayWorkflowHistoryFromJSONFile(nil, file); err != nil {
				t.Fatal(err)
			}
		})
	}
}
