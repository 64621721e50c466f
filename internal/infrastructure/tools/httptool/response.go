package httptool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// describe turns a client error into words the model can act on.
func describe(err error, timeout time.Duration) string {
	var blocked *BlockedError
	var redirect *redirectError
	switch {
	case errors.As(err, &redirect):
		return redirect.msg
	case errors.As(err, &blocked):
		return "connection refused by the address guard: " + blocked.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("timed out after %s", timeout)
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// readCapped reads at most max bytes of r and reports whether there was more.
func readCapped(r io.Reader, max int64) ([]byte, bool, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(b)) > max {
		return b[:runeCut(b, int(max))], true, nil
	}
	return b, false, nil
}

// runeCut returns n moved back so that b[:n] does not end inside a UTF-8 sequence.
func runeCut(b []byte, n int) int {
	if n >= len(b) {
		return len(b)
	}
	for k := n; k > 0 && n-k < utf8.UTFMax; k-- {
		if utf8.RuneStart(b[k]) {
			return k
		}
	}
	return n
}

// shownHeaders are the response headers the output carries.
var shownHeaders = []string{"Content-Type", "Location", "Retry-After"}

// render formats the response for the model.
func render(resp *http.Response, body []byte, truncated bool, max int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", resp.Proto, resp.Status)
	for _, h := range shownHeaders {
		if v := resp.Header.Get(h); v != "" {
			fmt.Fprintf(&b, "%s: %s\n", strings.ToLower(h), v)
		}
		if h == "Content-Type" && resp.ContentLength >= 0 {
			fmt.Fprintf(&b, "content-length: %d\n", resp.ContentLength)
		}
	}
	b.WriteString("\n")
	switch {
	case len(body) == 0:
	case looksBinary(body, truncated):
		fmt.Fprintf(&b, "[awf: binary body (%s), %d bytes read, not shown]\n", cmpOr(resp.Header.Get("Content-Type"), "no content-type"), len(body))
		return b.String()
	default:
		b.Write(body)
	}
	if truncated {
		if len(body) > 0 && body[len(body)-1] != '\n' {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "[awf: body truncated at %d bytes]\n", max)
	}
	return b.String()
}

// looksBinary reports whether a body is not UTF-8 text: a NUL byte or invalid UTF-8 in its
// first 8 KiB. A sequence cut by the end of what is looked at does not count.
func looksBinary(body []byte, cut bool) bool {
	head := body[:min(len(body), 8<<10)]
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	if cut || len(head) < len(body) {
		head = trimPartialRune(head)
	}
	return !utf8.Valid(head)
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}
