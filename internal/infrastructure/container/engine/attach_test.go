package engine_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/infrastructure/container/engine"
	"github.com/awf-dev/awf/internal/infrastructure/container/engine/enginetest"
)

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestDemux(t *testing.T) {
	out, errOut, sys := enginetest.Stdout, enginetest.Stderr, enginetest.SystemErr
	frame := enginetest.Frame
	tests := []struct {
		name       string
		stream     []byte
		stdout     string
		stderr     string
		err        error  // errors.Is
		errMessage string // or a message to contain
	}{
		{"empty", nil, "", "", nil, ""},
		{"interleaved", cat(frame(out, "one "), frame(errOut, "oops\n"), frame(out, "two"), frame(errOut, "!")), "one two", "oops\n!", nil, ""},
		{"stdin goes to stdout", frame(0, "in"), "in", "", nil, ""},
		{"empty frame", cat(frame(out, ""), frame(out, "x")), "x", "", nil, ""},
		{"a frame larger than the copy buffer", frame(out, strings.Repeat("a", 100_000)), strings.Repeat("a", 100_000), "", nil, ""},
		{"header cut short", cat(frame(out, "ok"), []byte{1, 0, 0}), "ok", "", io.ErrUnexpectedEOF, ""},
		{"payload cut short", cat(frame(out, "ok"), frame(errOut, "truncated")[:12]), "ok", "trun", io.ErrUnexpectedEOF, ""},
		{"the engine's error", cat(frame(out, "ok"), frame(sys, "exec failed"), frame(out, "never")), "ok", "", nil, "docker engine: exec failed"},
		{"the engine's error cut short", frame(sys, "exec failed")[:10], "", "", io.ErrUnexpectedEOF, ""},
		{"unknown stream", cat(frame(out, "ok"), frame(7, "x")), "ok", "", nil, "unknown stream 7"},
	}
	readers := map[string]func(io.Reader) io.Reader{
		"whole":      func(r io.Reader) io.Reader { return r },
		"byte":       iotest.OneByteReader,
		"half":       iotest.HalfReader,
		"data error": iotest.DataErrReader,
	}
	for _, tc := range tests {
		for rname, wrap := range readers {
			t.Run(tc.name+"/"+rname, func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				err := engine.Demux(&stdout, &stderr, wrap(bytes.NewReader(tc.stream)))
				switch {
				case tc.errMessage != "":
					if err == nil || !strings.Contains(err.Error(), tc.errMessage) {
						t.Errorf("Demux = %v, want an error containing %q", err, tc.errMessage)
					}
				case !errors.Is(err, tc.err):
					t.Errorf("Demux = %v, want %v", err, tc.err)
				}
				if stdout.String() != tc.stdout || stderr.String() != tc.stderr {
					t.Errorf("Demux wrote stdout %.40q, stderr %.40q; want %.40q, %.40q", stdout.String(), stderr.String(), tc.stdout, tc.stderr)
				}
			})
		}
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestDemuxWriteError(t *testing.T) {
	err := engine.Demux(io.Discard, failWriter{}, bytes.NewReader(enginetest.Frame(enginetest.Stderr, "x")))
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Demux into a failing writer = %v, want its error", err)
	}
}

// notifyWriter is a writer that sends what it is given on a channel.
type notifyWriter chan string

func (w notifyWriter) Write(p []byte) (int, error) {
	w <- string(p)
	return len(p), nil
}

// attachServer is a fake engine whose attach endpoint checks the request, upgrades the
// connection and hands it to stream; every other request fails the test.
func attachServer(t *testing.T, stream func(w io.Writer)) *engine.Client {
	t.Helper()
	return client(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []string{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Connection"), r.Header.Get("Upgrade")}
		want := []string{"POST", "/v1.41/containers/c0ffee/attach", "stderr=1&stdout=1&stream=1", "Upgrade", "tcp"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("attach request (-want +got):\n%s", diff)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		conn := enginetest.Upgrade(t, w)
		if conn == nil {
			return
		}
		defer conn.Close()
		stream(conn)
	}))
}

func TestAttachSplitFrames(t *testing.T) {
	stdout := make(notifyWriter, 10)
	c := attachServer(t, func(w io.Writer) {
		hello, oops := enginetest.Frame(enginetest.Stdout, "hello"), enginetest.Frame(enginetest.Stderr, "oops")
		w.Write(hello[:11]) // the header and "hel"
		if got := <-stdout; got != "hel" {
			t.Errorf("first read of stdout = %q, want hel", got)
		}
		w.Write(cat(hello[11:], oops[:3])) // "lo" and part of the next header
		w.Write(cat(oops[3:], enginetest.Frame(enginetest.Stdout, "end")))
	})
	// The handshake's context ends once AttachContainer has returned: the stream must not.
	ctx, cancel := context.WithCancel(t.Context())
	stream, err := c.AttachContainer(ctx, "c0ffee")
	cancel()
	if err != nil {
		t.Fatalf("AttachContainer: %v", err)
	}
	defer stream.Close()
	var stderr bytes.Buffer
	if err := engine.Demux(stdout, &stderr, stream); err != nil {
		t.Errorf("Demux = %v, want a clean end", err)
	}
	close(stdout)
	var rest strings.Builder
	for s := range stdout {
		rest.WriteString(s)
	}
	if rest.String() != "loend" || stderr.String() != "oops" {
		t.Errorf("stdout after hel = %q, stderr %q; want loend, oops", rest.String(), stderr.String())
	}
}

func TestAttachTruncatedFrame(t *testing.T) {
	c := attachServer(t, func(w io.Writer) {
		w.Write(enginetest.Frame(enginetest.Stdout, "abcdefghij")[:11]) // then hang up
	})
	stream, err := c.AttachContainer(t.Context(), "c0ffee")
	if err != nil {
		t.Fatalf("AttachContainer: %v", err)
	}
	defer stream.Close()
	var stdout bytes.Buffer
	if err := engine.Demux(&stdout, io.Discard, stream); !errors.Is(err, io.ErrUnexpectedEOF) || stdout.String() != "abc" {
		t.Errorf("Demux of a cut frame = %v, stdout %q; want io.ErrUnexpectedEOF, abc", err, stdout.String())
	}
}

// TestAttachCloseEndsDemux: closing the stream ends a Demux waiting for a container that
// says nothing, as the backend does when draining takes too long.
func TestAttachCloseEndsDemux(t *testing.T) {
	release := make(chan struct{})
	c := attachServer(t, func(io.Writer) { <-release })
	defer close(release)
	stream, err := c.AttachContainer(t.Context(), "c0ffee")
	if err != nil {
		t.Fatalf("AttachContainer: %v", err)
	}
	done := make(chan error)
	go func() { done <- engine.Demux(io.Discard, io.Discard, stream) }()
	time.Sleep(10 * time.Millisecond) // let Demux block in a read; it must end either way
	stream.Close()
	if err := <-done; err == nil {
		t.Errorf("Demux of a closed stream = nil, want the read error")
	}
}

func TestAttachRefused(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		is      error
		msg     string
	}{
		{"no such container", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"message": "No such container: c0ffee"}`)
		}, engine.ErrNotFound, "No such container"},
		{"no upgrade", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "a plain answer")
		}, nil, "did not upgrade the connection (HTTP 200)"},
		{"the engine hangs up", func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		}, engine.ErrConnectionFailed, "attach to container c0ffee"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stream, err := client(t, tc.handler).AttachContainer(t.Context(), "c0ffee")
			if stream != nil {
				stream.Close()
			}
			if err == nil || tc.is != nil && !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("AttachContainer = %v, want an error (%v) containing %q", err, tc.is, tc.msg)
			}
		})
	}
}
