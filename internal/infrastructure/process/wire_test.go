package process

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/infrastructure/sandbox"
	"github.com/google/go-cmp/cmp"
)

func TestRequestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		req  Request
	}{
		{"empty script", Request{Vars: map[string]string{}}},
		{"script only", Request{Script: "echo hi", Vars: map[string]string{}}},
		{"env and vars", Request{
			Script: "printf '%s' \"$AWF_T1\"",
			Env:    []string{"PATH=/bin", "EMPTY=", "PATH=/usr/bin"},
			Vars:   map[string]string{"AWF_T1": tricky, "AWF_T2": "", "Z": "\x00binary\xff"},
		}},
		{"dir", Request{Script: "pwd", Dir: "/work/ws", Vars: map[string]string{}}},
		{"large", Request{Script: strings.Repeat("#", 200_000), Vars: map[string]string{"BIG": strings.Repeat("v", 300_000)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := writeRequest(&buf, &tc.req); err != nil {
				t.Fatalf("writeRequest: %v", err)
			}
			got, err := readRequest(&buf)
			if err != nil {
				t.Fatalf("readRequest(writeRequest(%s)): %v", tc.name, err)
			}
			if diff := cmp.Diff(&tc.req, got); diff != "" {
				t.Errorf("readRequest(writeRequest(%s)) mismatch (-want +got):\n%s", tc.name, diff)
			}
		})
	}
}

func TestRequestDeterministic(t *testing.T) {
	req := &Request{Script: "x", Vars: map[string]string{"A": "1", "B": "2", "C": "3", "D": "4"}}
	var first, again bytes.Buffer
	writeRequest(&first, req)
	for range 10 {
		again.Reset()
		writeRequest(&again, req)
		if !bytes.Equal(first.Bytes(), again.Bytes()) {
			t.Fatalf("writeRequest gave %q then %q", first.Bytes(), again.Bytes())
		}
	}
}

// frame encodes one frame by hand.
func frame(tag byte, payload string) string {
	return string(tag) + string(binary.AppendUvarint(nil, uint64(len(payload)))) + payload
}

func TestReadRequestMalformed(t *testing.T) {
	end := frame(tagEnd, "")
	script := frame(tagScript, "echo")
	tests := []struct {
		name  string
		input string
		want  string
	}{
		{"empty", "", "read magic: EOF"},
		{"bad magic", "AWFX\x02" + script + end, `bad magic "AWFX\x02": not an awf process request`},
		{"no end", wireMagic + script, "read frame tag: unexpected EOF"},
		{"no script", wireMagic + end, "request without a script"},
		{"two scripts", wireMagic + script + script + end, "two scripts in one request"},
		{"unknown tag", wireMagic + script + frame('Q', "policy") + end, `unknown frame tag 'Q'`},
		{"serve not a descriptor", wireMagic + script + frame('P', "policy") + end, `control socket "policy" is not a descriptor after the status pipe`},
		{"cut payload", wireMagic + "S\x0aecho", "read script: unexpected EOF"},
		{"cut length", wireMagic + "S\x80", "read frame length: unexpected EOF"},
		{"huge frame", wireMagic + "S" + string(binary.AppendUvarint(nil, maxFrame+1)), "frame 'S' of 1073741825 bytes is over the limit of 1073741824"},
		{"end with payload", wireMagic + script + frame(tagEnd, "x"), "end frame with 1 bytes of payload"},
		{"data after end", wireMagic + script + end + "junk", "data after the end of the request"},
		{"var name too long", wireMagic + script + frame(tagVar, "\x09AB"), "variable frame of 3 bytes cannot hold a name of 9"},
		{"var frame empty", wireMagic + script + "V\x00\x00" + end, "variable frame of 0 bytes cannot hold a name of 0"},
		{"var cut", wireMagic + script + "V\x05\x02AB", "read variable AB: unexpected EOF"},
		{"two dirs", wireMagic + script + frame(tagDir, "/a") + frame(tagDir, "/b") + end, "two working directories in one request"},
		{"relative dir", wireMagic + script + frame(tagDir, "a/b") + end, `working directory "a/b" is not absolute`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readRequest(strings.NewReader(tc.input))
			if err == nil || err.Error() != tc.want {
				t.Errorf("readRequest(%q) = %v, want %q", tc.input, err, tc.want)
			}
		})
	}
}

// errWriter fails every write.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

func TestWriteRequestError(t *testing.T) {
	err := writeRequest(errWriter{}, &Request{Script: strings.Repeat("x", 1<<20)})
	if !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("writeRequest to a closed pipe = %v, want io.ErrClosedPipe", err)
	}
}

func TestParseStatus(t *testing.T) {
	ready := appendStatus(nil, statusReady, nil)
	denied := failureRecord(fault.New(fault.Denied, "no landlock"))
	tests := []struct {
		name    string
		data    []byte
		ready   bool
		err     string
		kind    fault.Kind
		corrupt string
	}{
		{"nothing", nil, false, "", 0, ""},
		{"ready", ready, true, "", 0, ""},
		{"failed before ready", denied, false, "no landlock", fault.Denied, ""},
		{"failed after ready", append(ready, failureRecord(errors.New("boom"))...), true, "boom", fault.System, ""},
		{"long message cut", failureRecord(errors.New(strings.Repeat("m", 2*maxStatusMsg))), false, strings.Repeat("m", maxStatusMsg), fault.System, ""},
		{"failure without kind", []byte("F\x00"), false, "", 0, "failure record without a kind"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := parseStatus(tc.data)
			if tc.corrupt != "" || err != nil {
				if err == nil || err.Error() != tc.corrupt {
					t.Errorf("parseStatus(%q) error = %v, want %q", tc.data, err, tc.corrupt)
				}
				return
			}
			if st.ready != tc.ready {
				t.Errorf("parseStatus(%q).ready = %v, want %v", tc.data, st.ready, tc.ready)
			}
			gotErr := ""
			if st.err != nil {
				gotErr = st.err.Error()
			}
			if gotErr != tc.err || (st.err != nil && fault.KindOf(st.err) != tc.kind) {
				t.Errorf("parseStatus(%q).err = %v (kind %v), want %q (kind %v)", tc.data, st.err, fault.KindOf(st.err), tc.err, tc.kind)
			}
		})
	}
}

// FuzzReadRequest: no input makes the reader panic, and whatever it accepts survives a round
// trip unchanged.
func FuzzReadRequest(f *testing.F) {
	var seed bytes.Buffer
	writeRequest(&seed, &Request{Script: "echo", Env: []string{"A=1"}, Vars: map[string]string{"V": "x"}})
	f.Add(seed.Bytes())
	f.Add([]byte(wireMagic + "S\x00.\x00"))
	f.Add([]byte(wireMagic + "V\x03\x01AB.\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := readRequest(bytes.NewReader(data))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := writeRequest(&buf, req); err != nil {
			t.Fatalf("writeRequest: %v", err)
		}
		again, err := readRequest(&buf)
		if err != nil {
			t.Fatalf("readRequest of a re-encoded request: %v", err)
		}
		if diff := cmp.Diff(req, again); diff != "" {
			t.Errorf("round trip changed the request (-first +second):\n%s", diff)
		}
	})
}

// TestParseStatusCrash: what follows the records and does not parse as one is the helper
// runtime's crash report (its fd 2 is the status pipe), and the limit it shows is named.
func TestParseStatusCrash(t *testing.T) {
	ready := appendStatus(nil, statusReady, nil)
	tests := []struct {
		name         string
		data         []byte
		ready        bool
		limit, crash string
	}{
		{"unknown record", []byte("X\x00"), false, "", "X\x00"},
		{"cut record", []byte("F\x05ab"), false, "", "F\x05ab"},
		{"out of memory", append(ready, "fatal error: runtime: out of memory\n\ngoroutine 1 [running]:\n"...), true,
			"", "fatal error: runtime: out of memory\n\ngoroutine 1 [running]:\n"},
		{"no thread", append(ready, "runtime: failed to create new OS thread (have 40 already; errno=11)\n"...), true,
			"", "runtime: failed to create new OS thread (have 40 already; errno=11)\n"},
		{"panic", append(ready, "panic: boom\n"...), true, "", "panic: boom\n"},
		{"limit record", append(ready, limitRecord(resourcePIDs, "fork/exec /bin/sleep: resource temporarily unavailable")...), true,
			resourcePIDs, ""},
		{"ready with a payload", []byte("R\x01x"), false, "", "R\x01x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := parseStatus(tc.data)
			if err != nil {
				t.Fatalf("parseStatus(%q) = %v", tc.data, err)
			}
			if st.ready != tc.ready || st.limit != tc.limit || st.crash != tc.crash {
				t.Errorf("parseStatus(%q) = ready %v, limit %q, crash %q; want %v, %q, %q", tc.data, st.ready, st.limit, st.crash, tc.ready, tc.limit, tc.crash)
			}
		})
	}
}

func TestCrashLimit(t *testing.T) {
	for report, want := range map[string]string{
		"fatal error: runtime: out of memory\n":                                     resourceMemory,
		"runtime: failed to create new OS thread (have 40 already; errno=11)\n":     resourcePIDs,
		"runtime/cgo: pthread_create failed: Resource temporarily unavailable\n":    resourcePIDs,
		"panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1": "",
	} {
		if got := crashLimit(report); got != want {
			t.Errorf("crashLimit(%q) = %q, want %q", report, got, want)
		}
	}
}

func TestLimitMessages(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{limitError(resourceMemory, 1<<30, 0), "killed: memory limit 1 GiB reached"},
		{limitError(resourceMemory, 3<<29, 0), "killed: memory limit 1.5 GiB reached"},
		{limitError(resourceMemory, 0, 0), "killed: memory limit reached"},
		{limitError(resourcePIDs, 0, 256), "killed: process limit 256 reached"},
		{limitError(resourcePIDs, 0, 0), "killed: process limit reached"},
		{crashError("\npanic: boom\n\ngoroutine 1"), "process helper crashed: panic: boom"},
	}
	for _, tc := range tests {
		if tc.err.Error() != tc.want {
			t.Errorf("error = %q, want %q", tc.err, tc.want)
		}
	}
	for n, want := range map[int64]string{100: "100 bytes", 64 << 10: "64 KiB", 1 << 20: "1 MiB", 5 << 40: "5 TiB"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestReportedLimit(t *testing.T) {
	lim := sandbox.Limits{Memory: 1 << 30, PIDs: 256}
	tests := []struct {
		stderr string
		lim    sandbox.Limits
		want   string
	}{
		{"Traceback (most recent call last):\nMemoryError\n", lim, resourceMemory},
		{"tail: memory exhausted\n", lim, resourceMemory},
		{"bash: fork: retry: Resource temporarily unavailable\n", lim, resourcePIDs},
		{"MemoryError\n", sandbox.Limits{PIDs: 256}, ""}, // no memory limit: not ours to name
		{"No such file or directory\n", lim, ""},
	}
	for _, tc := range tests {
		if got := reportedLimit(tc.stderr, tc.lim); got != tc.want {
			t.Errorf("reportedLimit(%q, %+v) = %q, want %q", tc.stderr, tc.lim, got, tc.want)
		}
	}
	if got := reachedError(resourceMemory, lim, 1).Error(); got != "memory limit 1 GiB reached: exit status 1" {
		t.Errorf("reachedError = %q", got)
	}
}
