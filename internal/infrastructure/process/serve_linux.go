//go:build linux

package process

// [sandbox] Persistent helpers. A helper started for each call pays the executable's start-up,
// its package initialisers, the clone of its namespaces and the sandbox's set-up (sandbox.Enter)
// every time: most of a sandboxed call's cost. With Config.Warm, a sandboxed call is instead
// served by a helper that stays up for the run: one per distinct sandbox (the compiled spec,
// the script's environment and the protected paths found in the working directory: the key),
// started and set up once, then sent one call after the other over a control socket.
//
// A helper serves one call at a time: a call with the same key that comes while it is busy
// gets a helper of its own (at most maxIdlePerKey wait, maxIdle in all; the oldest goes). Per
// call the parent sends, with SCM_RIGHTS on the control socket (SOCK_SEQPACKET), the read end
// of the request pipe, the write end of the status pipe, and the script's stdin, stdout and
// stderr: the same pipes, wire and status records as a helper started for the call, so output
// caps, timeouts and exit statuses are the same. The helper reads the request (script,
// variables, working directory), runs a fresh interpreter with the environment the sandbox's
// set-up gave, then, before it answers 'D' on the control socket:
//
//   - ends the call's program starts and kills every process left in its pid namespace
//     (kill(-1, SIGKILL) as its first process, until none is left, reaping the orphans);
//   - removes the System V IPC objects (shared memory, semaphores, message queues) of its IPC
//     namespace; POSIX message queues cannot be made at all (RLIMIT_MSGQUEUE 0);
//   - closes its descriptors of the call, and points its own stderr (the Go runtime's crash
//     output, the call's status pipe while a call runs) at /dev/null.
//
// The parent then empties the private temporary directory ($TMPDIR and $HOME of scripts).
// A helper is not used again (it exits, and the next call gets a new one) when its call was
// stopped (timeout, cancellation, output over the cap: the helper is killed, as a helper of
// one call is), when the script started a background job (the job's shell is a goroutine of
// the interpreter that may outlive it), when any of the cleaning fails, or when it died.
//
// The helper runs with the uid of the programs it starts; they must not reach it: it is not
// dumpable (no ptrace, no /proc/1/mem, /proc/1/environ or /proc/1/fd, which seccomp and
// Yama refuse anyway), and it catches every signal, so that as the init of its pid namespace
// no signal sent from inside reaches it (the kernel drops the others, SIGKILL included). A
// helper killed from outside fails the call it was serving; the next call starts a new
// helper, never runs unsandboxed. Specs whose helper has no pid and mount namespaces of its
// own, or has a cgroup (whose counters and memory charge would span calls), run in a helper
// of their own per call as before (sandbox.Launch.Serves).

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/infrastructure/sandbox"
)

const (
	// callFiles are the descriptors sent with each call: request, status, stdin, stdout, stderr.
	callFiles = 5
	// callMsg and doneMsg are the tags of the control socket's messages.
	callMsg = 'C'
	doneMsg = 'D'
	// doneLen is a 'D' message: tag, reusable (0 or 1), exit status (big-endian int32).
	doneLen = 6

	// maxIdlePerKey helpers of one key wait between calls, maxIdle in all.
	maxIdlePerKey = 2
	maxIdle       = 8
	// leftoverTimeout bounds how long a helper kills and reaps what a call left.
	leftoverTimeout = 5 * time.Second
)

// --- the helper's side ---

// serve runs a persistent helper once Setup is done: it reports ready, gives up its own
// descriptors of the parent (fds 0 to 4) and serves the calls that come on the control socket
// until the parent closes it.
func (c HelperConfig) serve(req *Request, request, status *os.File) int {
	if os.Getpid() != 1 {
		return c.fail(status, fault.New(fault.System, "process helper: a helper serving calls must be the first process of its pid namespace (it is pid %d)", os.Getpid()))
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return c.fail(status, fmt.Errorf("process helper: open %s: %w", os.DevNull, err))
	}
	if err := guardHelper(); err != nil {
		return c.fail(status, err)
	}
	if _, err := status.Write(appendStatus(nil, statusReady, nil)); err != nil {
		return helperFailedExit
	}
	for fd := range 3 {
		dupTo(int(null.Fd()), fd, fd == 2)
	}
	os.Stderr.Close() // the copy of the stderr the parent gave at the start
	os.Stderr = null
	request.Close()
	status.Close()
	reaper := startReaper()
	for {
		files, err := receiveCall(req.Serve)
		if err != nil {
			return 0 // the run is over (or the socket broke: the parent sees it)
		}
		code, reusable := c.serveCall(req, files, reaper)
		dupTo(int(null.Fd()), 2, true)
		closeAll(files)
		msg := []byte{doneMsg, 0, 0, 0, 0, 0}
		if reusable {
			msg[1] = 1
		}
		binary.BigEndian.PutUint32(msg[2:], uint32(int32(code)))
		if _, err := unix.Write(req.Serve, msg); err != nil || !reusable {
			return 0
		}
	}
}

// guardHelper keeps the programs of the calls, which run with the helper's uid, away from it:
// no ptrace or /proc/1 access (not dumpable), no signal from inside its pid namespace (caught
// and dropped), and no POSIX message queue, which would outlive a call in the IPC namespace.
func guardHelper() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("process helper: not dumpable: %w", err))
	}
	if err := unix.Setrlimit(unix.RLIMIT_MSGQUEUE, &unix.Rlimit{}); err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("process helper: no message queues: %w", err))
	}
	// Caught, not ignored: an ignored signal stays ignored in the programs started, a caught
	// one is reset to its default.
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs)
	go func() {
		for range sigs {
		}
	}()
	return nil
}

// receiveCall waits for the next call and returns its descriptors.
func receiveCall(ctl int) ([]*os.File, error) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(callFiles*4))
	for {
		n, oobn, flags, _, err := unix.Recvmsg(ctl, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, io.EOF
		}
		var fds []int
		msgs, _ := unix.ParseSocketControlMessage(oob[:oobn])
		for _, m := range msgs {
			got, _ := unix.ParseUnixRights(&m)
			fds = append(fds, got...)
		}
		if buf[0] != callMsg || len(fds) != callFiles || flags&unix.MSG_CTRUNC != 0 {
			for _, fd := range fds {
				unix.Close(fd)
			}
			return nil, errors.New("malformed call")
		}
		files := make([]*os.File, callFiles)
		for i, name := range []string{"awf-request", "awf-status", "stdin", "stdout", "stderr"} {
			files[i] = os.NewFile(uintptr(fds[i]), name)
		}
		return files, nil
	}
}

// serveCall runs one call and cleans up after it; reusable says the helper may serve another.
func (c HelperConfig) serveCall(setup *Request, files []*os.File, reaper *orphanReaper) (code int, reusable bool) {
	request, status := files[0], files[1]
	// A crash of the runtime during the call is the call's: on its status pipe.
	dupTo(int(status.Fd()), 2, true)
	call, err := readRequest(request)
	if err != nil {
		return c.fail(status, fmt.Errorf("process helper: read request: %w", err)), false
	}
	call.Env = setup.Env // the environment Setup gave: the same for every call of this helper
	if call.Dir == "" {
		call.Dir = setup.Dir
	}
	if _, err := status.Write(appendStatus(nil, statusReady, nil)); err != nil {
		return helperFailedExit, false
	}
	ctx, cancel := context.WithCancel(context.Background())
	code, jc := c.run(ctx, call, status, callIO{in: files[2], out: files[3], err: files[4]}, reaper)
	cancel() // stops the programs still registered with their job
	if jc != nil {
		jc.closeStarts()
		if jc.startedJobs() {
			return code, false
		}
	}
	if killLeftovers(reaper) != nil || removeIPC() != nil {
		return code, false
	}
	return code, true
}

// killLeftovers kills every other process of the helper's pid namespace and reaps the ones
// that became its children, until none is left.
func killLeftovers(reaper *orphanReaper) error {
	deadline := time.Now().Add(leftoverTimeout)
	for {
		switch err := unix.Kill(-1, unix.SIGKILL); {
		case err == unix.ESRCH:
			return nil
		case err != nil:
			return fmt.Errorf("kill what the call left: %w", err)
		case time.Now().After(deadline):
			return errors.New("processes of the call outlived it")
		}
		reaper.reap()
		time.Sleep(50 * time.Microsecond)
	}
}

// removeIPC removes every System V IPC object of the helper's IPC namespace (all the call's:
// the namespace is the helper's own), as /proc/sysvipc lists them.
func removeIPC() error {
	for _, kind := range []struct {
		file string
		rm   func(id int) error
	}{
		{"shm", func(id int) error { _, err := unix.SysvShmCtl(id, unix.IPC_RMID, nil); return err }},
		{"sem", func(id int) error { return sysvRm(unix.SYS_SEMCTL, id, true) }},
		{"msg", func(id int) error { return sysvRm(unix.SYS_MSGCTL, id, false) }},
	} {
		ids, err := sysvIDs("/proc/sysvipc/" + kind.file)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if err := kind.rm(id); err != nil && err != unix.EINVAL && err != unix.EIDRM {
				return fmt.Errorf("remove System V %s %d: %w", kind.file, id, err)
			}
		}
	}
	return nil
}

// sysvRm is semctl(id, 0, IPC_RMID) (sem) or msgctl(id, IPC_RMID, NULL).
func sysvRm(trap uintptr, id int, sem bool) error {
	var e unix.Errno
	if sem {
		_, _, e = unix.Syscall6(trap, uintptr(id), 0, unix.IPC_RMID, 0, 0, 0)
	} else {
		_, _, e = unix.Syscall(trap, uintptr(id), unix.IPC_RMID, 0)
	}
	if e != 0 {
		return e
	}
	return nil
}

// sysvIDs reads the ids (second column) of a /proc/sysvipc file.
func sysvIDs(file string) ([]int, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ids []int
	sc := bufio.NewScanner(f)
	for first := true; sc.Scan(); first = false {
		fields := strings.Fields(sc.Text())
		if first || len(fields) < 2 {
			continue
		}
		id, err := strconv.Atoi(fields[1])
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not an id", file, fields[1])
		}
		ids = append(ids, id)
	}
	return ids, sc.Err()
}

// --- the parent's side ---

// server is one persistent helper as the parent sees it.
type server struct {
	key    string
	cmd    *os.Process
	wait   func() (*os.ProcessState, error)
	pid    int
	grp    procGroup
	ctl    int // the parent's end of the control socket
	launch *sandboxLaunch
	timer  *time.Timer // retires it after WarmIdle waiting

	mu     sync.Mutex
	reaped bool
}

// servers are the persistent helpers waiting for a call. The zero value is ready.
type servers struct {
	mu     sync.Mutex
	idle   []*server // oldest first
	never  sync.Map  // keys whose helper cannot serve (sandbox.Launch.Serves is false)
	closed bool
	gone   sync.WaitGroup // retirements under way
}

// take returns a waiting helper of key, or nil.
func (ss *servers) take(key string) *server {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for i := len(ss.idle) - 1; i >= 0; i-- {
		if s := ss.idle[i]; s.key == key {
			ss.idle = append(ss.idle[:i], ss.idle[i+1:]...)
			s.timer.Stop()
			if hasExited(s.pid) { // killed while it waited
				ss.retire(s)
				continue
			}
			return s
		}
	}
	return nil
}

// put makes s wait for the next call of its key, or retires it when the pool is closed or
// full.
func (ss *servers) put(s *server) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.closed {
		ss.retire(s)
		return
	}
	same := 0
	for _, o := range ss.idle {
		if o.key == s.key {
			same++
		}
	}
	if same >= maxIdlePerKey {
		ss.retire(s)
		return
	}
	if len(ss.idle) >= maxIdle {
		ss.retire(ss.idle[0])
		ss.idle = ss.idle[1:]
	}
	ss.idle = append(ss.idle, s)
	if s.timer == nil {
		s.timer = time.AfterFunc(WarmIdle, func() { ss.expire(s) })
	} else {
		s.timer.Reset(WarmIdle)
	}
}

// expire retires s if it is still waiting.
func (ss *servers) expire(s *server) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for i, o := range ss.idle {
		if o == s {
			ss.idle = append(ss.idle[:i], ss.idle[i+1:]...)
			ss.retire(s)
			return
		}
	}
}

// retire stops s in the background; close waits for it.
func (ss *servers) retire(s *server) {
	ss.gone.Add(1)
	go func() {
		defer ss.gone.Done()
		s.stop()
	}()
}

// close retires the waiting helpers, and the busy ones when their call ends, and waits until
// they are gone.
func (ss *servers) close() {
	ss.mu.Lock()
	ss.closed = true
	for _, s := range ss.idle {
		s.timer.Stop()
		ss.retire(s)
	}
	ss.idle = nil
	ss.mu.Unlock()
	ss.gone.Wait()
}

// serveKey identifies what a persistent helper is set up for: the spec (its working
// directory, paths, network, limits), the environment, which the sandbox's set-up adjusts and
// an exec allowlist resolves against, and the protected paths present now, which its mounts
// hide: a new one needs a new helper.
func (r *Runner) serveKey(spec *sandbox.Spec, env []string) (string, error) {
	enc, err := spec.Encode()
	if err != nil {
		return "", fault.Wrap(fault.System, err)
	}
	h := sha256.New()
	h.Write(enc)
	for _, kv := range env {
		h.Write([]byte{0})
		h.Write([]byte(kv))
	}
	protected, truncated := r.protect.Matches(spec.Dir, spec.Protect)
	fmt.Fprintf(h, "\x01%v", truncated)
	for _, p := range protected {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	return string(h.Sum(nil)), nil
}

// runServed runs the call in a persistent helper of its sandbox. served is false when none
// can serve it (the spec's helper cannot, or one could not be started or reached): Run then
// starts a helper for the call, which reports any failure as it always did.
func (r *Runner) runServed(ctx context.Context, req ports.ProcessRequest, wreq *Request, spec *sandbox.Spec,
	start time.Time) (res ports.ProcessResult, err error, served bool) {
	key, err := r.serveKey(spec, wreq.Env)
	if err != nil {
		return res, nil, false
	}
	if _, never := r.servers.never.Load(key); never {
		return res, nil, false
	}
	s := r.servers.take(key)
	if s == nil {
		if s = r.newServer(key, spec, wreq); s == nil {
			return res, nil, false
		}
	}
	if ctx.Err() != nil {
		r.servers.put(s)
		return ports.ProcessResult{ExitCode: -1}, StopError(ctx, 0), true
	}
	runCtx, cancel := WithTimeout(ctx, req.Timeout)
	defer cancel()
	limit := req.OutputLimit
	if limit <= 0 {
		limit = r.cfg.OutputLimit
	}
	p, err := s.call(&Request{Script: wreq.Script, Vars: wreq.Vars, Dir: wreq.Dir}, req.Stdin, limit, r.cfg.StderrLimit)
	if err != nil { // it died while it waited: nothing of the call ran
		r.servers.retire(s)
		return res, nil, false
	}
	if r.onStart != nil {
		r.onStart(p.pid)
	}
	stop := context.AfterFunc(runCtx, p.kill)
	code, reusable, state, waitErr := s.done()
	killed := !stop()
	status := p.finish(r.cfg.DrainTimeout)
	res = p.result(state, start)
	if state == nil {
		res.ExitCode = code
	}
	if reusable && !killed && !p.budget.exceeded() && emptyDir(s.launch.Spec.Plan.TempDir) == nil {
		r.servers.put(s)
	} else {
		r.servers.retire(s)
	}
	res, err = r.outcome(res, runCtx, req, waitErr, status, s.launch)
	return res, err, true
}

// newServer starts a persistent helper for spec and waits until its sandbox is set up. nil
// when the spec's helper cannot serve calls or the start failed.
func (r *Runner) newServer(key string, spec *sandbox.Spec, wreq *Request) *server {
	setup := &Request{Env: wreq.Env, Dir: wreq.Dir}
	launch, err := r.launch(spec, setup)
	if err != nil {
		return nil
	}
	if !launch.Serves() {
		r.servers.never.Store(key, true)
		launch.Close()
		return nil
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		launch.Close()
		return nil
	}
	child := os.NewFile(uintptr(fds[1]), "awf-control")
	extra := append(launch.extraFiles()[:len(launch.extraFiles()):len(launch.extraFiles())], child)
	setup.Serve = statusFD + 1 + len(launch.extraFiles())
	p, err := r.spawn(launch.sysProcAttr(), extra)
	child.Close()
	if err != nil {
		unix.Close(fds[0])
		launch.Close()
		return nil
	}
	s := &server{key: key, cmd: p.cmd.Process, wait: func() (*os.ProcessState, error) { return p.cmd.Process.Wait() },
		pid: p.pid, grp: p.grp, ctl: fds[0], launch: launch}
	// The helper reads its set-up request to the end, and closes its status pipe once ready.
	go func() { writeRequest(p.reqW, setup); p.reqW.Close() }()
	p.inW.Close()
	data, _ := io.ReadAll(io.LimitReader(p.statusR, 2*maxStatusMsg))
	closeAll([]*os.File{p.outR, p.errR, p.statusR})
	if st, err := parseStatus(data); err != nil || !st.ready || st.err != nil || st.crash != "" {
		if st.err != nil {
			// The set-up refused this sandbox (a layer missing here): so would the next;
			// the helper of each call reports it.
			r.servers.never.Store(key, true)
		}
		s.stop()
		return nil
	}
	return s
}

// call sends the call to the helper with a fresh set of pipes, and starts feeding and
// draining them as for a helper of its own.
func (s *server) call(wreq *Request, stdin string, limit, stderrLimit int64) (*proc, error) {
	var (
		fds [10]int
		err error
	)
	n := 0
	for ; n < len(fds) && err == nil; n += 2 {
		err = unix.Pipe2(fds[n:n+2], unix.O_CLOEXEC)
	}
	if err != nil {
		for _, fd := range fds[:n-2] {
			unix.Close(fd)
		}
		return nil, err
	}
	// pipes: request, status, stdin, stdout, stderr; [0] reads, [1] writes
	reqR, reqW, statusR, statusW, inR, inW, outR, outW, errR, errW := fds[0], fds[1], fds[2], fds[3], fds[4], fds[5], fds[6], fds[7], fds[8], fds[9]
	for _, fd := range []int{reqW, statusR, inW, outR, errR} {
		unix.SetNonblock(fd, true) // the parent's ends go through the poller (read deadlines)
	}
	err = unix.Sendmsg(s.ctl, []byte{callMsg}, unix.UnixRights(reqR, statusW, inR, outW, errW), nil, 0)
	for _, fd := range []int{reqR, statusW, inR, outW, errW} {
		unix.Close(fd)
	}
	file := func(fd int, name string) *os.File { return os.NewFile(uintptr(fd), name) }
	p := &proc{pid: s.pid, killer: s.kill, reqW: file(reqW, "awf-request"), inW: file(inW, "stdin"),
		outR: file(outR, "stdout"), errR: file(errR, "stderr"), statusR: file(statusR, "awf-status"),
		statusDone: make(chan struct{})}
	if err != nil {
		closeAll([]*os.File{p.reqW, p.inW, p.outR, p.errR, p.statusR})
		return nil, err
	}
	p.begin(wreq, stdin, limit, stderrLimit)
	return p, nil
}

// done waits for the end of the call: the helper's 'D' with the script's exit status, or the
// helper's death (then its wait status, as for a helper of its own).
func (s *server) done() (code int, reusable bool, state *os.ProcessState, err error) {
	buf := make([]byte, doneLen+1)
	for {
		n, err := unix.Read(s.ctl, buf)
		if err == unix.EINTR {
			continue
		}
		if err == nil && n == doneLen && buf[0] == doneMsg {
			return int(int32(binary.BigEndian.Uint32(buf[2:]))), buf[1] == 1, nil, nil
		}
		break
	}
	state, err = s.reap()
	return -1, false, state, err
}

// kill kills the helper and everything in its pid namespace, unless it has been reaped.
func (s *server) kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.reaped {
		s.grp.kill()
	}
}

// reap waits for the helper to exit (killing what is left of its group while its pid pins
// it), reaps it and releases its group; its wait status, nil if already reaped.
func (s *server) reap() (*os.ProcessState, error) {
	waitExited(s.pid)
	s.mu.Lock()
	if s.reaped {
		s.mu.Unlock()
		return nil, nil
	}
	s.grp.kill()
	s.reaped = true
	s.mu.Unlock()
	state, err := s.wait()
	s.grp.release()
	return state, err
}

// stop kills the helper, reaps it, closes its control socket and removes its sandbox's
// temporary directory.
func (s *server) stop() {
	s.kill()
	s.reap()
	unix.Close(s.ctl)
	s.launch.Close()
}

// emptyDir removes everything inside dir, keeping dir.
func emptyDir(dir string) error {
	if dir == "" {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}
