package process

// A helper started ahead (Config.Warm): as soon as a Run ends, the helper of the next run like
// it (same clone flags, credentials and descriptors) is started, so that the next Run finds
// it past the executable's start-up, its package initialisers and the creation of its
// namespaces, waiting for its request. The request still carries everything of the run (the
// sandbox spec the helper applies, the working directory it enters); the cgroup, which
// belongs to one run, is joined when the helper is taken (sandbox.Launch.Enroll). Nothing of
// one run reaches the next: every run has a helper process of its own, which runs one
// request and exits.

import (
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

// WarmIdle is how long a helper started ahead waits for a Run before it is stopped: long
// enough for a model's turn between two tool calls.
const WarmIdle = 5 * time.Minute

// warm holds at most one helper started ahead, for runs whose helper attributes have its key.
// The zero value is ready; safe for concurrent use.
type warm struct {
	mu  sync.Mutex
	p   *proc  // waiting for its request; nil when none
	key string // the attributes p was (or is being) started with
	// starting is closed when the helper being started is in p (or failed); nil when none is.
	starting chan struct{}
	timer    *time.Timer
	closed   bool
}

// warmKey identifies what a helper is started with, but for the cgroup (joined later).
func warmKey(attr *syscall.SysProcAttr, extra []*os.File) string {
	key := attrKey(attr)
	for _, f := range extra {
		key += fmt.Sprintf(" %p", f) // the same open file: an idmapping user namespace
	}
	return key
}

// take returns the helper started ahead when it has the attributes of attr and extra and is
// still waiting (waiting for it when it is being started), or nil; the caller owns it. A
// helper with other attributes is stopped.
func (w *warm) take(attr *syscall.SysProcAttr, extra []*os.File) *proc {
	key := warmKey(attr, extra)
	w.mu.Lock()
	if starting := w.starting; starting != nil && w.key == key {
		w.mu.Unlock()
		<-starting
		w.mu.Lock()
	}
	p, same := w.p, w.key == key
	w.p = nil
	if w.timer != nil {
		w.timer.Stop()
	}
	w.mu.Unlock()
	if p == nil {
		return nil
	}
	if !same || p.exited() {
		p.discard()
		return nil
	}
	return p
}

// refill starts, in the background, the helper of the next run with attr (without its cgroup)
// and extra, unless one is waiting or being started. One that fails to start is left: the
// next run starts its own.
func (w *warm) refill(r *Runner, attr *syscall.SysProcAttr, extra []*os.File) {
	a := withoutCgroup(attr)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.p != nil || w.starting != nil || w.closed {
		return
	}
	starting := make(chan struct{})
	w.key, w.starting = warmKey(&a, extra), starting
	go func() {
		p, err := r.spawn(&a, extra)
		w.mu.Lock()
		defer w.mu.Unlock()
		defer close(starting)
		w.starting = nil
		switch {
		case err != nil:
		case w.closed:
			go p.discard()
		default:
			w.p = p
			if w.timer == nil {
				w.timer = time.AfterFunc(WarmIdle, w.expire)
			} else {
				w.timer.Reset(WarmIdle)
			}
		}
	}()
}

// expire stops the waiting helper: no run came for WarmIdle.
func (w *warm) expire() {
	w.mu.Lock()
	p := w.p
	w.p = nil
	w.mu.Unlock()
	if p != nil {
		p.discard()
	}
}

// close stops the waiting helper and starts no more.
func (w *warm) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.expire()
}

// Close stops the helper started ahead for the next Run, if any, and starts no more: Runs
// after Close start their helper when they need it. Idempotent.
func (r *Runner) Close() error {
	r.warm.close()
	return nil
}

// exited reports whether the helper, which has not been given a request, is gone.
func (p *proc) exited() bool {
	return hasExited(p.pid)
}

// discard stops a helper that was never given a request, reaps it and closes its pipes.
func (p *proc) discard() {
	p.kill()
	p.cmd.Wait()
	p.grp.release()
	closeAll([]*os.File{p.reqW, p.inW, p.outR, p.errR, p.statusR})
}
