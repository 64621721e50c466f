package wire

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Headers of the streamable HTTP transport.
const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "Mcp-Protocol-Version"
)

// httpTransport is the streamable HTTP transport of a client: each message is a POST; the
// server answers a request with one JSON message or an SSE stream that ends with the answer
// (and may carry the server's requests and notifications before it). Once the session is
// initialized, a GET opens the stream of the server's own messages (list_changed), when the
// server offers one; it is not reopened if it breaks.
type httpTransport struct {
	endpoint string
	client   *http.Client

	mu        sync.Mutex
	sessionID string
	version   string
	// stopListen ends the GET stream.
	stopListen context.CancelFunc

	in        chan incoming
	closed    chan struct{}
	closeOnce sync.Once
}

// NewHTTPTransport is a client's transport to the streamable HTTP server at endpoint, reached
// with client. Closing the session sends DELETE with the session's id, when the server gave
// one.
func NewHTTPTransport(endpoint string, client *http.Client) Transport {
	return &httpTransport{endpoint: endpoint, client: client, in: make(chan incoming, 16), closed: make(chan struct{})}
}

func (t *httpTransport) start(context.Context) error { return nil }

func (t *httpTransport) setVersion(v string) {
	t.mu.Lock()
	t.version = v
	t.mu.Unlock()
}

// ready opens the GET stream of the server's own messages. A server without one answers 405
// (or anything but an event stream): awf then gets its notifications only with answers.
func (t *httpTransport) ready() {
	ctx, cancel := context.WithCancel(context.Background())
	t.mu.Lock()
	t.stopListen = cancel
	t.mu.Unlock()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.endpoint, nil)
	if err != nil {
		cancel()
		return
	}
	req.Header.Set("Accept", "text/event-stream")
	t.header(req.Header)
	go func() {
		resp, err := t.client.Do(req)
		if err != nil {
			return
		}
		ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		if resp.StatusCode != http.StatusOK || ctype != "text/event-stream" {
			resp.Body.Close()
			return
		}
		t.readEvents(resp.Body, "")
	}()
}

func (t *httpTransport) header(h http.Header) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sessionID != "" {
		h.Set(headerSessionID, t.sessionID)
	}
	if t.version != "" {
		h.Set(headerProtocolVersion, t.version)
	}
}

func (t *httpTransport) send(ctx context.Context, data []byte, id string) error {
	select {
	case <-t.closed:
		return ErrConnectionClosed
	default:
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.endpoint, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	t.header(req.Header)
	resp, err := t.client.Do(req)
	if err != nil {
		return err
	}
	if sid := resp.Header.Get(headerSessionID); sid != "" {
		t.mu.Lock()
		if t.sessionID == "" {
			t.sessionID = sid
		}
		t.mu.Unlock()
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		msg := strings.TrimSpace(strings.ToValidUTF8(string(body), "?"))
		if resp.StatusCode == http.StatusNotFound && req.Header.Get(headerSessionID) != "" {
			return fmt.Errorf("the server ended the session (HTTP %s): %s", resp.Status, msg)
		}
		return fmt.Errorf("HTTP %s: %s", resp.Status, msg)
	}
	ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case id == "" || resp.StatusCode == http.StatusAccepted:
		resp.Body.Close()
		if id != "" {
			t.push(incoming{lost: id, err: errors.New("the server accepted the request without answering it")})
		}
	case ctype == "text/event-stream":
		go t.readEvents(resp.Body, id)
	default:
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, MaxMessage+1))
		switch {
		case err != nil:
			t.push(incoming{lost: id, err: err})
		case len(body) > MaxMessage:
			t.push(incoming{lost: id, err: errors.New("the answer is longer than 16 MiB")})
		case !answers(body, id):
			t.push(incoming{data: body})
			t.push(incoming{lost: id, err: errors.New("the server answered with another message")})
		default:
			t.push(incoming{data: body})
		}
	}
	return nil
}

// answers reports whether data is the response to request id.
func answers(data []byte, id string) bool {
	m, err := decode(data)
	return err == nil && m.isResponse() && idKey(m.ID) == id
}

// readEvents passes on the messages of an SSE stream; when it ends without the answer to
// request id (when there is one: not on the GET stream), the answer is lost.
func (t *httpTransport) readEvents(body io.ReadCloser, id string) {
	defer body.Close()
	lines := newLineReader(body)
	var data []byte
	event, got, tooLong := "", false, false
	for {
		line, long, err := lines.read()
		if err != nil {
			if !got && id != "" {
				if errors.Is(err, io.EOF) {
					err = errors.New("the server's event stream ended before the answer")
				}
				t.push(incoming{lost: id, err: err})
			}
			return
		}
		switch {
		case long:
			tooLong = true
		case len(line) == 0:
			if len(data) > 0 && !tooLong && (event == "" || event == "message") {
				msg := bytes.Clone(data)
				got = got || answers(msg, id)
				t.push(incoming{data: msg})
			}
			data, event, tooLong = data[:0], "", false
		case bytes.HasPrefix(line, []byte("data:")):
			v := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
			if len(data)+len(v) > MaxMessage {
				tooLong = true
			} else if !tooLong {
				if len(data) > 0 {
					data = append(data, '\n')
				}
				data = append(data, v...)
			}
		case bytes.HasPrefix(line, []byte("event:")):
			event = strings.TrimSpace(string(line[len("event:"):]))
		}
	}
}

func (t *httpTransport) push(in incoming) {
	select {
	case t.in <- in:
	case <-t.closed:
	}
}

func (t *httpTransport) recv() (incoming, error) {
	select {
	case in := <-t.in:
		return in, nil
	case <-t.closed:
		return incoming{}, io.EOF
	}
}

// close ends the session on the server's side (DELETE, when it gave a session id) and ours.
func (t *httpTransport) close() error {
	t.closeOnce.Do(func() {
		t.mu.Lock()
		sid, stop := t.sessionID, t.stopListen
		t.mu.Unlock()
		if stop != nil {
			stop()
		}
		if sid != "" {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if req, err := http.NewRequestWithContext(ctx, http.MethodDelete, t.endpoint, nil); err == nil {
				t.header(req.Header)
				if resp, err := t.client.Do(req); err == nil {
					resp.Body.Close()
				}
			}
		}
		close(t.closed)
	})
	return nil
}
