package file

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/awf-dev/awf/internal/domain/tool"
)

var _ tool.Checker = (*WriteFile)(nil)

// Keys of write_file's intent: the digest of what it is about to write and, when appending,
// the file's size before.
const (
	intentDigest = "sha256"
	intentSize   = "size_before"
)

// Checks reports true: write_file can always tell whether a write took effect.
func (t *WriteFile) Checks() bool { return true }

// Intent records, before the write, the SHA-256 of the content and, when appending, the size
// of the file before it (0 when there is none), so that Check can tell afterwards whether the
// write happened.
func (t *WriteFile) Intent(_ context.Context, call tool.Invocation) map[string]any {
	content, _ := call.Args["content"].(string)
	intent := map[string]any{intentDigest: digest([]byte(content))}
	if ap, _ := call.Args["append"].(bool); ap {
		size := int64(0)
		if fi, err := t.stat(call.Args["path"]); err == nil {
			size = fi.Size()
		}
		intent[intentSize] = strconv.FormatInt(size, 10) // text: the state keeps it exactly
	}
	return intent
}

// Check compares the file with the intent: a replaced file holds exactly the content meant
// (the write is atomic: the file is the old or the new one), an appended one grew by the
// content, which is its end. A file that is neither was not written (or changed since, which
// nothing in the step did: the call was its last).
func (t *WriteFile) Check(_ context.Context, call tool.Invocation, intent map[string]any) tool.Check {
	want, _ := intent[intentDigest].(string)
	content, _ := call.Args["content"].(string)
	if want == "" {
		return tool.Check{Verdict: tool.VerdictUnknown, Detail: "no digest was recorded before the write"}
	}
	fi, err := t.stat(call.Args["path"])
	if err != nil {
		return tool.Check{Verdict: tool.VerdictNotDone, Detail: fmt.Sprintf("the file is not there (%v)", err)}
	}
	from := int64(0)
	if ap, _ := call.Args["append"].(bool); ap {
		text, _ := intent[intentSize].(string)
		before, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return tool.Check{Verdict: tool.VerdictUnknown, Detail: "the size before the append was not recorded"}
		}
		switch fi.Size() {
		case before:
			return tool.Check{Verdict: tool.VerdictNotDone, Detail: fmt.Sprintf("the file still has its %d bytes", before)}
		case before + int64(len(content)):
			from = before
		default:
			return tool.Check{Verdict: tool.VerdictUnknown, Detail: fmt.Sprintf("the file has %d bytes, was %d, and %d were to be appended", fi.Size(), before, len(content))}
		}
	} else if fi.Size() != int64(len(content)) {
		return tool.Check{Verdict: tool.VerdictNotDone, Detail: fmt.Sprintf("the file has %d bytes, not the %d meant", fi.Size(), len(content))}
	}
	got, err := t.digestFrom(call.Args["path"], from)
	switch {
	case err != nil:
		return tool.Check{Verdict: tool.VerdictUnknown, Detail: err.Error()}
	case got == want:
		return tool.Check{Verdict: tool.VerdictDone, Detail: "the file holds the content meant (sha256 " + want[:12] + "...)"}
	}
	return tool.Check{Verdict: tool.VerdictNotDone, Detail: "the file's content differs from the content meant"}
}

// stat stats the file a call names.
func (t *WriteFile) stat(arg any) (os.FileInfo, error) {
	p, _ := arg.(string)
	abs, err := t.c.resolve(p)
	if err != nil {
		return nil, err
	}
	return os.Lstat(abs)
}

// digestFrom hashes the file a call names from offset on.
func (t *WriteFile) digestFrom(arg any, offset int64) (string, error) {
	p, _ := arg.(string)
	abs, err := t.c.resolve(p)
	if err != nil {
		return "", err
	}
	f, err := os.Open(abs)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return "", err
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
