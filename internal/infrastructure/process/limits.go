package process

// [sandbox] How a script stopped by a resource limit is reported: by the limit it reached, not
// by the Go stack trace of the helper that ran it.
//
// The helper is a Go program running the interpreter in the same limits as the script: when
// the script's variables outgrow the memory limit, or its background jobs leave no thread to be
// had under the process limit, the Go runtime dies with a fatal error and every goroutine's
// stack on fd 2. So the helper moves its own fd 2 onto the status pipe (separateRuntimeOutput)
// and gives the script a copy of the real stderr; the parent drains the status pipe while the
// helper runs (a crash report can be megabytes), keeps its head, and names the limit.

import (
	"errors"
	"strconv"
	"strings"
	"syscall"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/infrastructure/sandbox"
)

// Resources a sandbox limit bounds, as the helper names them in a limit record.
const (
	resourceMemory = sandbox.ResourceMemory
	resourcePIDs   = sandbox.ResourcePIDs
)

// maxCrashReport bounds what the parent keeps of the helper runtime's crash output.
const maxCrashReport = 4 << 10

// limitOf names the resource whose limit err (from starting a command) shows was reached:
// EAGAIN from fork is the process limit, ENOMEM the memory limit; "" for any other error.
func limitOf(err error) string {
	switch {
	case errors.Is(err, syscall.EAGAIN):
		return resourcePIDs
	case errors.Is(err, syscall.ENOMEM):
		return resourceMemory
	}
	return ""
}

// crashLimit names the resource whose limit a Go runtime crash report shows was reached, or
// "" when the crash is something else.
func crashLimit(report string) string {
	switch {
	case strings.Contains(report, "out of memory"), strings.Contains(report, "cannot allocate memory"):
		return resourceMemory
	case strings.Contains(report, "failed to create new OS thread"), strings.Contains(report, "pthread_create failed"),
		strings.Contains(report, "resource temporarily unavailable"):
		return resourcePIDs
	}
	return ""
}

// Messages with which programs report a failed allocation or fork, in their own words; a run
// that fails with one under a memory or process limit is reported as reaching that limit.
var (
	memoryMessages = []string{"Cannot allocate memory", "cannot allocate memory", "MemoryError", "out of memory",
		"memory exhausted", "std::bad_alloc", "heap out of memory"}
	forkMessages = []string{"Resource temporarily unavailable", "fork: retry", "Cannot fork", "can't fork",
		"BlockingIOError: [Errno 11]"}
)

// reportedLimit names the limit a failed program's stderr says it reached: memory or process
// creation failed while lim set that limit. "" when it says neither.
func reportedLimit(stderr string, lim sandbox.Limits) string {
	has := func(msgs []string) bool {
		for _, m := range msgs {
			if strings.Contains(stderr, m) {
				return true
			}
		}
		return false
	}
	switch {
	case lim.Memory > 0 && has(memoryMessages):
		return resourceMemory
	case lim.PIDs > 0 && has(forkMessages):
		return resourcePIDs
	}
	return ""
}

// reachedError is the error of a run whose program failed on reaching a limit and said so
// ("memory limit 1 GiB reached: exit status 1"): it was not killed, so its exit status stays.
func reachedError(resource string, lim sandbox.Limits, exit int) error {
	if resource == resourceMemory {
		return fault.New(fault.Execution, "memory limit %s reached: exit status %d", formatBytes(lim.Memory), exit)
	}
	return fault.New(fault.Execution, "process limit %d reached: exit status %d", lim.PIDs, exit)
}

// limitError is the error of a run that a resource limit stopped, kind fault.Execution:
// "killed: memory limit 1 GiB reached", "killed: process limit 256 reached". memory and pids
// are the limits the sandbox set (0 when unknown: the message then has no figure).
func limitError(resource string, memory int64, pids int) error {
	switch resource {
	case resourceMemory:
		if memory > 0 {
			return fault.New(fault.Execution, "killed: memory limit %s reached", formatBytes(memory))
		}
		return fault.New(fault.Execution, "killed: memory limit reached")
	default:
		if pids > 0 {
			return fault.New(fault.Execution, "killed: process limit %d reached", pids)
		}
		return fault.New(fault.Execution, "killed: process limit reached")
	}
}

// crashError is the error of a helper whose runtime crashed for another reason than a limit:
// the first line of the report, not the stacks.
func crashError(report string) error {
	first, _, _ := strings.Cut(strings.TrimSpace(report), "\n")
	return fault.New(fault.System, "process helper crashed: %s", first)
}

// formatBytes writes n in the largest binary unit that divides it to one decimal: 1 GiB,
// 1.5 GiB, 64 KiB, 100 bytes.
func formatBytes(n int64) string {
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	if n < 1<<10 {
		return strconv.FormatInt(n, 10) + " bytes"
	}
	v, unit := float64(n), ""
	for _, u := range units {
		if v < 1<<10 {
			break
		}
		v, unit = v/(1<<10), u
	}
	return strings.TrimSuffix(strconv.FormatFloat(v, 'f', 1, 64), ".0") + " " + unit
}

// limitRecord encodes an 'L' record: the resource whose limit stopped the script, a NUL and
// the error that showed it.
func limitRecord(resource, detail string) []byte {
	msg := resource + "\x00" + detail
	if len(msg) > maxStatusMsg {
		msg = msg[:maxStatusMsg]
	}
	return appendStatus(nil, statusLimit, []byte(msg))
}
