package statestore

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/awf-dev/awf/internal/domain/state"
)

// Large outputs live in <dir>/<run-id>/ as files named after their step and tool call:
// "<step>.output" and "<step>.<call-id>.output". A changed output is written under the other
// of two names, the key or the key with ".1" appended, so the file the committed state file
// refers to is never overwritten: a crash before the new state file is renamed into place
// leaves the old state with its old output. The file it replaces is deleted after the commit.
const (
	outputExt  = ".output"
	altSuffix  = ".1"
	maxNameLen = 100 // bytes of a name component before it is shortened with a hash
)

// blob is a large output as this store last committed it.
type blob struct {
	file string // relative to the store directory, slash-separated: "<run-id>/<name>"
	// content is the text written, so that an unchanged output is recognised in O(1): the
	// caller passes the same string again, and comparing a string with itself stops at the
	// pointer. It is dropped once the run has finished, and size and sum take over.
	content string
	size    int64
	sum     [sha256.Size]byte
}

// same reports whether s is the text this blob holds.
func (b blob) same(s string) bool {
	if b.content != "" || b.size == 0 {
		return b.content == s
	}
	return int64(len(s)) == b.size && sha256.Sum256([]byte(s)) == b.sum
}

// forget drops the text of the blob, keeping what is needed to recognise it.
func (b blob) forget() blob {
	if b.content == "" {
		return b
	}
	return blob{file: b.file, size: int64(len(b.content)), sum: sha256.Sum256([]byte(b.content))}
}

// pendingWrite is a large output to write before the state file.
type pendingWrite struct {
	name    string // inside the run's directory
	content string
}

// externalizer builds the copy of a run that is marshalled: large outputs replaced by file
// references. It never modifies the run it is given.
type externalizer struct {
	threshold int
	runID     string
	old       map[string]blob // what the last commit wrote, by key
	next      map[string]blob // what this one refers to
	writes    []pendingWrite
}

// large reports whether an output goes to a file: above the threshold, or not valid UTF-8
// (YAML cannot hold such text exactly). Validity is checked only below the threshold, so the
// cost of a Save does not grow with the size of outputs already written.
func (x *externalizer) large(s string) bool {
	return len(s) > x.threshold || !utf8.ValidString(s)
}

// run returns a shallow copy of r in which only the steps with large outputs are copied.
func (x *externalizer) run(r *state.RunState) *state.RunState {
	cp := *r
	if r.States == nil {
		return &cp
	}
	cp.States = make(map[string]*state.StepState, len(r.States))
	for name, st := range r.States {
		cp.States[name] = x.step(name, st)
	}
	return &cp
}

func (x *externalizer) step(name string, st *state.StepState) *state.StepState {
	if st == nil || !x.stepNeedsCopy(st) {
		return st
	}
	sc := *st
	sc.OutputFile, sc.OutputSize = "", 0
	if x.large(st.Output) {
		sc.OutputFile, sc.OutputSize = x.blob(stepKey(name), st.Output), int64(len(st.Output))
		sc.Output = ""
	}
	if !x.callsNeedCopy(st.ToolCalls) {
		return &sc
	}
	sc.ToolCalls = make([]state.ToolCallRecord, len(st.ToolCalls))
	names := callNames(st.ToolCalls)
	for i, c := range st.ToolCalls {
		sc.ToolCalls[i] = c
		if c.Result == nil || !x.resultNeedsCopy(c.Result) {
			continue
		}
		rc := *c.Result
		rc.OutputFile, rc.OutputSize = "", 0
		if x.large(rc.Output) {
			rc.OutputFile, rc.OutputSize = x.blob(callKey(name, names[i]), rc.Output), int64(len(rc.Output))
			rc.Output = ""
		}
		sc.ToolCalls[i].Result = &rc
	}
	return &sc
}

// stepNeedsCopy reports whether a step's record differs in the file: a large output, or
// OutputFile fields (owned by the store) to clear.
func (x *externalizer) stepNeedsCopy(st *state.StepState) bool {
	return x.large(st.Output) || st.OutputFile != "" || st.OutputSize != 0 || x.callsNeedCopy(st.ToolCalls)
}

func (x *externalizer) callsNeedCopy(calls []state.ToolCallRecord) bool {
	for _, c := range calls {
		if c.Result != nil && x.resultNeedsCopy(c.Result) {
			return true
		}
	}
	return false
}

func (x *externalizer) resultNeedsCopy(r *state.ToolCallResult) bool {
	return x.large(r.Output) || r.OutputFile != "" || r.OutputSize != 0
}

// blob returns the file that holds content under key, scheduling a write unless the last
// commit wrote the same content.
func (x *externalizer) blob(key, content string) string {
	prev, ok := x.old[key]
	if ok && prev.same(content) {
		x.next[key] = prev
		return prev.file
	}
	name := key
	if ok && prev.file == x.runID+"/"+key {
		name = key + altSuffix
	}
	b := blob{file: x.runID + "/" + name, content: content}
	x.next[key] = b
	x.writes = append(x.writes, pendingWrite{name: name, content: content})
	return b.file
}

// stepKey and callKey name the files of large outputs. Name components are escaped, so a
// "." separates them unambiguously.
func stepKey(step string) string { return component(step) + outputExt }

func callKey(step, call string) string { return component(step) + "." + call + outputExt }

// callNames gives each tool call of a step a distinct file name component: its escaped id,
// with "~<index>" added when the id is empty or repeated.
func callNames(calls []state.ToolCallRecord) []string {
	names := make([]string, len(calls))
	used := make(map[string]bool, len(calls))
	for i, c := range calls {
		n := component(c.ID)
		if c.ID == "" || used[n] {
			n += "~" + strconv.Itoa(i)
		}
		used[n] = true
		names[i] = n
	}
	return names
}

// component escapes s for use in a file name: bytes other than ASCII letters, digits, '_' and
// '-' become %XX, and a long result is cut and made unique with a hash.
func component(s string) string {
	if s == "" {
		return "%"
	}
	var b strings.Builder
	for i := range len(s) {
		c := s[i]
		if safeByte(c) {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	out := b.String()
	if len(out) > maxNameLen {
		sum := sha256.Sum256([]byte(s))
		out = out[:maxNameLen-17] + "~" + hex.EncodeToString(sum[:8])
	}
	return out
}

// safeByte reports whether c can appear in a file name as it is: an ASCII letter or digit,
// '_' or '-'.
func safeByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// restorer reads large outputs back into a loaded run and records them as committed.
type restorer struct {
	dir   string
	runID string
	blobs map[string]blob
}

func (r *restorer) run(rs *state.RunState) error {
	for name, st := range rs.States {
		if st == nil {
			continue
		}
		if err := r.output(stepKey(name), &st.Output, &st.OutputFile, &st.OutputSize); err != nil {
			return fmt.Errorf("output of step %q: %w", name, err)
		}
		names := callNames(st.ToolCalls)
		for i, c := range st.ToolCalls {
			if c.Result == nil {
				continue
			}
			res := c.Result
			if err := r.output(callKey(name, names[i]), &res.Output, &res.OutputFile, &res.OutputSize); err != nil {
				return fmt.Errorf("output of step %q tool call %q: %w", name, c.ID, err)
			}
		}
	}
	return nil
}

// output reads the file a record refers to into *out and clears the reference.
func (r *restorer) output(key string, out, file *string, size *int64) error {
	if *file == "" {
		*size = 0
		return nil
	}
	rel := *file
	if !filepath.IsLocal(filepath.FromSlash(rel)) || !strings.HasPrefix(path.Clean(rel), r.runID+"/") {
		return fmt.Errorf("output file %q is outside the run's directory", rel)
	}
	p := filepath.Join(r.dir, filepath.FromSlash(rel))
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	if int64(len(data)) != *size {
		return fmt.Errorf("%s holds %d bytes, the state file says %d", p, len(data), *size)
	}
	*out = string(data)
	r.blobs[key] = blob{file: rel, content: *out}
	*file, *size = "", 0
	return nil
}
