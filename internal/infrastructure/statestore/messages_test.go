package statestore

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLargeMessageContentInFile checks that a tool's reply too large for the state file goes
// beside it, as the tool call's output does, is read back, and is written once.
func TestLargeMessageContentInFile(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := newStore(t, dir, WithOutputThreshold(1024))
	run := agentRun(2)
	st := run.States["implement"]
	big := strings.Repeat("a long line of tool output\n", 200)
	st.ToolCalls[1].Result.Output = big
	st.Conversation.Messages[3].Content = big
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(s.Path(run.ID))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "a long line") || !strings.Contains(string(data), "content_file: agent/implement.message-3.content\n") {
		t.Errorf("state file holds the large content, or no reference to its file:\n%s", data)
	}
	assertFiles(t, filepath.Join(dir, "agent"), "implement.call_1.output", "implement.message-3.content")
	file := filepath.Join(dir, "agent", "implement.message-3.content")
	before := stat(t, file)
	assertLoads(t, newStore(t, dir), run)

	// More calls: the file is not written again.
	beginAgentCall(st, 2)
	finishAgentCall(st, 2)
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, stat(t, file)) {
		t.Error("an unchanged message content was written again")
	}

	// The conversation is compacted: the content moves to another message, its file too.
	st.Conversation.Messages = append(st.Conversation.Messages[:1], st.Conversation.Messages[3:]...)
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	assertFiles(t, filepath.Join(dir, "agent"), "implement.call_1.output", "implement.message-1.content")
	assertLoads(t, newStore(t, dir), run)
}

// storeMutator changes a run with values that read back exactly as they were written: valid
// text, small integers; outputs and message contents may be large, or not valid UTF-8 (then
// in files) with a threshold of 128.
func storeMutator(rng *rand.Rand) mutator {
	valid := func(rng *rand.Rand) string { return strings.ToValidUTF8(randomString(rng), "?") }
	text := func(rng *rand.Rand) string {
		if rng.IntN(4) == 0 {
			return strings.Repeat("big ", 20+rng.IntN(40)) // over the threshold or not
		}
		return randomString(rng) // sometimes not valid UTF-8: in a file then
	}
	return mutator{rng: rng, str: valid, text: text, value: func(rng *rand.Rand, _ int) any { return rng.IntN(9) }}
}

// TestStoreRandomMutations saves a run through random changes, with some outputs and
// contents large enough for files, and checks that what a new store loads is the run.
func TestStoreRandomMutations(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			g := storeMutator(rand.New(rand.NewPCG(seed, 11)))
			dir := t.TempDir()
			s := newStore(t, dir, WithOutputThreshold(128))
			run := agentRun(2)
			for i := range 120 {
				what := g.mutate(run)
				run.UpdatedAt = run.UpdatedAt.Add(time.Millisecond)
				if err := s.Save(t.Context(), run); err != nil {
					t.Fatalf("mutation %d (%s): Save: %v", i, what, err)
				}
				if i%10 == 9 {
					assertLoads(t, newStore(t, dir), run)
					if t.Failed() {
						t.Fatalf("after mutation %d (%s)", i, what)
					}
				}
			}
		})
	}
}
