package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/httpx"
)

// ReadJSON reads a whole reply body into a T and returns the body too, for error messages. A
// failed read is an Execution error; a body that is not JSON is [Malformed].
func ReadJSON[T any](provider string, body io.Reader) (T, []byte, error) {
	var v T
	data, err := io.ReadAll(body)
	if err != nil {
		return v, nil, fault.Wrap(fault.Execution, fmt.Errorf("%s: read response: %w", provider, err))
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return v, data, Malformed(provider, "response", data, err)
	}
	return v, data, nil
}

// Deltas passes streamed text on to a request's OnDelta and remembers whether any went out:
// once the caller has shown text, a failure must be final, or a retry would show it twice. Its
// zero value passes nothing on. It is not safe for concurrent use.
type Deltas struct {
	onDelta func(string)
	emitted bool
}

// NewDeltas passes text to onDelta, which may be nil.
func NewDeltas(onDelta func(string)) Deltas { return Deltas{onDelta: onDelta} }

// Emit passes non-empty text on.
func (d *Deltas) Emit(text string) {
	if text == "" || d.onDelta == nil {
		return
	}
	d.emitted = true
	d.onDelta(text)
}

// Fail returns err for a stream that failed, marked [httpx.Permanent] when text already went
// out.
func (d *Deltas) Fail(err error) (ports.ChatResponse, error) {
	if d.emitted {
		err = httpx.Permanent(err)
	}
	return ports.ChatResponse{}, err
}

// StreamError is the Execution error for a stream that could not be read up to its end marker
// (end names it: "[DONE]"). A body that ended (io.EOF) or was cut off ([httpx.ErrTruncated])
// before it reads "openai: stream ended before [DONE]: ..." and stays truncated, which
// [httpx.Client.Do] retries; any other read error reads "openai: read stream: ...".
func StreamError(provider, end string, err error) error {
	if err == io.EOF {
		err = httpx.ErrTruncated
	}
	if errors.Is(err, httpx.ErrTruncated) {
		return fault.Wrap(fault.Execution, fmt.Errorf("%s: stream ended before %s: %w", provider, end, err))
	}
	return fault.Wrap(fault.Execution, fmt.Errorf("%s: read stream: %w", provider, err))
}
