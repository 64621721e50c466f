package durable

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
)

// bigPayload is a payload the codec keeps out of the history.
func bigPayload(fill string) *commonpb.Payload {
	return &commonpb.Payload{Data: []byte(strings.Repeat(fill, casThreshold+1))}
}

// TestSweepRemovesUnusedPayloads: payloads nobody wrote or read within the retention are
// removed; one read since (a payload another run shares) stays; a payload removed and
// written again by a later run is back; retention 0 keeps everything.
func TestSweepRemovesUnusedPayloads(t *testing.T) {
	dir := t.TempDir()
	c := casCodec{dir: dir}
	refs, err := c.Encode([]*commonpb.Payload{bigPayload("a"), bigPayload("b"), bigPayload("c")})
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour)
	for _, r := range refs {
		if err := os.Chtimes(filepath.Join(dir, string(r.Data)), old, old); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "agent-steps"), 0o700); err != nil {
		t.Fatal(err)
	}
	journal := filepath.Join(dir, "agent-steps", "j")
	if err := os.WriteFile(journal, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = os.Chtimes(journal, old, old)
	if n, err := sweep(t.Context(), dir, 0, time.Now()); n != 0 || err != nil {
		t.Fatalf("sweep with retention 0 removed %d (%v)", n, err)
	}
	// b is read by a run (shared), c written again by another: both in use.
	if _, err := c.Decode(refs[1:2]); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Encode([]*commonpb.Payload{bigPayload("c")}); err != nil {
		t.Fatal(err)
	}
	n, err := sweep(t.Context(), dir, 24*time.Hour, time.Now())
	if err != nil || n != 2 {
		t.Fatalf("sweep removed %d (%v), want a and the old journal", n, err)
	}
	if _, err := c.Decode(refs[:1]); err == nil {
		t.Error("a, unused for two days, is still in the store")
	}
	if _, err := c.Decode(refs[1:]); err != nil {
		t.Errorf("b or c, in use, was removed: %v", err)
	}
	if _, err := os.Stat(journal); err == nil {
		t.Error("the old agent step journal is still there")
	}
	if _, err := c.Encode([]*commonpb.Payload{bigPayload("a")}); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Decode(refs[:1]); err != nil || len(got[0].Data) != casThreshold+1 {
		t.Errorf("a written again: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), sweepSuffix) {
			t.Errorf("the sweep left %s aside", e.Name())
		}
	}
}

// TestSweepEvery: a tenth of the retention, from every minute to every hour.
func TestSweepEvery(t *testing.T) {
	for retention, want := range map[time.Duration]time.Duration{
		time.Minute: time.Minute, 5 * time.Hour: 30 * time.Minute, 30 * 24 * time.Hour: time.Hour,
	} {
		if got := sweepEvery(retention); got != want {
			t.Errorf("sweepEvery(%v) = %v, want %v", retention, got, want)
		}
	}
}
