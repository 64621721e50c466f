package audit

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/ports"
)

func lines(t *testing.T, recs ...ports.AuditRecord) string {
	var b strings.Builder
	for _, r := range recs {
		line, err := Encode(r, Options{})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
	}
	return b.String()
}

func TestReadToleratesTornLastLine(t *testing.T) {
	full := lines(t, record(1), record(2))
	torn := full + lines(t, record(3))[:50]
	recs, stats, err := Read(strings.NewReader(torn), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || !stats.Torn || stats.Skipped != 0 {
		t.Errorf("Read(torn) = %d records, %+v; want 2, torn", len(recs), stats)
	}
	damaged := "not json\n" + full
	recs, stats, err = Read(strings.NewReader(damaged), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || stats.Skipped != 1 || stats.Torn {
		t.Errorf("Read(damaged) = %d records, %+v; want 2, 1 skipped", len(recs), stats)
	}
}

func TestFilter(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	recs := []ports.AuditRecord{
		{Time: base, RunID: "a", Tool: "shell", Outcome: ports.OutcomeOK},
		{Time: base.Add(time.Hour), RunID: "a", Tool: "read_file", Outcome: ports.OutcomeDenied},
		{Time: base.Add(2 * time.Hour), RunID: "b", Tool: "shell", Outcome: ports.OutcomeTimeout},
	}
	tests := []struct {
		name string
		f    Filter
		want []string // call tools + run ids
	}{
		{"all", Filter{}, []string{"a/shell", "a/read_file", "b/shell"}},
		{"run", Filter{RunID: "a"}, []string{"a/shell", "a/read_file"}},
		{"tool", Filter{Tool: "shell"}, []string{"a/shell", "b/shell"}},
		{"deny", Filter{Decision: "deny"}, []string{"a/read_file"}},
		{"allow", Filter{Decision: "allow"}, []string{"a/shell", "b/shell"}},
		{"outcome", Filter{Outcome: "timeout"}, []string{"b/shell"}},
		{"since", Filter{Since: base.Add(time.Hour)}, []string{"a/read_file", "b/shell"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := Read(strings.NewReader(lines(t, recs...)), tc.f)
			if err != nil {
				t.Fatal(err)
			}
			names := []string{}
			for _, r := range got {
				names = append(names, r.RunID+"/"+r.Tool)
			}
			if diff := cmp.Diff(tc.want, names); diff != "" {
				t.Errorf("Read(%+v) (-want +got):\n%s", tc.f, diff)
			}
		})
	}
}

func TestReadFileMissing(t *testing.T) {
	recs, _, err := ReadFile(t.TempDir()+"/none.jsonl", Filter{})
	if err != nil || len(recs) != 0 {
		t.Errorf("ReadFile(missing) = %v, %v; want no records", recs, err)
	}
}
