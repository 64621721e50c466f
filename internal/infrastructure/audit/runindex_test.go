package audit

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/awf-dev/awf/internal/domain/ports"
)

// TestRunIndexReadsAsReadFile: a run's records through the index are ReadFile's for that run,
// over runs whose ids share a start, a record whose arguments name another run, damaged and
// torn lines; records appended later are found; a log that shrank or was replaced is indexed
// again.
func TestRunIndexReadsAsReadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	recs := func(from, to int) string {
		var b strings.Builder
		for i := from; i < to; i++ {
			r := record(i)
			r.RunID = []string{"run-a", "run-ab", "run-b"}[i%3]
			if i%4 == 0 {
				r.Outcome = ports.OutcomeStarted
			}
			if i == 5 {
				r.Arguments = map[string]any{"run_id": "run-a", "note": `"run_id":"run-b"`}
			}
			line := lines(t, r)
			if i == 7 { // rewritten by a tool that spaces its JSON
				line = strings.Replace(line, `"run_id":"`, `"run_id": "`, 1)
			}
			b.WriteString(line)
			if i == 3 {
				b.WriteString("not json\n")
			}
		}
		return b.String()
	}
	var index *RunIndex
	check := func(when string) {
		t.Helper()
		x := index
		for _, id := range []string{"run-a", "run-ab", "run-b", "run-c"} {
			got, _, err := x.Records(id)
			if err != nil {
				t.Fatal(err)
			}
			all, _, err := ReadFile(path, Filter{RunID: id})
			if err != nil {
				t.Fatal(err)
			}
			want := slices.DeleteFunc(all, func(r ports.AuditRecord) bool { return r.RunID != id })
			if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("%s, run %s (-ReadFile +index):\n%s", when, id, d)
			}
		}
	}
	torn := recs(9, 10)
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), FileMode); err != nil {
			t.Fatal(err)
		}
	}
	write(recs(0, 9) + torn[:40])
	index = NewRunIndex(path)
	check("first read")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	appended := recs(10, 16)
	f.WriteString(torn[40:] + appended)
	f.Close()
	before := index.scanned
	check("after appends")
	if n := index.scanned - before; n != int64(len(torn)+len(appended)) {
		t.Errorf("after appends the index read %d bytes again, want the %d of the torn line and what followed", n, len(torn)+len(appended))
	}
	if n := len(index.lines["run-a"]); n != 7 {
		t.Errorf("run-a is named by %d lines, want 7 (its six and a record's arguments)", n)
	}
	write(recs(20, 23)) // replaced by a shorter log
	check("after a rotation")
	escaped := strings.Replace(recs(30, 31), `"run_id":"run-`, `"run_id":"run\u002d`, 1)
	write(recs(0, 3) + escaped)
	check("with an escaped run id")
}

// TestAdjoined: spans that follow each other merge into one read; a gap keeps them apart.
func TestAdjoined(t *testing.T) {
	got := adjoined([]span{{0, 10}, {10, 5}, {20, 3}, {23, 7}, {40, 1}})
	want := []span{{0, 15}, {20, 10}, {40, 1}}
	if !slices.Equal(got, want) {
		t.Errorf("adjoined = %v, want %v", got, want)
	}
	if got := adjoined(nil); len(got) != 0 {
		t.Errorf("adjoined(nil) = %v", got)
	}
}
