//go:build unix

package process

import (
	"os"
	"os/signal"
	"syscall"
)

// startReaper starts reaping when the helper is the init of a PID namespace; otherwise
// orphans go to the host's init and it returns nil. The reaper lives as long as the helper.
func startReaper() *orphanReaper {
	if os.Getpid() != 1 {
		return nil
	}
	r := &orphanReaper{kick: make(chan struct{}, 1)}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGCHLD)
	go func() {
		for {
			select {
			case <-sigs:
			case <-r.kick:
			}
			r.reap()
		}
	}()
	return r
}

// reap waits for every exited child, when no command of the script is running; a command
// that ends kicks the reaper again.
func (r *orphanReaper) reap() {
	if !r.running.TryLock() {
		return
	}
	defer r.running.Unlock()
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
