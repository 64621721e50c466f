package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// AttachContainer attaches to the stdout and stderr of container id, from now until it stops,
// and returns the stream, multiplexed as Demux reads it (the container has no TTY). Attach
// before starting the container to miss nothing. The engine upgrades the HTTP connection to a
// raw stream (101 Switching Protocols); ctx bounds that exchange only, not the stream, which
// lasts until the container stops (EOF) or Close, which also ends a Demux reading it.
func (c *Client) AttachContainer(ctx context.Context, id string) (io.ReadCloser, error) {
	if id == "" {
		return nil, errNoID
	}
	op := "attach to container " + id
	hdr := http.Header{"Connection": {"Upgrade"}, "Upgrade": {"tcp"}, "Content-Type": {"text/plain"}}
	resp, err := c.send(ctx, op, http.MethodPost, "/containers/"+id+"/attach",
		url.Values{"stream": {"1"}, "stdout": {"1"}, "stderr": {"1"}}, nil, hdr)
	if err != nil {
		return nil, err
	}
	stream, ok := resp.Body.(io.ReadWriteCloser) // net/http hands over the connection on a 101
	if resp.StatusCode != http.StatusSwitchingProtocols || !ok {
		drainClose(resp.Body)
		return nil, fmt.Errorf("%s: the engine did not upgrade the connection (HTTP %d)", op, resp.StatusCode)
	}
	return stream, nil
}

// Stream numbers in the header of a frame of a multiplexed stream.
const (
	streamStdin     = 0
	streamStdout    = 1
	streamStderr    = 2
	streamSystemErr = 3 // the engine's own error, ending the stream
)

// maxSystemErr bounds what Demux reads of the engine's error frame.
const maxSystemErr = 64 << 10

// Demux copies the multiplexed stream r to stdout and stderr until r ends. Each frame is an
// 8-byte header (the stream: 1 stdout, 2 stderr, 0 stdin, written to stdout, 3 the engine's
// error; three zero bytes; the payload's length, big-endian uint32) and the payload; frames
// may arrive split across reads in any way. It returns nil when r ends between frames,
// io.ErrUnexpectedEOF (wrapped) when it ends inside one, the engine's message for an error
// frame, and the first error reading r or writing to stdout or stderr.
func Demux(stdout, stderr io.Writer, r io.Reader) error {
	var hdr [8]byte
	buf := make([]byte, 32<<10)
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if err == io.EOF {
				return nil
			}
			return fmt.Errorf("attach stream: frame header: %w", err)
		}
		size := int64(binary.BigEndian.Uint32(hdr[4:]))
		var dst io.Writer
		switch hdr[0] {
		case streamStdin, streamStdout:
			dst = stdout
		case streamStderr:
			dst = stderr
		case streamSystemErr:
			return systemError(r, size)
		default:
			return fmt.Errorf("attach stream: unknown stream %d in a frame header", hdr[0])
		}
		n, err := io.CopyBuffer(dst, io.LimitReader(r, size), buf)
		if err == nil && n < size {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return fmt.Errorf("attach stream: frame of %d bytes: %w", size, err)
		}
	}
}

// systemError reads the engine's error frame into an error.
func systemError(r io.Reader, size int64) error {
	msg := make([]byte, min(size, maxSystemErr))
	if _, err := io.ReadFull(r, msg); err != nil {
		return fmt.Errorf("attach stream: error frame: %w", noEOF(err))
	}
	return fmt.Errorf("attach stream: docker engine: %s", msg)
}

// noEOF turns a clean EOF inside a frame into io.ErrUnexpectedEOF: the stream was cut.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
