//go:build unix

package process

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/domain/fault"
)

// init lets this test binary act as the file entry when a test re-runs it with FileHelperArg,
// as a fresh process, before the testing package has opened anything (see TestMain for the
// helper itself).
func init() {
	if IsFileHelper(os.Args) {
		os.Exit(FileHelperMain(os.Args))
	}
}

// holdLowFDs makes sure fds 3 and 4 are taken in this process, so that FileHelperMain called
// in a test falls back to a child instead of replacing the test binary with the helper.
func holdLowFDs(t *testing.T) {
	t.Helper()
	for !fdInUse(requestFD) || !fdInUse(statusFD) {
		f, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
	}
}

// fileEntry writes a request file (and a stdin file when stdin is not nil) and runs the file
// entry in this process; the helper it starts is this test binary (see TestMain).
func fileEntry(t *testing.T, req *Request, stdin *string) (code int, status HelperStatus, dir string) {
	t.Helper()
	dir = t.TempDir()
	var buf bytes.Buffer
	if err := EncodeRequest(&buf, req); err != nil {
		t.Fatalf("EncodeRequest: %v", err)
	}
	reqPath, statusPath := filepath.Join(dir, "request"), filepath.Join(dir, "status")
	write(t, reqPath, buf.String())
	write(t, statusPath, "forged by a script") // replaced, not appended to
	args := []string{"awf", FileHelperArg, reqPath, statusPath}
	if stdin != nil {
		write(t, filepath.Join(dir, "stdin"), *stdin)
		args = append(args, filepath.Join(dir, "stdin"))
	}
	holdLowFDs(t)
	code = FileHelperMain(args)
	data, err := os.ReadFile(statusPath)
	if err != nil {
		t.Fatal(err)
	}
	if status, err = DecodeStatus(data); err != nil {
		t.Fatalf("DecodeStatus(%q): %v", data, err)
	}
	return code, status, dir
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestFileHelperRunsScript(t *testing.T) {
	big := strings.Repeat("a'b\"c$(x)\n\\", 100_000) // 1.1 MB, shell syntax everywhere
	out := filepath.Join(t.TempDir(), "out")
	stdin := "from stdin\n"
	req := &Request{
		Script: `printf '%s' "$BIG" > "$OUT"; cat >> "$OUT"; printf '%s' "$E" >> "$OUT"; exit 7`,
		Env:    []string{"PATH=" + DefaultPath, "E=exported"},
		Vars:   map[string]string{"BIG": big, "OUT": out},
	}
	code, status, _ := fileEntry(t, req, &stdin)
	if code != 7 {
		t.Errorf("exit status = %d, want 7", code)
	}
	if !status.Ready || status.Err != nil {
		t.Errorf("status = %+v, want ready without error", status)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := big + stdin + "exported"; string(got) != want {
		t.Errorf("script wrote %d bytes, want %d (the variable, stdin and env verbatim)", len(got), len(want))
	}
}

func TestFileHelperStdinDefaultsToEmpty(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, _, _ := fileEntry(t, &Request{Script: `cat > "$OUT"`, Env: []string{"PATH=" + DefaultPath}, Vars: map[string]string{"OUT": out}}, nil)
	got, err := os.ReadFile(out)
	if code != 0 || err != nil || len(got) != 0 {
		t.Errorf("cat without STDIN: exit %d, output %q (%v), want 0 and empty", code, got, err)
	}
}

func TestFileHelperReportsHelperFailure(t *testing.T) {
	dir := t.TempDir()
	reqPath, statusPath := filepath.Join(dir, "request"), filepath.Join(dir, "status")
	write(t, reqPath, "not a request")
	holdLowFDs(t)
	code := FileHelperMain([]string{"awf", FileHelperArg, reqPath, statusPath})
	data, err := os.ReadFile(statusPath)
	if err != nil {
		t.Fatal(err)
	}
	status, err := DecodeStatus(data)
	if err != nil {
		t.Fatalf("DecodeStatus: %v", err)
	}
	if code != helperFailedExit || status.Ready || status.Err == nil {
		t.Fatalf("bad request: exit %d, status %+v, want %d and a failure", code, status, helperFailedExit)
	}
	if !strings.Contains(status.Err.Error(), "bad magic") || fault.KindOf(status.Err) != fault.System {
		t.Errorf("failure = %v (%v), want a system error about the magic", status.Err, fault.KindOf(status.Err))
	}
}

func TestFileHelperUsage(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
	}{
		{"no files", []string{"awf", FileHelperArg}},
		{"too many", []string{"awf", FileHelperArg, "a", "b", "c", "d"}},
		{"missing request", []string{"awf", FileHelperArg, filepath.Join(dir, "none"), filepath.Join(dir, "status")}},
	}
	holdLowFDs(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if code := FileHelperMain(tc.args); code != helperFailedExit {
				t.Errorf("FileHelperMain(%q) = %d, want %d", tc.args, code, helperFailedExit)
			}
		})
	}
}

// TestFileHelperExecsInPlace runs the entry as a fresh process with FileHelperEnv, as the
// container backend starts it: fds 3 and 4 are free there, so the process becomes the helper
// itself ($$ is the entry's pid) and the helper writes the status file directly.
func TestFileHelperExecsInPlace(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := EncodeRequest(&buf, &Request{Script: `printf '%s ' $$; cat; exit 4`, Env: []string{"PATH=" + DefaultPath}}); err != nil {
		t.Fatal(err)
	}
	reqPath, statusPath, stdinPath := filepath.Join(dir, "request"), filepath.Join(dir, "status"), filepath.Join(dir, "stdin")
	write(t, reqPath, buf.String())
	write(t, stdinPath, "input")
	cmd := exec.Command(os.Args[0], FileHelperArg, reqPath, statusPath, stdinPath)
	cmd.Env = []string{FileHelperEnv}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 4 {
		t.Fatalf("entry: exit %d (%v), output %q; want 4", code, err, out.String())
	}
	if want := fmt.Sprintf("%d input", cmd.Process.Pid); out.String() != want {
		t.Errorf("script printed %q, want %q (its pid is the entry's: exec in place)", out.String(), want)
	}
	data, err := os.ReadFile(statusPath)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := DecodeStatus(data); err != nil || !st.Ready || st.Err != nil {
		t.Errorf("status %q = %+v, %v; want ready", data, st, err)
	}
}

func TestIsFileHelper(t *testing.T) {
	tests := []struct {
		args []string
		want bool
	}{
		{[]string{"awf", FileHelperArg, "r", "s"}, true},
		{[]string{"awf", HelperArg}, false},
		{[]string{"awf"}, false},
		{[]string{"awf", "run", FileHelperArg}, false},
	}
	for _, tc := range tests {
		if got := IsFileHelper(tc.args); got != tc.want {
			t.Errorf("IsFileHelper(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}
