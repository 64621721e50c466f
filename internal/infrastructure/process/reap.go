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
	"sync"

	"mvdan.cc/sh/v3/interp"
)

// orphanReaper reaps the zombies of processes reparented to the helper.
type orphanReaper struct {
	running sync.RWMutex // read-held by each command from start to wait
	kick    chan struct{}
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
