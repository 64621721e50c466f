package process

// The wire between Run (the parent) and the helper (the same executable, re-run with HelperArg).
//
// Nothing the script needs travels through argv or the environment of the helper: both are
// limited to 128 KiB per string by the kernel, and a bound value may be far larger. The helper's
// own environment is empty (GOCOVERDIR and GORACE excepted), so the Go runtime in it is not
// tuned by the script's variables and /proc/<helper>/environ shows nothing.
//
// Request, parent to helper, on fd 3 (a pipe the parent closes once written):
//
//	"AWFX" 0x01                     magic and version
//	frames, each: tag byte, uvarint n, n bytes of payload
//	  'S'  the script source                    exactly once
//	  'E'  one exported variable, "NAME=VALUE"   any number, in order; a later NAME wins
//	  'V'  one shell variable, not exported:     any number
//	       uvarint len(NAME), NAME, VALUE (the rest of the payload)
//	  'X'  the sandbox spec (package sandbox,     at most once; the helper applies it
//	       Spec.Encode)                          before the script runs
//	  'D'  the working directory, absolute        at most once; the helper enters it
//	                                             first (a helper started ahead of its
//	                                             request was not started in it)
//	  'P'  the control socket's descriptor,      at most once: the helper sets up its
//	       decimal                               sandbox, then serves the calls sent on
//	                                             that socket (serve_linux.go) instead of
//	                                             running the script, which is empty
//	  '.'  end of request, n = 0                  exactly once, last; EOF follows
//
// A frame larger than maxFrame, an unknown tag or a missing frame is a protocol error: the
// helper refuses to run anything. New fields (the sandbox policy) get new tags.
//
// Status, helper to parent, on fd 4 (close-on-exec in the helper, so only the helper holds it):
//
//	'R' n=0                 the helper is set up and about to parse and run the script
//	'F' n, kind byte, msg   the helper failed (bad request, a Setup hook, a classified error
//	                        from an exec middleware); kind is a fault.Kind, msg at most
//	                        maxStatusMsg bytes. The helper exits right after.
//	'L' n, resource NUL msg a resource limit stopped the script (starting a command failed
//	                        with EAGAIN or ENOMEM): resource is "pids" or "memory". The helper
//	                        exits right after.
//	anything else           the Go runtime's crash report: the helper's fd 2 is this pipe
//	                        (limits.go). It runs to EOF.
//
// The parent drains fd 4 while the helper runs and reads it once the helper has exited. No 'R'
// and no 'F' means the executable did not act as a helper at all (main does not call
// HelperMain first).

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/awf-dev/awf/internal/domain/fault"
)

const (
	wireMagic = "AWFX\x01"

	tagScript = 'S'
	tagEnv    = 'E'
	tagVar    = 'V'
	tagEnd    = '.'
	// tagSandbox carries the encoded sandbox spec. [sandbox]
	tagSandbox = 'X'
	tagDir     = 'D'
	// tagServe makes the helper a persistent one; the payload is its control socket's fd.
	tagServe = 'P'

	statusReady  = 'R'
	statusFailed = 'F'
	statusLimit  = 'L'

	// maxFrame bounds one frame, so a corrupt length cannot make the helper allocate without
	// limit.
	maxFrame = 1 << 30
	// maxStatusMsg bounds a failure message, so the helper never blocks on a full status pipe.
	maxStatusMsg = 4 << 10

	wireBuffer = 64 << 10
)

// Request is a script as the helper receives it. Setup hooks may read it and change it.
type Request struct {
	// Script is the shell source (bash dialect).
	Script string
	// Env holds the exported variables, "NAME=VALUE", in order; a later NAME wins.
	Env []string
	// Vars are shell variables, not exported to commands unless the script exports them.
	Vars map[string]string
	// Dir is the helper's working directory, where the script starts: the helper enters it
	// before anything else; "" leaves the helper where it started.
	Dir string
	// Sandbox is the encoded sandbox spec (sandbox.Spec.Encode) the helper applies before
	// the script runs; empty for none. [sandbox]
	Sandbox []byte
	// Serve is the descriptor of the control socket on which a persistent helper receives
	// its calls once its sandbox is set up; 0 for a helper that runs Script and exits.
	Serve int
}

// writeRequest encodes req to w. Vars are written in name order, so the stream is deterministic.
// Small frames are gathered into one buffer; a large payload is written straight from its
// string, so a 10 MB value is neither copied nor split by a fixed-size buffer.
func writeRequest(w io.Writer, req *Request) error {
	fw := frameWriter{w: w, buf: make([]byte, 0, 1024)}
	fw.buf = append(fw.buf, wireMagic...)
	fw.frame(tagScript, req.Script)
	for _, kv := range req.Env {
		fw.frame(tagEnv, kv)
	}
	names := make([]string, 0, len(req.Vars))
	for name := range req.Vars {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		value := req.Vars[name]
		prefix := binary.AppendUvarint(nil, uint64(len(name)))
		fw.header(tagVar, len(prefix)+len(name)+len(value))
		fw.buf = append(fw.buf, prefix...)
		fw.payload(name)
		fw.payload(value)
	}
	if len(req.Sandbox) > 0 { // [sandbox]
		fw.frame(tagSandbox, string(req.Sandbox))
	}
	if req.Dir != "" {
		fw.frame(tagDir, req.Dir)
	}
	if req.Serve > 0 {
		fw.frame(tagServe, strconv.Itoa(req.Serve))
	}
	fw.frame(tagEnd, "")
	fw.flush()
	return fw.err
}

// smallRequest bounds a request written without a goroutine: well under a pipe's buffer.
const smallRequest = 16 << 10

// size is about the request's size on the wire, at least its payloads'.
func (req *Request) size() int {
	n := len(req.Script) + len(req.Sandbox) + len(req.Dir)
	for _, kv := range req.Env {
		n += len(kv) + 2
	}
	for k, v := range req.Vars {
		n += len(k) + len(v) + 4
	}
	return n
}

// largePayload is the size from which a payload is written on its own rather than buffered.
const largePayload = 32 << 10

// frameWriter writes frames, keeping the first error.
type frameWriter struct {
	w   io.Writer
	buf []byte
	err error
}

func (f *frameWriter) frame(tag byte, payload string) {
	f.header(tag, len(payload))
	f.payload(payload)
}

func (f *frameWriter) header(tag byte, n int) {
	f.buf = append(f.buf, tag)
	f.buf = binary.AppendUvarint(f.buf, uint64(n))
}

func (f *frameWriter) payload(s string) {
	if len(s) < largePayload {
		f.buf = append(f.buf, s...)
		return
	}
	f.flush()
	if f.err == nil {
		_, f.err = io.WriteString(f.w, s)
	}
}

func (f *frameWriter) flush() {
	if len(f.buf) > 0 && f.err == nil {
		_, f.err = f.w.Write(f.buf)
	}
	f.buf = f.buf[:0]
}

// readRequest decodes a request written by writeRequest and checks that nothing follows it.
func readRequest(r io.Reader) (*Request, error) {
	br := bufio.NewReaderSize(r, wireBuffer)
	magic := make([]byte, len(wireMagic))
	if _, err := io.ReadFull(br, magic); err != nil {
		return nil, fmt.Errorf("read magic: %w", err)
	}
	if string(magic) != wireMagic {
		return nil, fmt.Errorf("bad magic %q: not an awf process request", magic)
	}
	req := &Request{Vars: map[string]string{}}
	sawScript := false
	for {
		tag, n, err := readFrameHeader(br)
		if err != nil {
			return nil, err
		}
		switch tag {
		case tagEnd:
			if n != 0 {
				return nil, fmt.Errorf("end frame with %d bytes of payload", n)
			}
			if !sawScript {
				return nil, errors.New("request without a script")
			}
			switch _, err := br.ReadByte(); err {
			case io.EOF:
				return req, nil
			case nil:
				return nil, errors.New("data after the end of the request")
			default:
				return nil, fmt.Errorf("read after the end of the request: %w", err)
			}
		case tagScript:
			if sawScript {
				return nil, errors.New("two scripts in one request")
			}
			sawScript = true
			if req.Script, err = readPayload(br, n); err != nil {
				return nil, fmt.Errorf("read script: %w", err)
			}
		case tagEnv:
			kv, err := readPayload(br, n)
			if err != nil {
				return nil, fmt.Errorf("read environment entry: %w", err)
			}
			req.Env = append(req.Env, kv)
		case tagVar:
			if err := readVar(br, n, req.Vars); err != nil {
				return nil, err
			}
		case tagSandbox: // [sandbox]
			if req.Sandbox != nil {
				return nil, errors.New("two sandbox specs in one request")
			}
			spec, err := readPayload(br, n)
			if err != nil {
				return nil, fmt.Errorf("read sandbox spec: %w", err)
			}
			req.Sandbox = []byte(spec)
		case tagDir:
			if req.Dir != "" {
				return nil, errors.New("two working directories in one request")
			}
			if req.Dir, err = readPayload(br, n); err != nil {
				return nil, fmt.Errorf("read working directory: %w", err)
			}
			if !filepath.IsAbs(req.Dir) {
				return nil, fmt.Errorf("working directory %q is not absolute", req.Dir)
			}
		case tagServe:
			if req.Serve != 0 {
				return nil, errors.New("two control sockets in one request")
			}
			fd, err := readPayload(br, n)
			if err != nil {
				return nil, fmt.Errorf("read control socket: %w", err)
			}
			if req.Serve, err = strconv.Atoi(fd); err != nil || req.Serve <= statusFD {
				return nil, fmt.Errorf("control socket %q is not a descriptor after the status pipe", fd)
			}
		default:
			return nil, fmt.Errorf("unknown frame tag %q", tag)
		}
	}
}

func readFrameHeader(br *bufio.Reader) (byte, int, error) {
	tag, err := br.ReadByte()
	if err != nil {
		return 0, 0, fmt.Errorf("read frame tag: %w", noEOF(err))
	}
	n, err := binary.ReadUvarint(br)
	if err != nil {
		return 0, 0, fmt.Errorf("read frame length: %w", noEOF(err))
	}
	if n > maxFrame {
		return 0, 0, fmt.Errorf("frame %q of %d bytes is over the limit of %d", tag, n, maxFrame)
	}
	return tag, int(n), nil
}

func readVar(br *bufio.Reader, n int, vars map[string]string) error {
	cr := countingReader{r: br}
	nameLen, err := binary.ReadUvarint(&cr)
	if err != nil {
		return fmt.Errorf("read variable name length: %w", noEOF(err))
	}
	used := cr.n
	if used > n || nameLen > uint64(n-used) {
		return fmt.Errorf("variable frame of %d bytes cannot hold a name of %d", n, nameLen)
	}
	name, err := readPayload(br, int(nameLen))
	if err != nil {
		return fmt.Errorf("read variable name: %w", err)
	}
	value, err := readPayload(br, n-used-int(nameLen))
	if err != nil {
		return fmt.Errorf("read variable %s: %w", name, err)
	}
	vars[name] = value
	return nil
}

// countingReader counts the bytes a uvarint took.
type countingReader struct {
	r *bufio.Reader
	n int
}

func (c *countingReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

// readPayload reads exactly n bytes into a string, copying each byte once: from bufio's buffer
// straight into the string's own memory, never through an intermediate slice.
func readPayload(br *bufio.Reader, n int) (string, error) {
	if n == 0 {
		return "", nil
	}
	var b strings.Builder
	b.Grow(n) // a fresh Builder allocates exactly n
	for b.Len() < n {
		chunk, err := br.Peek(min(n-b.Len(), br.Size()))
		b.Write(chunk)
		br.Discard(len(chunk))
		if err != nil {
			return "", noEOF(err)
		}
	}
	return b.String(), nil
}

// noEOF turns a clean EOF inside a frame into io.ErrUnexpectedEOF: the stream was cut.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// appendStatus appends one status record.
func appendStatus(dst []byte, tag byte, payload []byte) []byte {
	dst = append(dst, tag)
	dst = binary.AppendUvarint(dst, uint64(len(payload)))
	return append(dst, payload...)
}

// failureRecord encodes err as an 'F' record: its fault kind and its message, cut to
// maxStatusMsg bytes.
func failureRecord(err error) []byte {
	msg := err.Error()
	if len(msg) > maxStatusMsg {
		msg = msg[:maxStatusMsg]
	}
	payload := append([]byte{byte(fault.KindOf(err))}, msg...)
	return appendStatus(nil, statusFailed, payload)
}

// helperStatus is what the parent learnt from the status pipe.
type helperStatus struct {
	ready bool
	err   error // from an 'F' record, with its fault kind
	// limit is the resource of an 'L' record.
	limit string
	// crash is the head of the Go runtime's crash report, if the helper crashed.
	crash string
}

// parseStatus decodes the records the helper wrote to fd 4. What does not parse as a record
// from there on is the runtime's crash report.
func parseStatus(data []byte) (helperStatus, error) {
	var st helperStatus
	for len(data) > 0 {
		tag := data[0]
		n, k := binary.Uvarint(data[1:])
		if tag != statusReady && tag != statusFailed && tag != statusLimit || k <= 0 || n > uint64(len(data)-1-k) ||
			tag == statusReady && n != 0 {
			st.crash = string(data)
			return st, nil
		}
		payload := data[1+k : 1+k+int(n)]
		data = data[1+k+int(n):]
		switch tag {
		case statusReady:
			st.ready = true
		case statusFailed:
			if len(payload) == 0 {
				return st, errors.New("failure record without a kind")
			}
			st.err = fault.New(fault.Kind(payload[0]), "%s", payload[1:])
		case statusLimit:
			resource, _, _ := strings.Cut(string(payload), "\x00")
			st.limit = resource
		}
	}
	return st, nil
}
