package process

// [sandbox] The helper as the init of its PID namespace. Every process whose parent dies in the
// sandbox (`sh -c 'job &'` after sh exits) becomes the helper's child; unreaped, it stays a
// zombie until the tool ends and counts toward the process limit, so a loop of such commands
// hit "process limit reached" with nothing running. The helper reaps them. It must not reap a
// child the interpreter started and will wait for itself (os/exec would then fail with
// ECHILD), so it reaps only while no command is between start and wait: every command holds
// the read side of a lock, the reaper tries the write side.

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"mvdan.cc/sh/v3/interp"
)

// orphanReaper reaps the zombies of processes reparented to the helper.
type orphanReaper struct {
	running sync.RWMutex // read-held by each command from start to wait
	kick    chan struct{}
}

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

// middleware marks a command as running for as long as the handlers below it run it. With a
// nil reaper it passes commands through.
func (r *orphanReaper) middleware(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
	if r == nil {
		return next
	}
	return func(ctx context.Context, args []string) error {
		r.running.RLock()
		err := next(ctx, args)
		r.running.RUnlock()
		select {
		case r.kick <- struct{}{}:
		default:
		}
		return err
	}
}
