package statestore

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoadJournal loads a state file and journal of arbitrary bytes (a damaged disk, a hand
// edit, a hostile file): Load never panics, and a run it returns can be saved and loaded again.
func FuzzLoadJournal(f *testing.F) {
	seed := f.TempDir()
	s, err := New(seed)
	if err != nil {
		f.Fatal(err)
	}
	run := agentRun(2)
	if err := s.Save(f.Context(), run); err != nil {
		f.Fatal(err)
	}
	for i := 2; i < 4; i++ {
		st := run.Step("implement")
		beginAgentCall(st, i)
		if err := s.AppendStep(f.Context(), run, "implement"); err != nil {
			f.Fatal(err)
		}
		finishAgentCall(st, i)
		if err := s.AppendStep(f.Context(), run, "implement"); err != nil {
			f.Fatal(err)
		}
	}
	stateBytes, _ := os.ReadFile(s.Path(run.ID))
	journalBytes, _ := os.ReadFile(s.journalPath(run.ID))
	f.Add(stateBytes, journalBytes)
	f.Add(stateBytes, journalBytes[:len(journalBytes)/2])
	f.Add(stateBytes, []byte(`{"seq":1,"step":"implement","calls":{"0":{"id":"x"}},"n_calls":99}`+"\n"))
	f.Add([]byte("id: agent\nstatus: running\njournal_seq: 5\n"), journalBytes)
	f.Add(stateBytes, []byte(`{"seq":1,"updated_at":"2026-03-01T10:00:05Z","step":"new","added":true,"record":{"status":"running"},`+
		`"turns":{"len":2,"set":[{"at":1,"value":{"finish_reason":"stop"}}]}}`+"\n"+
		`{"seq":2,"updated_at":"2026-03-01T10:00:06Z","step":"new","added":true}`+"\n"))

	f.Fuzz(func(t *testing.T, stateFile, journal []byte) {
		dir := t.TempDir()
		s, err := New(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "agent.yaml"), stateFile, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s.journalPath("agent"), journal, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := s.Load(t.Context(), "agent")
		if err != nil {
			return
		}
		if got.ID == "" {
			got.ID = "agent"
		}
		if err := s.Save(t.Context(), got); err != nil {
			t.Fatalf("a loaded run does not save again: %v", err)
		}
		if _, err := s.Load(t.Context(), got.ID); err != nil {
			t.Fatalf("a saved run does not load again: %v", err)
		}
	})
}
