// Package statestore keeps a run's state as a YAML file rewritten atomically, with large
// outputs in files beside it that are written only when they change, and an append-only
// journal of the changes saved step by step between two state files, folded into a new state
// file once it outgrows the last one and when the run ends. It implements ports.StateStore and
// ports.StepJournal and nothing else.
package statestore

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/regfile"
	"github.com/awf-dev/awf/internal/infrastructure/yamlnode"
)

// DefaultOutputThreshold is the size above which a step or tool call output is stored in a
// file of its own rather than in the state file.
const DefaultOutputThreshold = 64 << 10

const (
	stateExt = ".yaml"
	maxIDLen = 200
)

// Store keeps runs in a directory: <dir>/<run-id>.yaml, <dir>/<run-id>/ for large outputs and
// <dir>/<run-id>.journal for the changes saved by AppendStep since the state file.
// Files are created with mode 0600 and directories with mode 0700, the directory itself on the
// first Save.
//
// A Store is safe for concurrent use; Saves of one run are serialised. It assumes it is the
// only writer of the runs it saves: a run continued by another process must be loaded first
// (as resume does), so that the store knows which output files the state file refers to.
type Store struct {
	dir       string
	threshold int

	mu   sync.Mutex
	runs map[string]*runEntry

	beforeRestore func()       // a test hook: runs between reading a state file and its outputs
	beforeJournal func()       // a test hook: runs between reading a state file and its journal
	failWrite     error        // a test hook: the error of every state file write (a full disk)
	noSync        bool         // a benchmark switch: no fsync of files and directories
	compactFloor  int64        // minCompact; tests raise it to see a journal grow
	indexFloor    int64        // minIndexCompaction; tests lower it to compact small indexes
	dirSyncs      atomic.Int64 // syncs of the store directory, for tests
	summaryReads  atomic.Int64 // state files List read rather than take from the index, for tests
}

var (
	_ ports.StateStore  = (*Store)(nil)
	_ ports.StepJournal = (*Store)(nil)
)

// runEntry serialises the Saves and Loads of one run and remembers the output files its
// committed state file refers to.
type runEntry struct {
	mu    sync.Mutex
	blobs map[string]blob
	enc   runEncoder
	seen  map[string]*seenTexts // texts known to stay in the state file; see externalizer
	swept bool                  // leftovers of crashed processes have been deleted
	// probed is set once the first save has looked for the run's state file; fresh says it
	// was not there: the run is new, no earlier process wrote any of it, and the sweep need
	// not read the whole runs directory (which holds every run ever kept) for its leftovers.
	probed, fresh bool
	// durable is set once the state file's directory entry has been synced; see needsDirSync.
	durable bool
	j       journal
}

// Option configures a Store.
type Option func(*Store)

// WithOutputThreshold sets the size in bytes above which an output is stored beside the state
// file; the default is DefaultOutputThreshold. A negative n is taken as 0.
func WithOutputThreshold(n int) Option {
	return func(s *Store) { s.threshold = max(n, 0) }
}

// New returns a store that keeps runs in dir, which need not exist yet. An empty dir is a
// fault.Usage error.
func New(dir string, opts ...Option) (*Store, error) {
	if dir == "" {
		return nil, fault.New(fault.Usage, "state directory is empty")
	}
	s := &Store{dir: filepath.Clean(dir), threshold: DefaultOutputThreshold, runs: map[string]*runEntry{},
		compactFloor: minCompact, indexFloor: minIndexCompaction}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// Dir returns the directory the store keeps runs in.
func (s *Store) Dir() string { return s.dir }

// Path returns the state file of run id, whether or not it exists.
func (s *Store) Path(id string) string { return filepath.Join(s.dir, id+stateExt) }

// entry returns the lock and record of run id, creating them on first use.
func (s *Store) entry(id string) *runEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.runs[id]
	if !ok {
		e = &runEntry{blobs: map[string]blob{}}
		s.runs[id] = e
	}
	return e
}

// CheckID reports whether id can name a run: 1 to 200 ASCII letters, digits, '.', '_' or '-',
// not starting with '.'. Any other id is a fault.Usage error, so that no id can name a file
// outside the store's directory.
func CheckID(id string) error {
	switch {
	case id == "":
		return fault.New(fault.Usage, "empty run id")
	case len(id) > maxIDLen:
		return fault.New(fault.Usage, "run id %.20q... is longer than %d bytes", id, maxIDLen)
	case id[0] == '.':
		return fault.New(fault.Usage, "run id %q starts with '.'", id)
	}
	for i := range len(id) {
		c := id[i]
		if !safeByte(c) && c != '.' {
			return fault.New(fault.Usage, "run id %q: only letters, digits, '.', '_' and '-' are allowed", id)
		}
	}
	return nil
}

// Save writes the run's state file atomically, after the large outputs that changed since the
// last Save. It reads run but never modifies it; the caller must not modify it during Save.
func (s *Store) Save(ctx context.Context, run *state.RunState) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if run == nil {
		return fault.New(fault.System, "save: nil run")
	}
	if err := CheckID(run.ID); err != nil {
		return fmt.Errorf("save run: %w", err)
	}
	e := s.entry(run.ID)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := s.save(run, e); err != nil {
		if run.FinishedAt != nil {
			s.markEnded(run.ID)
		}
		return fmt.Errorf("save run %s: %w", run.ID, err)
	}
	return nil
}

// Lines of a state file's head: the run's status while it runs, and what markEnded makes of
// it, of the same length (YAML ignores the blank at the end of a plain scalar).
const (
	runningLine = "\nstatus: running\n"
	endedLine   = "\nstatus: failed \n"
)

// markEnded is the last resort of a run that ended but whose state could not be written (a
// full disk): it rewrites, in place, the state file's `status: running` as `status: failed`.
// The same number of bytes in a block the file already has needs no new space, so this may
// succeed where writing a new file failed; then the state no longer claims the run is going
// on. The file stays whole (its end marker is untouched). Best effort: a failure leaves the
// file as it was.
func (s *Store) markEnded(id string) {
	f, err := os.OpenFile(s.Path(id), os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer f.Close()
	head := make([]byte, 64<<10)
	n, _ := f.ReadAt(head, 0)
	head = head[:n]
	if i := bytes.Index(head, []byte("\n"+statesKey)); i >= 0 {
		head = head[:i+1]
	}
	at := bytes.Index(head, []byte(runningLine))
	if at < 0 {
		return
	}
	if _, err := f.WriteAt([]byte(endedLine), int64(at)); err == nil && !s.noSync {
		_ = f.Sync()
	}
}

// save writes the state file. Until it succeeds there is no baseline to journal changes from:
// the encoder's copies may hold what was never written.
func (s *Store) save(run *state.RunState, e *runEntry) error {
	e.j.head = nil
	if e.seen == nil {
		e.seen = map[string]*seenTexts{}
	}
	x := &externalizer{threshold: s.threshold, runID: run.ID, old: e.blobs, next: map[string]blob{}, seen: e.seen}
	body, err := e.enc.encode(x.run(run))
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	doc := make([]string, 0, len(body)+3)
	doc = append(append(doc, stateHeader), body...)
	if line := e.journalSeqLine(); line != "" {
		doc = append(doc, line)
	}
	doc = append(doc, stateEnd)
	if err := ensureDir(s.dir); err != nil {
		return err
	}
	if err := s.forgetStaleJournal(run.ID, e); err != nil {
		return err
	}
	if err := s.writeOutputs(run.ID, x.writes); err != nil {
		return err
	}
	if s.failWrite != nil {
		return s.failWrite
	}
	if !e.probed {
		e.probed = true
		_, err := os.Lstat(s.Path(run.ID))
		e.fresh = errors.Is(err, fs.ErrNotExist)
	}
	if err := writeAtomic(s.dir, run.ID+stateExt, !s.noSync, doc...); err != nil {
		return err
	}
	e.j.snapshot = partsLen(doc)
	// The journal is emptied once the rename is durable: before, a power loss could bring the
	// previous state file back without the lines.
	if needsDirSync(run, e, x) || e.j.dirty {
		if err := s.syncDir(s.dir); err != nil {
			return err
		}
		e.durable = true
		s.dirSyncs.Add(1)
	}
	s.commit(run, e, x.next)
	s.clearJournal(run, e)
	if run.FinishedAt == nil {
		e.j.head = deepCopy(headOf(run))
		e.j.order = run.Order
	} else {
		s.indexSummary(run)
	}
	return nil
}

// partsLen is the length of the document made of parts.
func partsLen(parts []string) int64 {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	return int64(n)
}

// syncDir syncs dir unless the store was made not to sync (in benchmarks).
func (s *Store) syncDir(dir string) error {
	if s.noSync {
		return nil
	}
	return syncDir(dir)
}

// needsDirSync reports whether this save must sync the store directory, making the rename
// durable across a power loss. Every save syncs the file itself before the rename, so the state
// file is always whole: skipping the directory sync can only mean that after a power loss the
// previous state, equally valid, is found. The sync is needed when the file is new, when the
// run has ended, and when output files were written or will be deleted (the state on disk must
// never name a file that is gone). It halves the fsyncs of a run of quick steps.
func needsDirSync(run *state.RunState, e *runEntry, x *externalizer) bool {
	if !e.durable || len(x.writes) > 0 || run.Status.Done() || run.Status == state.Failed || run.Status == state.Interrupted {
		return true
	}
	for name, b := range e.blobs {
		if nb, ok := x.next[name]; !ok || nb.file != b.file {
			return true
		}
	}
	return false
}

// commit records the output files the new state file refers to and deletes those it no
// longer does. A file that cannot be deleted is left behind: nothing refers to it.
func (s *Store) commit(run *state.RunState, e *runEntry, next map[string]blob) {
	referenced := make(map[string]bool, len(next))
	for _, b := range next {
		referenced[b.file] = true
	}
	for _, b := range e.blobs {
		if !referenced[b.file] {
			_ = removeIfExists(filepath.Join(s.dir, filepath.FromSlash(b.file)))
		}
	}
	if len(next) == 0 && len(e.blobs) > 0 {
		_ = os.Remove(filepath.Join(s.dir, run.ID)) // fails, as it should, if not empty
	}
	if run.FinishedAt != nil { // keep no copies of a finished run's outputs
		for k, b := range next {
			next[k] = b.forget()
		}
		e.enc.forget()
		e.seen = nil
	}
	e.blobs = next
	if !e.swept {
		e.swept = true
		s.sweep(run.ID, referenced, !e.fresh)
	}
}

// sweep deletes what crashes of earlier processes left of a run: temporary files, and output
// files that the state file no longer refers to because the process died before deleting
// them. It runs once per run and Store, after a commit, so the state file on disk is this
// store's. A temporary file is recognised by its exact name, so no other run's is touched.
// Finding them means reading the whole runs directory, so only a run that existed before
// this store wrote it (a resumed one) is looked for there: a new run's cost must not grow
// with the number of runs kept.
func (s *Store) sweep(id string, referenced map[string]bool, temps bool) {
	if temps {
		entries, _ := os.ReadDir(s.dir)
		for _, de := range entries {
			if isTempOf(de.Name(), id+stateExt) {
				_ = os.Remove(filepath.Join(s.dir, de.Name()))
			}
		}
	}
	runDir := filepath.Join(s.dir, id)
	entries, err := os.ReadDir(runDir)
	if err != nil {
		return
	}
	for _, de := range entries {
		if !de.IsDir() && !referenced[id+"/"+de.Name()] {
			_ = os.Remove(filepath.Join(runDir, de.Name()))
		}
	}
	if len(referenced) == 0 {
		_ = os.Remove(runDir)
	}
}

// errStale says that a state file referred to an output file that a Save by another Store
// (another process, in life) replaced meanwhile; loading again reads the newer state. Within
// one Store, Load and Save of a run hold the same lock.
var errStale = errors.New("state file changed while it was read")

// maxLoadAttempts bounds the reads of a state file that keeps changing under Load. Outputs
// change rarely (a step's output is usually written once), so one retry nearly always does.
const maxLoadAttempts = 4

// Load reads run id with its large outputs. An unknown id is a fault.Usage error; a state file
// that does not parse, or refers to a missing output file, is an error naming the file.
func (s *Store) Load(ctx context.Context, id string) (*state.RunState, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := CheckID(id); err != nil {
		return nil, fmt.Errorf("load run: %w", err)
	}
	e := s.entry(id)
	e.mu.Lock()
	defer e.mu.Unlock()
	for range maxLoadAttempts - 1 {
		rs, _, err := s.load(id, e, false)
		if !errors.Is(err, errStale) {
			return rs, err
		}
	}
	rs, _, err := s.load(id, e, false)
	return rs, err
}

var _ ports.StateRecovery = (*Store)(nil)

// LoadValid reads run id as Load does, except that a damaged journal is read up to its last
// valid line: dropped names the first line that could not be read or applied, and says that
// it and the lines after it were left out ("" when the journal was sound). The next Save
// moves the damaged journal aside, to <run-id>.journal.damaged, rather than emptying it. A
// damaged state file is an error, as with Load.
func (s *Store) LoadValid(ctx context.Context, id string) (run *state.RunState, dropped string, err error) {
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	if err := CheckID(id); err != nil {
		return nil, "", fmt.Errorf("load run: %w", err)
	}
	e := s.entry(id)
	e.mu.Lock()
	defer e.mu.Unlock()
	for range maxLoadAttempts - 1 {
		run, dropped, err = s.load(id, e, true)
		if !errors.Is(err, errStale) {
			return run, dropped, err
		}
	}
	return s.load(id, e, true)
}

// load reads run id; lenient reads a damaged journal up to its last valid line, dropped
// saying what was left out.
func (s *Store) load(id string, e *runEntry, lenient bool) (rs *state.RunState, dropped string, err error) {
	p := s.Path(id)
	data, err := regfile.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, "", fault.New(fault.Usage, "no run %q in %s", id, s.dir)
	}
	if err != nil {
		return nil, "", fmt.Errorf("load run %s: %w", id, err)
	}
	rs, folded, err := decodeRun(data)
	if err != nil {
		return nil, "", fmt.Errorf("load %s: %w", p, err)
	}
	if rs.ID != id {
		return nil, "", fmt.Errorf("load %s: the file holds run %q", p, rs.ID)
	}
	jp := s.journalPath(id)
	if s.beforeJournal != nil {
		s.beforeJournal()
	}
	j, err := readJournal(jp, folded, lenient)
	if err == nil {
		err = j.apply(rs, jp, lenient)
	}
	if err != nil {
		return nil, "", loadError(p, data, jp, -1, err)
	}
	if s.beforeRestore != nil {
		s.beforeRestore()
	}
	r := &restorer{dir: s.dir, runID: id, blobs: map[string]blob{}}
	if err := r.run(rs); err != nil {
		return nil, "", loadError(p, data, jp, j.size, err)
	}
	e.blobs = r.blobs
	e.j.seq = max(e.j.seq, folded, j.last)
	e.j.dirty = e.j.dirty || j.size > 0
	// Nothing may be appended to a journal that ends with a partial or damaged line.
	e.j.broken = e.j.broken || j.torn || j.dropped != ""
	e.j.damaged = e.j.damaged || j.dropped != ""
	e.j.known = true
	return rs, j.dropped, nil
}

// loadError is Load's error for a run whose state file at p held data and whose journal at
// jp held journalSize bytes (-1: not read to the end): errStale when either changed since, for
// another process (or Store) was saving the run meanwhile.
func loadError(p string, data []byte, jp string, journalSize int64, err error) error {
	now, rerr := regfile.ReadFile(p)
	stale := rerr == nil && !bytes.Equal(now, data) || journalSize >= 0 && sizeOf(jp) != journalSize
	if stale {
		return fmt.Errorf("load %s: %w (%v)", p, errStale, err)
	}
	return fmt.Errorf("load %s: %w", p, err)
}

// sizeOf returns the size of a file, 0 when it cannot be read: a missing journal is empty.
func sizeOf(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// summaryDoc is the part of a state file that List reads.
type summaryDoc struct {
	ID         string          `yaml:"id"`
	Workflow   string          `yaml:"workflow"`
	Status     state.Status    `yaml:"status"`
	StartedAt  time.Time       `yaml:"started_at"`
	UpdatedAt  time.Time       `yaml:"updated_at"`
	FinishedAt *time.Time      `yaml:"finished_at"`
	Error      string          `yaml:"error"`
	Parent     string          `yaml:"parent"`
	Segments   []state.Segment `yaml:"segments"`
}

// List returns a summary of every run, newest first by StartedAt (ties by id). It reads state
// files only, never output files, and of a finished run only when the index (summariesFile) has
// no line for the state file it has now. It writes nothing. A state file that cannot be read or
// parsed does not stop it: it is listed with the id from its name, no status, a zero StartedAt
// (so it sorts last) and Unreadable saying what is wrong with it, so that `awf history` shows
// it rather than dying or hiding it. The error is non-nil only when the directory cannot be
// read; a missing directory is an empty list.
func (s *Store) List(ctx context.Context) ([]ports.RunSummary, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	var runs []fs.DirEntry
	for _, de := range entries {
		if _, ok := runFile(de); ok {
			runs = append(runs, de)
		}
	}
	out := make([]ports.RunSummary, len(runs))
	index := s.readIndex()
	// The summaries the index does not have are state files to read and parse: a few
	// workers, each taking the next run, share that out over the machine's cores.
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), 8, max(len(runs), 1)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(runs) && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				id, _ := runFile(runs[i])
				out[i] = s.indexedSummary(id, runs[i], index)
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b ports.RunSummary) int {
		if c := b.StartedAt.Compare(a.StartedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out, nil
}

// IDs returns the id of every run that has a state file, sorted, from the names in the
// directory alone (no state file is read). A missing directory holds no runs.
func (s *Store) IDs(ctx context.Context) ([]string, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	var ids []string
	for _, de := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if id, ok := runFile(de); ok {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// runFile returns the id of the run whose state file de is.
func runFile(de fs.DirEntry) (string, bool) {
	id, ok := strings.CutSuffix(de.Name(), stateExt)
	if !ok || de.IsDir() || CheckID(id) != nil {
		return "", false
	}
	return id, true
}

// summary reads one state file for List.
func (s *Store) summary(id string) ports.RunSummary {
	p := s.Path(id)
	sum := ports.RunSummary{ID: id, StateFile: p}
	doc, err := readSummary(p)
	switch {
	case err != nil:
		sum.Unreadable = fmt.Sprintf("%s: %v", p, err)
	case doc.ID == "":
		sum.Unreadable = fmt.Sprintf("%s: not a run's state file (no id)", p)
	case doc.ID != id:
		sum.Unreadable = fmt.Sprintf("%s holds run %q", p, doc.ID)
	default:
		sum.Workflow, sum.Status, sum.Error = doc.Workflow, doc.Status, doc.Error
		sum.StartedAt, sum.FinishedAt = doc.StartedAt, doc.FinishedAt
		sum.Parent = doc.Parent
		updated := doc.UpdatedAt
		if doc.FinishedAt == nil {
			if t := s.journalTime(id); t.After(updated) {
				updated = t
			}
		}
		run := state.RunState{StartedAt: doc.StartedAt, UpdatedAt: updated, FinishedAt: doc.FinishedAt, Segments: doc.Segments}
		sum.DurationMs = run.Duration().Milliseconds()
	}
	return sum
}

// maxJournalTail is how much of the end of a journal journalTime reads.
const maxJournalTail = 256 << 10

// journalTime returns the updated_at of the last whole line of run id's journal, which is
// later than the state file's while a run saves its steps there; the zero time when there is
// no such line, or it is longer than maxJournalTail or does not parse. Only the line's end of
// the file is read, so List's cost does not grow with the run.
func (s *Store) journalTime(id string) time.Time {
	f, err := regfile.Open(s.journalPath(id))
	if err != nil {
		return time.Time{}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return time.Time{}
	}
	n := min(fi.Size(), maxJournalTail)
	tail := make([]byte, n)
	if _, err := f.ReadAt(tail, fi.Size()-n); err != nil {
		return time.Time{}
	}
	tail = tail[:bytes.LastIndexByte(tail, '\n')+1] // a torn last line is left out
	start := bytes.LastIndexByte(tail[:max(len(tail)-1, 0)], '\n') + 1
	if len(tail) == 0 || start == 0 && n < fi.Size() {
		return time.Time{}
	}
	var en struct {
		UpdatedAt time.Time `json:"updated_at"`
	}
	if json.Unmarshal(tail[start:], &en) != nil {
		return time.Time{}
	}
	return en.UpdatedAt
}

// statesKey starts the steps' records in a state file. Every field List needs is written
// before it (RunState's field order; a test checks), so List reads and parses only the head of
// each file and its cost does not grow with the number of steps.
const statesKey = "states:"

// readSummary parses the head of a state file, up to the line that starts the steps.
func readSummary(path string) (summaryDoc, error) {
	var doc summaryDoc
	f, err := regfile.Open(path)
	if err != nil {
		return doc, err
	}
	defer f.Close()
	var head bytes.Buffer
	r := bufio.NewReader(f)
	lineStart := true
	for {
		chunk, err := r.ReadSlice('\n')
		if lineStart && bytes.HasPrefix(chunk, []byte(statesKey)) {
			break
		}
		head.Write(chunk)
		lineStart = err == nil
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return doc, err
		}
	}
	if err := yamlnode.CheckWritten(head.Bytes()); err != nil {
		return doc, err
	}
	if err := yaml.Unmarshal(head.Bytes(), &doc); err != nil {
		return doc, fmt.Errorf("%s", yaml.FormatError(err, false, false))
	}
	if err := checkWhole(head.Bytes(), readTail(f)); err != nil {
		return doc, err
	}
	return doc, nil
}

// readTail returns the last bytes of f, as many as stateEnd has; fewer, or none, when the file
// is shorter or cannot be read.
func readTail(f *os.File) []byte {
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	n := min(fi.Size(), int64(len(stateEnd)))
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, fi.Size()-n); err != nil {
		return nil
	}
	return buf
}
