package statestore

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/jsonl"
)

// neverCompact is an indexFloor no index reaches: the index only grows.
const neverCompact = math.MaxInt64

var indexStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// ended is run id at its n-th end (a resume that ended again when n > 0): each end writes a
// different state file, so the index has a line for each and only the last is right.
func ended(id string, n int) *state.RunState {
	end := indexStart.Add(time.Duration(n+1) * time.Minute)
	return &state.RunState{ID: id, Workflow: "w", Status: state.Failed, Error: fmt.Sprintf("end %d", n),
		StartedAt: indexStart, FinishedAt: &end, Segments: []state.Segment{{StartedAt: indexStart, EndedAt: &end}}}
}

// finish saves ended(id, n).
func finish(t testing.TB, s *Store, id string, n int) {
	t.Helper()
	if err := s.Save(t.Context(), ended(id, n)); err != nil {
		t.Fatal(err)
	}
}

// bloatIndex ends each of kept resumes+1 times and each of deleted once, then deletes the state
// files of deleted, with the index never compacted: all but one line of each kept run, and all
// of the deleted runs', are of no use.
func bloatIndex(t *testing.T, s *Store, kept, deleted []string, resumes int) {
	t.Helper()
	floor := s.indexFloor
	s.indexFloor = neverCompact
	defer func() { s.indexFloor = floor }()
	for n := range resumes + 1 {
		for _, id := range kept {
			finish(t, s, id, n)
		}
	}
	for _, id := range deleted {
		finish(t, s, id, 0)
		if err := os.Remove(s.Path(id)); err != nil {
			t.Fatal(err)
		}
	}
}

// padIndex appends to the index of dir a line of a run that has no state file, so that the
// index is size bytes long with tail (a torn line) after it.
func padIndex(t *testing.T, dir string, size int64, tail string) {
	t.Helper()
	path := filepath.Join(dir, summariesFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pad := summaryLine{Version: summariesVersion, File: fileID{Ino: 1}, Summary: ports.RunSummary{ID: "deleted-pad", Error: "x"}}
	line, _ := json.Marshal(pad)
	room := int(size) - len(data) - len(tail) - len(line) - 1
	if room < 0 {
		t.Fatalf("no room for a pad line: index of %d bytes, want %d", len(data), size)
	}
	pad.Summary.Error = strings.Repeat("x", 1+room)
	line, _ = json.Marshal(pad)
	write(t, path, string(data)+string(line)+"\n"+tail)
	if info, err := os.Stat(path); err != nil || info.Size() != size {
		t.Fatalf("padded index: %v, %v; want %d bytes", info, err, size)
	}
}

// nextPow2 is the smallest power of two above n.
func nextPow2(n int64) int64 {
	p := int64(1)
	for p <= n {
		p <<= 1
	}
	return p
}

// indexLines returns the run ids of the index's lines, in order, failing on a line that is
// not a whole, valid one.
func indexLines(t *testing.T, dir string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, summariesFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ids []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l summaryLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.Version != summariesVersion || l.Summary.ID == "" {
			t.Fatalf("index line %q: not a valid line (%v)", sc.Text(), err)
		}
		ids = append(ids, l.Summary.ID)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// listOf lists dir as another process would; with the index moved away when read is set, so
// that every state file is read. reads is how many state files it read.
func listOf(t *testing.T, dir string, read bool) (list []ports.RunSummary, reads int64) {
	t.Helper()
	index := filepath.Join(dir, summariesFile)
	if read {
		if err := os.Rename(index, index+".off"); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := os.Rename(index+".off", index); err != nil {
				t.Fatal(err)
			}
		}()
	}
	l := newStore(t, dir)
	list, err := l.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return list, l.summaryReads.Load()
}

// inode is the inode number of path.
func inode(t *testing.T, path string) uint64 {
	t.Helper()
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	id, ok := idOf(info)
	if !ok {
		t.Skip("no file identity here: no index")
	}
	return id.Ino
}

// TestIndexCompaction bloats the index with the lines of resumes, of deleted runs and of a
// state file rewritten by something that did not index it (and with damage), up to one byte
// short of a power of two: the next run's end compacts it to one line per finished run kept,
// and listings show what they showed before and what reading every state file shows.
func TestIndexCompaction(t *testing.T) {
	tests := []struct {
		name         string
		damage, torn string
	}{
		{"resumes and deleted runs", "", ""},
		{"damaged and torn lines", "not json\n{\"v\":1,\"summary\":{\"run_id\":\"a\"},\"file\":7}\n", `{"v":1,"file":{"ino":`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := newStore(t, dir)
			kept := []string{"a", "b", "c", "touched"}
			bloatIndex(t, s, kept, []string{"gone-1", "gone-2", "gone-3"}, 20)
			if err := s.Save(t.Context(), &state.RunState{ID: "live", Workflow: "w", Status: state.Running, StartedAt: indexStart}); err != nil {
				t.Fatal(err)
			}
			later := time.Now().Add(time.Hour) // rewritten by something that did not index it
			if err := os.Chtimes(s.Path("touched"), later, later); err != nil {
				t.Fatal(err)
			}
			index := filepath.Join(dir, summariesFile)
			data, _ := os.ReadFile(index)
			write(t, index, tc.damage+string(data))
			p := nextPow2(int64(len(data) + len(tc.damage) + 1024))
			padIndex(t, dir, p-1, tc.torn)
			s.indexFloor = p
			before, _ := listOf(t, dir, false)
			ino := inode(t, index)
			leftover := filepath.Join(dir, "."+summariesFile+".123"+tempSuffix) // a crashed compaction's
			write(t, leftover, "{}\n")

			finish(t, s, "next", 0)

			if _, err := os.Lstat(leftover); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a crashed compaction's temporary file is still there: %v", err)
			}
			if inode(t, index) == ino {
				t.Fatalf("the index crossed %d bytes and was not replaced", p)
			}
			if got, want := indexLines(t, dir), []string{"a", "b", "c", "next"}; !slices.Equal(got, want) {
				t.Errorf("index lines of runs %q, want %q", got, want)
			}
			if info, err := os.Stat(index); err != nil || info.Mode().Perm() != fileMode {
				t.Errorf("index after compaction: %v, %v; want mode %v", info, err, fileMode)
			}
			after, reads := listOf(t, dir, false)
			if reads != 2 {
				t.Errorf("List after compaction read %d state files, want 2 (live, touched)", reads)
			}
			read, _ := listOf(t, dir, true)
			i := slices.IndexFunc(after, func(r ports.RunSummary) bool { return r.ID == "next" })
			if i < 0 {
				t.Fatalf("List after compaction lacks the run that ended: %+v", after)
			}
			if d := cmp.Diff(before, slices.Delete(slices.Clone(after), i, i+1), cmpopts.EquateApproxTime(0)); d != "" {
				t.Errorf("List before and after compaction differ (-before +after):\n%s", d)
			}
			for i := range after {
				after[i].Counts = nil // the state files do not hold them
			}
			if d := cmp.Diff(read, after, cmpopts.EquateApproxTime(0)); d != "" {
				t.Errorf("List after compaction differs from the state files' (-read +indexed):\n%s", d)
			}
		})
	}
}

// TestIndexLeftAlone: a run's end leaves the index file as it was (its inode) when the index
// does not cross a threshold, or crosses one but would not shrink to half.
func TestIndexLeftAlone(t *testing.T) {
	t.Run("no threshold crossed", func(t *testing.T) {
		dir := t.TempDir()
		s := newStore(t, dir)
		bloatIndex(t, s, []string{"a", "b"}, []string{"gone"}, 20)
		index := filepath.Join(dir, summariesFile)
		info, _ := os.Stat(index)
		p := nextPow2(info.Size() + 1024)
		padIndex(t, dir, p-1024, "") // room for the next line
		s.indexFloor = p / 4
		n, ino := len(indexLines(t, dir)), inode(t, index)
		finish(t, s, "next", 0)
		if inode(t, index) != ino {
			t.Error("the index was replaced, though it crossed no threshold")
		}
		if got := len(indexLines(t, dir)); got != n+1 {
			t.Errorf("index of %d lines, want %d: one appended", got, n+1)
		}
	})
	t.Run("not halved", func(t *testing.T) {
		dir := t.TempDir()
		s := newStore(t, dir)
		s.indexFloor = neverCompact
		const p = 8 << 10
		index := filepath.Join(dir, summariesFile)
		for i := 0; ; i++ { // runs that are all kept, more than half the size
			finish(t, s, fmt.Sprintf("run-%03d", i), 0)
			if info, _ := os.Stat(index); info.Size() > p/2+512 {
				break
			}
		}
		padIndex(t, dir, p-1, "")
		s.indexFloor = p
		ino := inode(t, index)
		finish(t, s, "next", 0)
		if inode(t, index) != ino {
			t.Error("the index was replaced, though compacting it would not halve it")
		}
		if list, reads := listOf(t, dir, false); reads != 0 || len(list) == 0 {
			t.Errorf("List of %d runs read %d state files, want none", len(list), reads)
		}
	})
}

// TestIndexCompactionConcurrent has stores of the same directory, as separate processes would,
// end runs at the same time across several compactions: no line is lost (a line appended to
// an index being replaced is appended again to the new one), none is torn, and listings show
// what the state files say.
func TestIndexCompactionConcurrent(t *testing.T) {
	dir := t.TempDir()
	const writers, runs, resumes = 6, 15, 4
	var wg sync.WaitGroup
	for w := range writers {
		s := newStore(t, dir)
		s.noSync, s.indexFloor = true, 2<<10
		wg.Go(func() {
			for n := range resumes {
				for r := range runs {
					if err := s.Save(t.Context(), ended(fmt.Sprintf("w%d-run%02d", w, r), n)); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	if n := len(indexLines(t, dir)); n >= writers*runs*resumes {
		t.Errorf("index of %d lines for %d ends: never compacted", n, writers*runs*resumes)
	}
	indexed, reads := listOf(t, dir, false)
	if reads != 0 {
		t.Errorf("List read %d state files, want none: index lines were lost", reads)
	}
	read, _ := listOf(t, dir, true)
	for i := range indexed {
		indexed[i].Counts = nil
	}
	if d := cmp.Diff(read, indexed, cmpopts.EquateApproxTime(0)); d != "" {
		t.Errorf("the indexed summaries differ from the state files' (-read +indexed):\n%s", d)
	}
}

// TestCompactionLeavesAReplacedIndex: a writer whose index file was replaced since it opened
// it (another process compacted it) does not compact the old file over the new index.
func TestCompactionLeavesAReplacedIndex(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir)
	bloatIndex(t, s, []string{"a"}, []string{"gone"}, 5)
	index := filepath.Join(dir, summariesFile)
	a, err := jsonl.Open(index, fileMode)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	data, _ := os.ReadFile(index)
	if err := writeAtomic(dir, summariesFile, false, string(data)); err != nil { // the other's compaction
		t.Fatal(err)
	}
	ino := inode(t, index)
	if s.compactIndex(a, index) {
		t.Error("compactIndex replaced the index through a file that no longer was the index")
	}
	if inode(t, index) != ino {
		t.Error("the new index was replaced")
	}
}

// TestCompactsAt checks the thresholds: powers of two of at least the floor, each crossed once.
func TestCompactsAt(t *testing.T) {
	tests := []struct {
		before, after, floor int64
		want                 bool
	}{
		{0, 300, 1 << 20, false},
		{1<<20 - 1, 1 << 20, 1 << 20, true},
		{1<<20 - 300, 1<<20 + 5, 1 << 20, true},
		{1 << 20, 1<<20 + 300, 1 << 20, false},
		{1<<21 - 10, 1<<21 + 290, 1 << 20, true},
		{1<<21 + 10, 1<<21 + 310, 1 << 20, false},
		{1<<19 - 10, 1<<19 + 290, 1 << 20, false}, // below the floor
		{3000, 5000, 3000, true},                  // 4096, the first power of two past a floor of 3000
		{100, 2000, 3000, false},
	}
	for _, tc := range tests {
		if got := compactsAt(tc.before, tc.after, tc.floor); got != tc.want {
			t.Errorf("compactsAt(%d, %d, %d) = %v, want %v", tc.before, tc.after, tc.floor, got, tc.want)
		}
	}
}

// BenchmarkListAfterManyResumes lists 1,000 finished runs whose index has one line each, or
// went through 50 ends of each run (resumes), compacted (with the default threshold) or never:
// compaction keeps a listing's cost to the runs kept, not to how often they ended.
func BenchmarkListAfterManyResumes(b *testing.B) {
	for _, tc := range []struct {
		ends  int
		floor int64
	}{{1, minIndexCompaction}, {50, minIndexCompaction}, {50, neverCompact}} {
		name := fmt.Sprintf("ends=%d/compacted=%v", tc.ends, tc.floor != neverCompact)
		b.Run(name, func(b *testing.B) {
			s := newStoreB(b)
			s.noSync, s.indexFloor = true, tc.floor
			for n := range tc.ends {
				for i := range 1000 {
					finish(b, s, fmt.Sprintf("run-%04d", i), n)
				}
			}
			info, err := os.Stat(filepath.Join(s.dir, summariesFile))
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				list, err := s.List(b.Context())
				if err != nil || len(list) != 1000 {
					b.Fatalf("List = %d runs, %v", len(list), err)
				}
			}
			if n := s.summaryReads.Load(); n != 0 {
				b.Fatalf("List read %d state files, want none", n)
			}
			b.ReportMetric(float64(info.Size())/1024, "index-KiB")
		})
	}
}
