package process

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// tricky is a value that would break a script if it were spliced into the source.
const tricky = "a b;  $(touch pwned) `id` ${HOME} \\ \"q\" 'q' *\n\tend"

func TestRun(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		req  ports.ProcessRequest
		want ports.ProcessResult
	}{
		{"echo", ports.ProcessRequest{Script: "echo hello"}, ports.ProcessResult{Stdout: "hello\n"}},
		{"printf", ports.ProcessRequest{Script: `printf '%s-%d\n' a 3`}, ports.ProcessResult{Stdout: "a-3\n"}},
		{"no output", ports.ProcessRequest{Script: "true"}, ports.ProcessResult{}},
		{"stderr", ports.ProcessRequest{Script: "echo oops >&2; echo out"},
			ports.ProcessResult{Stdout: "out\n", Stderr: "oops\n"}},
		{"exit code", ports.ProcessRequest{Script: "echo before; exit 7; echo after"},
			ports.ProcessResult{Stdout: "before\n", ExitCode: 7}},
		{"false", ports.ProcessRequest{Script: "false"}, ports.ProcessResult{ExitCode: 1}},
		{"external exit code", ports.ProcessRequest{Script: "true; sh -c 'exit 4'"}, ports.ProcessResult{ExitCode: 4}},
		{"command not found", ports.ProcessRequest{Script: "awf-no-such-command-xyz"},
			ports.ProcessResult{Stderr: "\"awf-no-such-command-xyz\": executable file not found in $PATH\n", ExitCode: 127}},
		{"stdin to builtin and external", ports.ProcessRequest{Script: `read first; echo "got $first"; cat`, Stdin: "one\ntwo\nthree\n"},
			ports.ProcessResult{Stdout: "got one\ntwo\nthree\n"}},
		{"no stdin", ports.ProcessRequest{Script: "cat; echo end"}, ports.ProcessResult{Stdout: "end\n"}},
		{"variable is literal", ports.ProcessRequest{Script: `printf '%s' "$AWF_T1"`, Vars: map[string]string{"AWF_T1": tricky}},
			ports.ProcessResult{Stdout: tricky}},
		{"variable not exported", ports.ProcessRequest{Script: `sh -c 'echo "${AWF_T1-unset}"'`, Vars: map[string]string{"AWF_T1": "v"}},
			ports.ProcessResult{Stdout: "unset\n"}},
		{"variable exported by the script", ports.ProcessRequest{Script: `export AWF_T1; sh -c 'echo "$AWF_T1"'`, Vars: map[string]string{"AWF_T1": "v"}},
			ports.ProcessResult{Stdout: "v\n"}},
		{"variable shadows env", ports.ProcessRequest{Script: `echo "$X"; sh -c 'echo "${X-unset}"'`,
			Env: map[string]string{"X": "env"}, Vars: map[string]string{"X": "var"}},
			ports.ProcessResult{Stdout: "var\nunset\n"}},
		{"env reaches commands", ports.ProcessRequest{Script: `sh -c 'echo "$FOO"'`, Env: map[string]string{"FOO": "bar"}},
			ports.ProcessResult{Stdout: "bar\n"}},
		{"env on top of base env", ports.ProcessRequest{Script: "/usr/bin/env",
			BaseEnv: []string{"A=1", "B=2", "junk", "A=0"}, Env: map[string]string{"B": "3", "C": "4"}},
			ports.ProcessResult{Stdout: "A=0\nB=3\nC=4\n"}},
		{"dir for builtins", ports.ProcessRequest{Script: "pwd", Dir: dir}, ports.ProcessResult{Stdout: dir + "\n"}},
		{"dir for commands", ports.ProcessRequest{Script: "/bin/pwd", Dir: dir}, ports.ProcessResult{Stdout: dir + "\n"}},
		{"cd", ports.ProcessRequest{Script: "cd /; pwd; /bin/pwd", Dir: dir}, ports.ProcessResult{Stdout: "/\n/\n"}},
		{"pipes and substitution", ports.ProcessRequest{Script: `x=$(echo abc | tr a-z A-Z); echo "$x" | wc -c`},
			ports.ProcessResult{Stdout: "4\n"}},
		{"bash dialect", ports.ProcessRequest{Script: `a=(x y z); [[ ${#a[@]} == 3 ]] && echo "${a[1]}"`},
			ports.ProcessResult{Stdout: "y\n"}},
		{"background job waited for", ports.ProcessRequest{Script: "(sleep 0.01; echo bg) & wait; echo fg"},
			ports.ProcessResult{Stdout: "bg\nfg\n"}},
	}
	for name, r := range bothRunners() {
		for _, tc := range tests {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				got, err := r.Run(t.Context(), tc.req)
				if err != nil {
					t.Fatalf("Run(%q) error: %v", tc.req.Script, err)
				}
				if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(ports.ProcessResult{}, "Duration")); diff != "" {
					t.Errorf("Run(%q) mismatch (-want +got):\n%s", tc.req.Script, diff)
				}
				if got.Duration <= 0 {
					t.Errorf("Run(%q).Duration = %v, want > 0", tc.req.Script, got.Duration)
				}
			})
		}
	}
}

// bothRunners returns the helper runner and the in-process one, which must behave alike.
func bothRunners() map[string]ports.ProcessRunner {
	return map[string]ports.ProcessRunner{"helper": New(Config{}), "local": NewLocal(Config{})}
}

func TestRunParseError(t *testing.T) {
	for name, r := range bothRunners() {
		got, err := r.Run(t.Context(), ports.ProcessRequest{Script: "echo 'unterminated"})
		if err != nil {
			t.Fatalf("%s: Run error: %v", name, err)
		}
		if got.ExitCode != 2 || !strings.Contains(got.Stderr, "reached EOF without closing quote") || got.Stdout != "" {
			t.Errorf("%s: Run(parse error) = %+v, want exit 2 and the parse error on stderr", name, got)
		}
	}
}

func TestRunMinimalEnv(t *testing.T) {
	t.Setenv("AWF_TEST_SECRET", "s3cret")
	got, err := New(Config{}).Run(t.Context(), ports.ProcessRequest{Script: "env"})
	if err != nil {
		t.Fatalf("Run error: %v", err)
	}
	var names []string
	for line := range strings.Lines(got.Stdout) {
		name, _, _ := strings.Cut(line, "=")
		names = append(names, name)
	}
	slices.Sort(names)
	want := []string{"HOME", "LANG", "PATH", "TMPDIR"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("env of a script with the minimal environment (-want +got):\n%s\nfull output:\n%s", diff, got.Stdout)
	}
	if !strings.Contains(got.Stdout, "PATH="+DefaultPath+"\n") || !strings.Contains(got.Stdout, "LANG=C.UTF-8\n") {
		t.Errorf("env = %q, want PATH=%s and LANG=C.UTF-8", got.Stdout, DefaultPath)
	}
}

func TestRunConfigBaseEnv(t *testing.T) {
	r := New(Config{BaseEnv: []string{"PATH=" + DefaultPath, "FROM_CONFIG=yes"}})
	got, err := r.Run(t.Context(), ports.ProcessRequest{Script: `sh -c 'echo "$FROM_CONFIG ${HOME-nohome}"'`})
	if err != nil {
		t.Fatalf("Run error: %v", err)
	}
	if got.Stdout != "yes nohome\n" {
		t.Errorf("Run with Config.BaseEnv: stdout = %q, want %q", got.Stdout, "yes nohome\n")
	}
}

func TestRunRefused(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		req  ports.ProcessRequest
		kind fault.Kind
		msg  string
	}{
		{"missing dir", ports.ProcessRequest{Script: "true", Dir: "/no/such/dir"}, fault.Execution, "working directory: stat /no/such/dir: no such file or directory"},
		{"dir is a file", ports.ProcessRequest{Script: "true", Dir: file}, fault.Execution, "working directory " + file + ": not a directory"},
		{"bad variable name", ports.ProcessRequest{Script: "true", Vars: map[string]string{"a-b": "x"}}, fault.Invalid, `shell variable name "a-b" is not a valid identifier`},
		{"bad env name", ports.ProcessRequest{Script: "true", Env: map[string]string{"A=B": "x"}}, fault.Invalid, `environment variable name "A=B": must be non-empty, without '=' or NUL`},
	}
	r := New(Config{})
	r.onStart = func(int) { t.Error("a refused request started a process") }
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Run(t.Context(), tc.req)
			if err == nil || err.Error() != tc.msg || fault.KindOf(err) != tc.kind {
				t.Errorf("Run(%s) = %v (kind %v), want %q of kind %v", tc.name, err, fault.KindOf(err), tc.msg, tc.kind)
			}
		})
	}
}

func TestRunLargeValues(t *testing.T) {
	const size = 10 << 20
	big := strings.Repeat("0123456789abcdef", size/16)
	for name, r := range bothRunners() {
		t.Run(name, func(t *testing.T) { testLargeValues(t, r, big, size) })
	}
}

func testLargeValues(t *testing.T, r ports.ProcessRunner, big string, size int) {
	tests := []struct {
		name string
		req  ports.ProcessRequest
		want string
	}{
		{"variable through a pipe to wc", ports.ProcessRequest{Script: `printf '%s' "$AWF_T1" | wc -c`, Vars: map[string]string{"AWF_T1": big}}, strconv.Itoa(size) + "\n"},
		{"variable to stdout", ports.ProcessRequest{Script: `printf '%s' "$AWF_T1"`, Vars: map[string]string{"AWF_T1": big}}, big},
		{"stdin to wc", ports.ProcessRequest{Script: "wc -c", Stdin: big}, strconv.Itoa(size) + "\n"},
		{"stdin to stdout", ports.ProcessRequest{Script: "cat", Stdin: big}, big},
		// Over the 128 KiB argv limit; 1 MiB because parsing 10 MB of shell is slow under -race.
		{"script", ports.ProcessRequest{Script: "# " + big[:1<<20] + "\necho done"}, "done\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Run(t.Context(), tc.req)
			if err != nil {
				t.Fatalf("Run error: %v", err)
			}
			if got.Stdout != tc.want || got.ExitCode != 0 || got.Truncated {
				t.Errorf("Run(%s) = %d bytes of stdout (prefix %.40q), exit %d, truncated %v; want %d bytes (prefix %.40q), exit 0; stderr %q",
					tc.name, len(got.Stdout), got.Stdout, got.ExitCode, got.Truncated, len(tc.want), tc.want, got.Stderr)
			}
		})
	}
}

func TestRunUnreadStdin(t *testing.T) {
	got, err := New(Config{}).Run(t.Context(), ports.ProcessRequest{Script: "echo ignored", Stdin: strings.Repeat("x", 1<<20)})
	if err != nil || got.Stdout != "ignored\n" {
		t.Errorf("Run(script ignoring 1 MiB of stdin) = %q, %v; want %q, nil", got.Stdout, err, "ignored\n")
	}
}

// children starts processes the kill must reach: a background job, a nohup-ed one, one from a
// subshell, and a shell with a child and a grandchild of the helper; five sleeps in all. Each
// touches a file in $D before it execs sleep, and the script goes on only once all five have,
// so the kill always has them to kill.
const children = `sleeper() { sh -c 'touch "$D/$1"; exec sleep 100' sh "$1"; }
sleeper a &
nohup sh -c 'touch "$D/b"; exec sleep 100' >/dev/null 2>&1 &
(sleeper c &)
sh -c 'sh -c "touch \"\$D/d\"; exec sleep 100" & touch "$D/e"; exec sleep 100' &
ready() { for f in a b c d e; do [ -e "$D/$f" ] || return 1; done; }
until ready; do sleep 0.01; done
`

// childrenEnv is the environment children needs.
func childrenEnv(t *testing.T) map[string]string {
	return map[string]string{"D": t.TempDir()}
}

func TestRunParentDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := New(Config{}).Run(ctx, ports.ProcessRequest{Script: "sleep 100"})
	if err == nil || err.Error() != "timed out" || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run(parent deadline) error = %v, want \"timed out\" wrapping DeadlineExceeded", err)
	}
}

func TestRunCancelledBeforeStart(t *testing.T) {
	r := New(Config{})
	r.onStart = func(int) { t.Error("Run started a process for a cancelled context") }
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := r.Run(ctx, ports.ProcessRequest{Script: "echo never"})
	if err == nil || err.Error() != "interrupted" || fault.KindOf(err) != fault.Execution {
		t.Errorf("Run(cancelled ctx) error = %v, want \"interrupted\" of kind execution", err)
	}
}

func TestRunDefaultOutputLimit(t *testing.T) {
	r := New(Config{OutputLimit: 1000})
	got, err := r.Run(t.Context(), ports.ProcessRequest{Script: "yes"})
	if err != nil || len(got.Stdout) != 1000 || !got.Truncated {
		t.Errorf("Run(yes) with Config.OutputLimit 1000 = %d bytes, truncated %v, %v; want 1000, true", len(got.Stdout), got.Truncated, err)
	}
}

func TestRunStderrCap(t *testing.T) {
	r := New(Config{StderrLimit: 10})
	got, err := r.Run(t.Context(), ports.ProcessRequest{Script: "printf first >&2; head -c 1000 /dev/zero | tr '\\0' . >&2; printf 'last!' >&2; echo ok"})
	if err != nil {
		t.Fatalf("Run error: %v", err)
	}
	want := "first\n[awf: 1000 bytes of stderr left out]\nlast!"
	if got.Stderr != want || got.Stdout != "ok\n" || got.Truncated || got.ExitCode != 0 {
		t.Errorf("Run(stderr flood) = %+v, want stderr %q, stdout ok, not truncated, exit 0", got, want)
	}
}

// TestRunStderrCountsTowardOutputLimit: a flood on stderr alone is stopped at the output
// limit, as a flood on stdout is, by both runners.
func TestRunStderrCountsTowardOutputLimit(t *testing.T) {
	for name, r := range map[string]ports.ProcessRunner{"helper": New(Config{}), "local": NewLocal(Config{})} {
		t.Run(name, func(t *testing.T) {
			got, err := r.Run(t.Context(), ports.ProcessRequest{Script: "echo start; yes >&2", OutputLimit: 64 << 10})
			if err != nil {
				t.Fatalf("Run(yes >&2) error: %v", err)
			}
			if !got.Truncated || got.ExitCode != 128+int(syscall.SIGKILL) || got.Stdout != "start\n" {
				t.Errorf("Run(yes >&2) = exit %d, truncated %v, stdout %q; want 137, truncated, the stdout kept", got.ExitCode, got.Truncated, got.Stdout)
			}
		})
	}
}

func TestRunConcurrent(t *testing.T) {
	r := New(Config{})
	const n = 8
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			value := strings.Repeat(strconv.Itoa(i), 100_000+i)
			got, err := r.Run(t.Context(), ports.ProcessRequest{
				Script: `printf '%s' "$AWF_T1" | wc -c; echo "$ID" >&2; exit "$ID"`,
				Vars:   map[string]string{"AWF_T1": value, "ID": strconv.Itoa(i)},
			})
			want := ports.ProcessResult{Stdout: fmt.Sprintf("%d\n", len(value)), Stderr: fmt.Sprintf("%d\n", i), ExitCode: i}
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(ports.ProcessResult{}, "Duration")); err != nil || diff != "" {
				t.Errorf("concurrent Run %d: %v, mismatch (-want +got):\n%s", i, err, diff)
			}
		})
	}
	wg.Wait()
}

func TestRunHelperHooks(t *testing.T) {
	tests := []struct {
		helper string
		script string
		want   ports.ProcessResult
		kind   fault.Kind
		msg    string // "" means no error
	}{
		{"setup-denied", "echo never", ports.ProcessResult{ExitCode: helperFailedExit}, fault.Denied, "landlock: not supported by this kernel"},
		{"setup-plain-error", "echo never", ports.ProcessResult{ExitCode: helperFailedExit}, fault.System, "rlimit: operation not permitted"},
		{"setup-rewrite", `echo "$AWF_SETUP"`, ports.ProcessResult{Stdout: "from setup\n"}, 0, ""},
		{"exec-guard", "echo before; curl http://example.com; echo after", ports.ProcessResult{Stdout: "before\n", ExitCode: helperFailedExit}, fault.Denied, `command "curl" is not allowed`},
		{"exec-guard", "nope; echo $?", ports.ProcessResult{Stdout: "42\n"}, 0, ""},
		{"exec-guard", "echo allowed | cat", ports.ProcessResult{Stdout: "allowed\n"}, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.helper+" "+tc.script, func(t *testing.T) {
			got, err := helperRunner(tc.helper).Run(t.Context(), ports.ProcessRequest{Script: tc.script})
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(ports.ProcessResult{}, "Duration")); diff != "" {
				t.Errorf("Run(%q) with %s mismatch (-want +got):\n%s", tc.script, tc.helper, diff)
			}
			switch {
			case tc.msg == "" && err != nil:
				t.Errorf("Run(%q) with %s error: %v", tc.script, tc.helper, err)
			case tc.msg != "" && (err == nil || err.Error() != tc.msg || fault.KindOf(err) != tc.kind):
				t.Errorf("Run(%q) with %s = %v (kind %v), want %q of kind %v", tc.script, tc.helper, err, fault.KindOf(err), tc.msg, tc.kind)
			}
		})
	}
}

func TestRunHelperMissing(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		msg  string
	}{
		{"not a helper", Config{HelperPath: "/bin/true"}, "process helper /bin/true __awf-exec did not run the script (does main call process.HelperMain first?): exit status 0"},
		{"no such file", Config{HelperPath: "/no/such/awf"}, "start process helper: fork/exec /no/such/awf: no such file or directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg).Run(t.Context(), ports.ProcessRequest{Script: "true"})
			if err == nil || err.Error() != tc.msg || fault.KindOf(err) != fault.System {
				t.Errorf("Run with helper %s = %v (kind %v), want %q of kind system", tc.cfg.HelperPath, err, fault.KindOf(err), tc.msg)
			}
		})
	}
}
