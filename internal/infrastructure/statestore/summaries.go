package statestore

import (
	"bufio"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"

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
// per finished run, at its end); readers never write, so that awf ui and shell completion
// stay read-only. The file is an index, not a record: missing or damaged, it costs time,
// never a wrong summary.
const summariesFile = ".summaries.jsonl"

// summariesVersion changes whenever what an index line holds changes meaning.
const summariesVersion = 1

// maxSummariesFile bounds the index read: a bigger one is ignored.
const maxSummariesFile = 256 << 20

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
	a, err := jsonl.Open(filepath.Join(s.dir, summariesFile), fileMode)
	if err != nil {
		return
	}
	defer a.Close()
	_ = a.Append(append(line, '\n'))
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
	if fi, err := f.Stat(); err != nil || fi.Size() > maxSummariesFile {
		return nil
	}
	out := map[string]summaryLine{}
	r := bufio.NewReaderSize(f, 64<<10)
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
