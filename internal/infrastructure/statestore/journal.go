package statestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"time"
	"unsafe"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
)

// A run's journal, <dir>/<run-id>.journal, holds the changes made to its steps since its state
// file was written, one JSON line each (journalEntry), so that the save of a step's start or
// end, or of an agent step's tool call, appends a few hundred bytes instead of rewriting a
// state file that grows with every step and call. Each append is flushed (fdatasync) before
// AppendStep returns.
//
// A Save writes the state file with every change, and the sequence number of the last line
// it holds as journal_seq; only then, once the rename is durable, is the journal emptied. A
// crash in between leaves lines that Load skips by their numbers, so none is applied twice.
// The journal is deleted when the run finishes.
const (
	journalExt    = ".journal"
	journalSeqKey = "journal_seq"
)

// journal is what a runEntry knows of its run's journal and of what the journal's lines are
// changes from.
type journal struct {
	// head is a deep copy of the run without its steps, order and updated_at, as the last
	// state file holds it; nil when there is no baseline to journal changes from (before this
	// store's first Save of the run, after a failed write). The steps' baseline is the
	// runEncoder's copies of their records.
	head *state.RunState
	seq  int64    // the last sequence number written, in a line or as journal_seq
	file *os.File // open for appending; nil until this store appends
	size int64    // bytes in the file, as this store knows them
	// snapshot is the size of the last state file: once the journal is larger, the next
	// append rewrites the state file instead (see minCompact).
	snapshot int64
	// order is the run's Order as the last save or append saw it: the very slice, so that
	// an order that only grew in place is recognised without comparing its names.
	order []string
	// dirty: the file may hold lines, to be emptied after the next state file. known: the
	// file's state is known (the run was loaded, or its stale journal deleted). broken: the
	// file may end with a partial line, so nothing may be appended before it is emptied.
	dirty, known, broken bool
	// damaged: the file holds lines that were left out when the run was loaded (LoadValid);
	// it is moved aside, not emptied, once a state file holds everything else.
	damaged bool
	buf     bytes.Buffer
}

// journalPath returns the journal of run id.
func (s *Store) journalPath(id string) string { return filepath.Join(s.dir, id+journalExt) }

// AppendStep saves run as Save does, at the cost of appending to the run's journal only the
// changes made to the record of step since the last Save or AppendStep: the step itself when
// it is new (added at the end of the run's order), the records of tool calls added or
// changed, the conversation's new messages, the step's other fields when they changed.
// Changes to other steps wait for the next Save. It falls back to Save when the store has no
// baseline for the run (it has not saved it yet), when anything but the step and UpdatedAt
// changed in the run's head or its list of steps, when the run has finished, and when a change
// cannot be written exactly as JSON (see errNotJournaled); and at a step's start or end when
// the journal has grown larger than the state file (see mustFold and minCompact), so that the
// cost of a save, amortised, does not grow with the run. A step the run does not have is a
// fault.System error.
func (s *Store) AppendStep(ctx context.Context, run *state.RunState, step string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if run == nil {
		return fault.New(fault.System, "append step: nil run")
	}
	if err := CheckID(run.ID); err != nil {
		return fmt.Errorf("append step: %w", err)
	}
	if run.States[step] == nil {
		return fault.New(fault.System, "append step: run %s has no step %q", run.ID, step)
	}
	e := s.entry(run.ID)
	e.mu.Lock()
	defer e.mu.Unlock()
	var done bool
	var err error
	if !e.mustFold(run, step, s.compactFloor) {
		done, err = s.appendStep(ctx, run, step, e)
	}
	if err == nil && !done {
		err = s.save(run, e)
	}
	if err != nil {
		return fmt.Errorf("save step %q of run %s: %w", step, run.ID, err)
	}
	return nil
}

// appendStep journals the changes of step name; done is false when a Save must be made
// instead. Steps added to the run since the last save, at the end of its order (a parallel
// step's children start together, and a child's start may wait to be saved: StartSaveDelay),
// are journaled first, in the same write: without them, every save of a sibling while one
// was unsaved rewrote the state file, a cost growing with the run. A failure leaves no
// baseline, so that the next save rewrites the state file. When ctx says what changed
// (ports.StepChanges), only that is compared and looked at for large outputs, so that the
// cost does not grow with the step's lists.
func (s *Store) appendStep(ctx context.Context, run *state.RunState, name string, e *runEntry) (done bool, err error) {
	names, ok := e.canJournal(run, name)
	if !ok {
		return false, nil
	}
	defer func() {
		if err != nil {
			e.j.head = nil
		}
	}()
	x := &externalizer{threshold: s.threshold, runID: run.ID, old: e.blobs, next: map[string]blob{}, seen: e.seen}
	added := map[string]*stepEncoder{}
	seq := e.j.seq
	e.j.buf.Reset()
	for _, n := range names {
		enc := e.enc.steps[n]
		if enc == nil {
			enc = &stepEncoder{}
			added[n] = enc
		}
		en, ok, err := s.entryOf(ctx, run, n, n == name, enc, x, seq+1)
		if err != nil || !ok {
			return false, err
		}
		en.Added = added[n] != nil
		if err := encodeEntry(&e.j.buf, &en); err != nil {
			return false, nil // errNotJournaled
		}
		seq = en.Seq
	}
	if err := s.writeOutputs(run.ID, x.writes); err != nil {
		return false, err
	}
	// The number is used even if the append fails: the lines may be on disk, and the next
	// state file must say that it holds them.
	e.j.seq = seq
	if err := s.appendLine(run.ID, e); err != nil {
		return false, err
	}
	s.commitOutputs(e, x.next)
	for _, n := range names {
		if enc := added[n]; enc != nil {
			if e.enc.steps == nil {
				e.enc.steps = map[string]*stepEncoder{}
			}
			e.enc.steps[n] = enc
			e.enc.appendOrder(n)
		}
	}
	return true, nil
}

// entryOf is the journal line of the changes of step name since enc's baseline, numbered
// seq; ok is false when the step must be saved whole. hinted says ctx's ports.StepChanges,
// if any, are the step's.
func (s *Store) entryOf(ctx context.Context, run *state.RunState, name string, hinted bool, enc *stepEncoder,
	x *externalizer, seq int64) (en journalEntry, ok bool, err error) {
	st := run.States[name]
	prev := listLens{len(enc.calls.was), len(enc.msgs.was), len(enc.turns.was)}
	var xs *state.StepState
	var ch stepChanges
	if hint, has := ports.StepChangesOf(ctx); has && hinted {
		ch, err = enc.changes(name, st, &hint)
		xs = x.changedStep(name, st, ch)
	} else {
		xs = x.step(name, st)
		ch, err = enc.changes(name, xs, nil)
	}
	if err != nil {
		return en, false, fmt.Errorf("encode: %w", err)
	}
	if ch.whole {
		return en, false, nil
	}
	en, err = newEntry(seq, run.UpdatedAt, name, xs, ch, prev)
	if errors.Is(err, errNotJournaled) {
		return en, false, nil
	}
	return en, err == nil, err
}

// canJournal returns the steps whose changes a save of step name journals: the steps added
// at the end of the run's order since the last save, then name when it is not one of them.
// ok is false when a Save must be made instead: the store has no baseline for the run, its
// list of steps is not the one saved last with steps added at the end of its order, something
// else changed in the run's head, the run has finished or the journal cannot be appended to.
// It costs the same whatever the number of steps: the list is checked by its length and the
// order by identity (see orderGrew).
func (e *runEntry) canJournal(run *state.RunState, name string) (names []string, ok bool) {
	if e.j.head == nil || e.j.broken || run.FinishedAt != nil {
		return nil, false
	}
	known := len(e.enc.order)
	grown := len(run.Order) - known
	if grown < 0 || len(run.States) != len(e.enc.steps)+grown || !e.orderGrew(run.Order, grown) {
		return nil, false
	}
	names = run.Order[known:]
	for _, n := range names {
		if e.enc.steps[n] != nil || run.States[n] == nil {
			return nil, false
		}
	}
	if e.enc.steps[name] != nil {
		names = append(slices.Clip(names), name)
	} else if !slices.Contains(names, name) {
		return nil, false
	}
	h := headOf(run)
	return names, equal(reflect.ValueOf(e.j.head).Elem(), reflect.ValueOf(h).Elem())
}

// orderGrew reports whether order is the order last saved with grown names added at its end.
// A run's order only grows at its end (ports.StepJournal), so when order is the slice last
// seen, or that slice grown in place, the names already saved are not compared; they are when
// order has moved to another array, which appending does a number of times that grows with
// the logarithm of its length.
func (e *runEntry) orderGrew(order []string, grown int) bool {
	known := len(e.enc.order)
	switch {
	case len(order) != known+grown:
		return false
	case len(e.j.order) != known || unsafe.SliceData(order) != unsafe.SliceData(e.j.order):
		if !slices.Equal(order[:known], e.enc.order) {
			return false
		}
	}
	e.j.order = order
	return true
}

// mustFold reports whether a save of step must fold the journal into a new state file, in
// place of an append: when the journal has grown larger than the state file (at least floor)
// and the save is one of a step boundary, the step being new or no longer running. The save
// is then one write to disk, as an append is, and what it records is durable when it returns
// and no later. A running step's saves (an agent's tool calls) only append: the fold, which
// costs a rename, a directory sync and a truncation, waits for the step's end, so that the
// time between a call in flight becoming durable and the call running stays one fdatasync.
func (e *runEntry) mustFold(run *state.RunState, step string, floor int64) bool {
	if e.j.size <= max(e.j.snapshot, floor) {
		return false
	}
	return e.enc.steps[step] == nil || run.States[step].Status != state.Running
}

// minCompact is the smallest journal that is folded into a new state file before the run
// ends. A larger one is folded once it is larger than the last state file: rewriting the file
// then costs, per byte appended, the same whatever the run's length, and reading the run
// back reads at most twice the state file.
const minCompact = 16 << 10

// headOf returns a shallow copy of run without its steps, order and updated_at: what the
// journal cannot hold.
func headOf(run *state.RunState) *state.RunState {
	h := *run
	h.States, h.Order, h.UpdatedAt = nil, nil, time.Time{}
	return &h
}

// writeOutputs writes large outputs to the run's directory and syncs it, before the state
// file or journal line that refers to them. A directory it creates is made durable in the
// store's directory at once: a journal line is not followed by a sync of that directory.
func (s *Store) writeOutputs(id string, writes []pendingWrite) error {
	if len(writes) == 0 {
		return nil
	}
	runDir := filepath.Join(s.dir, id)
	_, statErr := os.Stat(runDir)
	if err := ensureDir(runDir); err != nil {
		return err
	}
	if errors.Is(statErr, os.ErrNotExist) {
		if err := s.syncDir(s.dir); err != nil {
			return err
		}
	}
	for _, w := range writes {
		if err := writeAtomic(runDir, w.name, !s.noSync, w.content); err != nil {
			return err
		}
	}
	return s.syncDir(runDir)
}

// commitOutputs records the output files a journal line refers to, deleting those they
// replace: the line, now durable, supersedes whatever referred to them.
func (s *Store) commitOutputs(e *runEntry, next map[string]blob) {
	for key, b := range next {
		if old, ok := e.blobs[key]; ok && old.file != b.file {
			_ = removeIfExists(filepath.Join(s.dir, filepath.FromSlash(old.file)))
		}
		e.blobs[key] = b
	}
}

// appendLine appends the line in e.j.buf to the run's journal and flushes it to disk. A
// failed write is cut off again, or else the journal is marked broken.
func (s *Store) appendLine(id string, e *runEntry) error {
	p := s.journalPath(id)
	opened := false
	if e.j.file == nil {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, fileMode)
		if err != nil {
			return fmt.Errorf("open journal: %w", err)
		}
		fi, err := f.Stat()
		if err != nil {
			_ = f.Close()
			return fmt.Errorf("open journal: %w", err)
		}
		e.j.file, e.j.size, opened = f, fi.Size(), true
	}
	e.j.dirty = true
	n, err := e.j.file.Write(e.j.buf.Bytes())
	if err != nil {
		if n > 0 && e.j.file.Truncate(e.j.size) != nil {
			e.j.broken = true
		}
		return fmt.Errorf("append to %s: %w", p, err)
	}
	e.j.size += int64(n)
	if !s.noSync {
		if err := syncData(e.j.file); err != nil {
			return fmt.Errorf("sync %s: %w", p, err)
		}
	}
	if opened {
		return s.syncDir(s.dir) // the file may be new
	}
	return nil
}

// clearJournal empties the journal after a state file that holds all its lines was made
// durable; a finished run's is deleted. A failure is not an error: lines left behind are
// skipped by their sequence numbers, and appending waits (broken) until the journal is
// cleared if it may end with a partial line.
func (s *Store) clearJournal(run *state.RunState, e *runEntry) {
	p := s.journalPath(run.ID)
	if e.j.damaged {
		s.keepDamagedJournal(p, e)
		return
	}
	if run.FinishedAt != nil {
		if e.j.file == nil && !e.j.dirty {
			return
		}
		if e.j.file != nil {
			_ = e.j.file.Close()
			e.j.file = nil
		}
		if removeIfExists(p) == nil {
			e.j.dirty, e.j.broken, e.j.size = false, false, 0
		}
		return
	}
	if !e.j.dirty {
		return
	}
	var err error
	if e.j.file != nil {
		err = e.j.file.Truncate(0)
	} else {
		err = removeIfExists(p)
	}
	if err == nil {
		e.j.dirty, e.j.broken, e.j.size = false, false, 0
	}
}

// damagedExt ends the name of a damaged journal kept for whoever wants to see what was lost.
const damagedExt = ".damaged"

// keepDamagedJournal moves the journal at p, damaged lines and all, to p + ".damaged" (over
// an older one), instead of emptying it.
func (s *Store) keepDamagedJournal(p string, e *runEntry) {
	if e.j.file != nil {
		_ = e.j.file.Close()
		e.j.file = nil
	}
	if err := os.Rename(p, p+damagedExt); err != nil && !errors.Is(err, os.ErrNotExist) {
		return // tried again at the next save
	}
	_ = s.syncDir(s.dir)
	e.j.dirty, e.j.broken, e.j.damaged, e.j.size = false, false, false, 0
}

// forgetStaleJournal deletes, before the first state file this store writes for a run it
// did not load, a journal that an earlier process of the same run id may have left: its lines
// could otherwise be taken for changes to the new state file.
func (s *Store) forgetStaleJournal(id string, e *runEntry) error {
	if e.j.known {
		return nil
	}
	if err := removeIfExists(s.journalPath(id)); err != nil {
		return fmt.Errorf("delete stale journal: %w", err)
	}
	e.j.known = true
	return nil
}

// journalSeqLine is the state file's last line, naming the last journal line it holds; none
// for a run that never journaled.
func (e *runEntry) journalSeqLine() string {
	if e.j.seq == 0 {
		return ""
	}
	return fmt.Sprintf("%s: %d\n", journalSeqKey, e.j.seq)
}
