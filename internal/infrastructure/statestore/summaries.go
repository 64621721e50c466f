package statestore

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/jsonl"
	"github.com/awf-dev/awf/internal/infrastructure/regfile"
)

// summariesFile is an index of the runs directory: one line per save of a finished run, with
// the run's summary and the identity of the state file written, so that List reads only the
// state files written since (a run still going, one resumed by an older awf, one whose index
// line was lost). Without it, `awf history`, the run viewer and the commands that list a run's
// children read every run ever kept, 0.27 ms each. A state file is replaced by a rename at
// every save, so a line is taken only while its file has the same inode, size and
// modification time; a later line of a run replaces an earlier one. Writers append (a line
// per finished run, at its end) and now and then compact it (compactIndex); readers never
// write, so that awf ui and shell completion stay read-only. The file is an index, not a
// record: missing or damaged, it costs time, never a wrong summary.
const summariesFile = ".summaries.jsonl"

// summariesVersion changes whenever what an index line holds changes meaning.
const summariesVersion = 1

// maxSummariesFile bounds the index read: a bigger one is ignored.
const maxSummariesFile = 256 << 20

// minIndexCompaction is the smallest size of the index that is compacted (see compactsAt).
const minIndexCompaction = 1 << 20

// summaryLine is one line of summariesFile.
type summaryLine struct {
	Version int               `json:"v"`
	File    fileID            `json:"file"`
	Summary ports.RunSummary  `json:"summary"`
	Calls   *state.CallCounts `json:"calls,omitempty"`
}

// fileID identifies one version of a state file.
type fileID struct {
	Ino   uint64 `json:"ino"`
	Size  int64  `json:"size"`
	Mtime int64  `json:"mtime_ns"`
}

// indexSummary appends the summary of run, which has ended and whose state file was just
// written, to the index: read back from that file, as List would read it, so that the index
// says exactly what reading says. Best effort: List is right without it.
func (s *Store) indexSummary(run *state.RunState) {
	before, ok := s.fileID(run.ID)
	if !ok {
		return
	}
	sum := s.summary(run.ID)
	if after, ok := s.fileID(run.ID); !ok || after != before || sum.Unreadable != "" {
		return
	}
	sum.StateFile = "" // the directory may move: Path says where it is
	calls := run.CountCalls()
	line, err := json.Marshal(summaryLine{Version: summariesVersion, File: before, Summary: sum, Calls: &calls})
	if err != nil {
		return
	}
	line = append(line, '\n')
	for range 2 { // again when another process's compaction replaced the file appended to
		if !s.appendIndex(line) {
			return
		}
	}
}

// appendIndex appends line to the index, then compacts the index when the line made it cross
// a threshold (compactsAt). It reports whether the file it appended to is no longer the index
// (another process compacted it after the open, and the line is not in the new one).
func (s *Store) appendIndex(line []byte) (replaced bool) {
	path := filepath.Join(s.dir, summariesFile)
	a, err := jsonl.Open(path, fileMode)
	if err != nil {
		return false
	}
	defer a.Close()
	before, err := a.File().Stat()
	if err != nil || a.Append(line) != nil {
		return false
	}
	after, err := a.File().Stat()
	if err != nil {
		return false
	}
	if compactsAt(before.Size(), after.Size(), s.indexFloor) && s.compactIndex(a, path) {
		return false
	}
	now, err := os.Lstat(path)
	return err == nil && !os.SameFile(now, after)
}

// compactsAt reports whether an index that grew from before to after bytes crossed a power of
// two of at least floor (minIndexCompaction: 1, 2, 4 MiB...). The writer decides from sizes
// alone: reading the index at every run's end would be quadratic over many runs. A read of 2^k
// bytes comes after about 2^(k-1) bytes appended since the last read, or after a compaction
// that removed more than 2^k, so reading costs a constant per byte ever appended. A crossing
// that does not halve the file has more than 2^(k-1) bytes of lines in use, and the next comes
// at 2^(k+1): the index stays under four times the lines in use at its last crossing, or under
// twice floor.
func compactsAt(before, after, floor int64) bool {
	if after <= 0 {
		return false
	}
	p := int64(1) << (bits.Len64(uint64(after)) - 1) // the largest power of two <= after
	return p >= floor && before < p
}

// compactIndex replaces the index a has open by the lines a listing can still use, the last
// line of each run whose state file is still the one the line was written for, when that
// halves it at least, and deletes what crashed compactions left (sweepIndexTemps). It holds
// the appenders' lock (jsonl) from the read to the rename: a line cannot be appended in
// between, only before (and kept) or after, to the old file, which its writer then sees
// replaced and appends again (appendIndex). It leaves the file when it is no
// longer the index (another process compacted it) or cannot be read, and reports whether it
// replaced it. The new file is synced before the rename, so a power loss leaves the old index
// or the new one, whole; the directory is not: a lost rename brings back the old one, still
// right. An index bigger than maxSummariesFile, which listings ignore, starts anew empty.
// Where flock is refused (some network file systems), a line appended between the read and the
// rename is lost: the index is a cache, and that run's state file is read instead.
func (s *Store) compactIndex(a *jsonl.Appender, path string) bool {
	unlock := a.Lock()
	defer unlock()
	fi, err := a.File().Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if cur, err := os.Lstat(path); err != nil || !os.SameFile(cur, fi) {
		return false
	}
	s.sweepIndexTemps()
	index := map[string]summaryLine{}
	if fi.Size() <= maxSummariesFile {
		if index = parseIndex(a.File()); index == nil {
			return false
		}
	}
	kept, err := s.liveLines(index)
	if err != nil || int64(len(kept)) > fi.Size()/2 {
		return false
	}
	return writeAtomic(s.dir, summariesFile, !s.noSync, kept) == nil
}

// sweepIndexTemps deletes the temporary files of compactions that a crash cut short. Called
// holding the lock on the current index: every other compaction either holds it (and is this
// one) or will find the index replaced and write nothing, so no temporary file is in use.
// Listing the runs directory costs what compacting costs already (a look at each run).
func (s *Store) sweepIndexTemps() {
	entries, _ := os.ReadDir(s.dir)
	for _, de := range entries {
		if isTempOf(de.Name(), summariesFile) {
			_ = os.Remove(filepath.Join(s.dir, de.Name()))
		}
	}
}

// liveLines returns the lines of index that a listing would take, sorted by run id: those of
// runs whose state file is still the file the line was written for.
func (s *Store) liveLines(index map[string]summaryLine) (string, error) {
	var b strings.Builder
	for _, id := range slices.Sorted(maps.Keys(index)) {
		l := index[id]
		if CheckID(id) != nil {
			continue
		}
		if fid, ok := s.fileID(id); !ok || fid != l.File {
			continue
		}
		line, err := json.Marshal(l)
		if err != nil {
			return "", fmt.Errorf("encode index line of run %s: %w", id, err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// fileID returns the identity of run id's state file.
func (s *Store) fileID(id string) (fileID, bool) {
	info, err := os.Lstat(s.Path(id))
	if err != nil {
		return fileID{}, false
	}
	return idOf(info)
}

// readIndex returns the last index line of each run, none when the index cannot be read.
func (s *Store) readIndex() map[string]summaryLine {
	f, err := regfile.Open(filepath.Join(s.dir, summariesFile))
	if err != nil {
		return nil
	}
	defer f.Close()
	return parseIndex(f)
}

// parseIndex returns the last whole, valid line of each run in the index f, read from its
// start whatever f's offset; none when it cannot be read or is bigger than maxSummariesFile.
func parseIndex(f *os.File) map[string]summaryLine {
	fi, err := f.Stat()
	if err != nil || fi.Size() > maxSummariesFile {
		return nil
	}
	out := map[string]summaryLine{}
	r := bufio.NewReaderSize(io.NewSectionReader(f, 0, fi.Size()), 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		var l summaryLine
		if len(line) > 0 && line[len(line)-1] == '\n' && json.Unmarshal(line, &l) == nil &&
			l.Version == summariesVersion && l.Summary.ID != "" {
			out[l.Summary.ID] = l
		}
		if err != nil {
			if err != io.EOF {
				return nil
			}
			return out
		}
	}
}

// indexedSummary returns the summary of run id from the index when its state file is the one
// the index line was written for, and otherwise reads the state file.
func (s *Store) indexedSummary(id string, de fs.DirEntry, index map[string]summaryLine) ports.RunSummary {
	if l, ok := index[id]; ok {
		if info, err := de.Info(); err == nil {
			if fid, ok := idOf(info); ok && fid == l.File {
				sum := l.Summary
				sum.StateFile, sum.Counts = s.Path(id), l.Calls
				return sum
			}
		}
	}
	s.summaryReads.Add(1)
	return s.summary(id)
}
