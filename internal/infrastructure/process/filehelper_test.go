package process

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/domain/fault"
)

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
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if code := FileHelperMain(tc.args); code != helperFailedExit {
				t.Errorf("FileHelperMain(%q) = %d, want %d", tc.args, code, helperFailedExit)
			}
		})
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
