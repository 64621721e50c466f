package process

// Process groups on Windows are job objects: every program awf starts is assigned to a job of
// its own, which kills everything in it when stopped (TerminateJobObject) and when awf dies
// (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE: the last handle closes with awf's process). A process
// it starts in the moment between its start and its assignment to the job is not in the job:
// Go's exec.Cmd cannot start a process suspended.

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// procGroup is a started program with everything it starts: a job object.
type procGroup struct{ job windows.Handle }

// newProcGroup puts p in a new job object that kills its processes when closed.
func newProcGroup(p *os.Process) (procGroup, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return procGroup{}, fmt.Errorf("create job object: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return procGroup{}, fmt.Errorf("set job object limits: %w", err)
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(p.Pid))
	if err == nil {
		err = windows.AssignProcessToJobObject(job, h)
		windows.CloseHandle(h)
	}
	if err != nil {
		windows.CloseHandle(job)
		return procGroup{}, fmt.Errorf("assign process %d to a job object: %w", p.Pid, err)
	}
	return procGroup{job: job}, nil
}

// kill terminates every process of the job.
func (g procGroup) kill() {
	if g.job != 0 {
		windows.TerminateJobObject(g.job, 128+9)
	}
}

// release closes the job's handle, which kills what is left in it.
func (g procGroup) release() {
	if g.job != 0 {
		windows.CloseHandle(g.job)
	}
}

// detach starts a child in a new process group of the console, so that a Ctrl-C meant for awf
// is not delivered to it as well; its job object (newProcGroup) is what kills it.
func detach(attr *syscall.SysProcAttr) {
	attr.CreationFlags |= syscall.CREATE_NEW_PROCESS_GROUP
}

// waitExited blocks until the process pid has exited. A job object, unlike a Unix process
// group, does not depend on the pid staying pinned; this only keeps the order of Runner.wait.
func waitExited(pid int) {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return // already gone
	}
	defer windows.CloseHandle(h)
	windows.WaitForSingleObject(h, windows.INFINITE)
}

// hasExited reports whether the process pid has exited, without waiting.
func hasExited(pid int) bool {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return true
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, 0)
	return err != nil || ev == windows.WAIT_OBJECT_0
}

// withoutCgroup is a copy of attr: Windows has no cgroups.
func withoutCgroup(attr *syscall.SysProcAttr) syscall.SysProcAttr { return *attr }
