package process

// The file entry of the helper, for sandboxes that cannot hand a process extra descriptors (a
// container's runtime passes only stdin, stdout and stderr). It puts the request file on fd 3
// and the status file on fd 4 and becomes the ordinary helper (exec in place), which is then
// unchanged and the only Go process in the sandbox. When fds 3 and 4 are already taken (the Go
// runtime keeps files there unless the entry starts with FileHelperEnv), it runs the helper as
// a child instead, with the files passed by os/exec, and writes the status records to the file
// itself once the child exits.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
)

// FileHelperArg is argv[1] of the file entry: awf __awf-exec-files REQUEST STATUS [STDIN].
const FileHelperArg = "__awf-exec-files"

// FileHelperEnv is the environment to start the file entry with. Go 1.25 and later open the
// cgroup's CPU limit files when a process starts (container-aware GOMAXPROCS), which takes fds 3
// and 4 on cgroup v1; with this setting they stay free and the entry can become the helper in
// place instead of running it as a child.
const FileHelperEnv = "GODEBUG=containermaxprocs=0"

// IsFileHelper reports whether args (os.Args) start the file entry. main checks it next to
// IsHelper, before any flag parsing:
//
//	if process.IsFileHelper(os.Args) {
//		os.Exit(process.FileHelperMain(os.Args))
//	}
func IsFileHelper(args []string) bool {
	return len(args) > 1 && args[1] == FileHelperArg
}

// FileHelperMain runs the file entry with args = os.Args: it runs the default helper on the
// request in args[2] (written by EncodeRequest), with the file args[4], when given, as the
// script's standard input, and the helper's status records go to args[3], replacing what the
// file held. Usually the process becomes the helper and FileHelperMain does not return; when
// it does, it returns the script's exit status (128+n when signal n killed the helper), or 125
// when the entry itself failed, with the reason on stderr and no status records.
func FileHelperMain(args []string) int {
	if len(args) != 4 && len(args) != 5 {
		fmt.Fprintf(os.Stderr, "awf: usage: %s REQUEST STATUS [STDIN]\n", FileHelperArg)
		return helperFailedExit
	}
	// Returns only when exec in place was not possible; a child then does the same work.
	_ = execFileHelper(args[2], args[3], args[4:])
	code, err := runFileHelper(args[2], args[3], args[4:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "awf: process helper: %v\n", err)
		return helperFailedExit
	}
	return code
}

func runFileHelper(requestPath, statusPath string, stdinPath []string) (int, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("find own executable: %w", err)
	}
	request, err := os.Open(requestPath)
	if err != nil {
		return 0, fmt.Errorf("open request: %w", err)
	}
	defer request.Close()
	cmd := exec.Command(self, HelperArg)
	cmd.Env = helperEnv()
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if len(stdinPath) == 1 {
		stdin, err := os.Open(stdinPath[0])
		if err != nil {
			return 0, fmt.Errorf("open standard input: %w", err)
		}
		defer stdin.Close()
		cmd.Stdin = stdin
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("status pipe: %w", err)
	}
	defer statusR.Close()
	passFiles(cmd, []*os.File{request, statusW}) // fds 3 and 4, as Runner.Run gives them
	err = cmd.Start()
	statusW.Close()
	if err != nil {
		return 0, fmt.Errorf("start helper: %w", err)
	}
	// Only the helper holds fd 4 (close-on-exec there), so this ends when it exits.
	status, readErr := io.ReadAll(io.LimitReader(statusR, 2*maxStatusMsg))
	waitErr := cmd.Wait()
	if readErr != nil {
		return 0, fmt.Errorf("read helper status: %w", readErr)
	}
	if err := os.WriteFile(statusPath, status, 0o600); err != nil {
		return 0, fmt.Errorf("write status: %w", err)
	}
	if _, ok := errors.AsType[*exec.ExitError](waitErr); !ok && waitErr != nil {
		return 0, fmt.Errorf("wait for helper: %w", waitErr)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return cmd.ProcessState.ExitCode(), nil
}

// EncodeRequest writes req in the wire format the helper reads (wire.go): the REQUEST file of
// the file entry. req.Dir is not encoded: the entry starts in its working directory.
func EncodeRequest(w io.Writer, req *Request) error {
	return writeRequest(w, req)
}

// HelperStatus is what the status records of a finished helper say.
type HelperStatus struct {
	// Ready is set when the helper was set up and started the script.
	Ready bool
	// Err is the failure the helper reported, with its fault kind, or nil.
	Err error
}

// DecodeStatus decodes the status records the file entry wrote to its STATUS file. An error
// means the records are corrupt; no records at all (a zero HelperStatus) means the helper never
// got as far as the script, or the entry was killed before it could write them. A resource
// limit that stopped the script, or a crash of the helper, is Err (as Runner.Run reports it,
// without the limit's figure).
func DecodeStatus(data []byte) (HelperStatus, error) {
	st, err := parseStatus(data)
	switch {
	case st.limit != "":
		st.err = limitError(st.limit, 0, 0)
	case crashLimit(st.crash) != "":
		st.err = limitError(crashLimit(st.crash), 0, 0)
	case st.crash != "":
		st.err = crashError(st.crash)
	}
	return HelperStatus{Ready: st.ready, Err: st.err}, err
}
