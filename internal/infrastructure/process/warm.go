package process

// Helpers started ahead (Config.Warm): as soon as a Run ends, helpers for the next runs like
// it (same clone flags, credentials and descriptors) are started, up to warmDepth, so that
// the next Run finds one past the executable's start-up, its package initialisers and the
// creation of its namespaces, waiting for its request. The request still carries everything
// of the run (the sandbox spec the helper applies, the working directory it enters); the
// cgroup, which belongs to one run, is joined when the helper is taken
// (sandbox.Launch.Enroll). Nothing of one run reaches the next: every run has a helper
// process of its own, which runs one request and exits. (Sandboxed runs that a persistent
// helper serves, Config.Serve, take none of these.)

import (
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

// WarmIdle is how long helpers started ahead wait for a Run before they are stopped: long
// enough for a model's turn between two tool calls.
const WarmIdle = 5 * time.Minute

// warmDepth is how many helpers are kept started ahead: two, so that on a loaded machine,
// where a helper's start takes longer than the time between two runs, each has the time of
// two runs to start.
const warmDepth = 2

// warm holds the helpers started ahead, for runs whose helper attributes have its key. The
// zero value is ready; safe for concurrent use.
type warm struct {
	mu    sync.Mutex
	ready []*proc // waiting for their request, oldest first
	key   string  // the attributes of ready and of the helpers being started
	// starting is closed when a helper being started is in ready (or the start failed); nil
	// when none is being started.
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

// take returns a helper started ahead with the attributes of attr and extra that is still
// waiting (waiting for one being started if none is), or nil; the caller owns it. Helpers
// with other attributes are stopped.
func (w *warm) take(attr *syscall.SysProcAttr, extra []*os.File) *proc {
	key := warmKey(attr, extra)
	w.mu.Lock()
	if starting := w.starting; len(w.ready) == 0 && starting != nil && w.key == key {
		w.mu.Unlock()
		<-starting
		w.mu.Lock()
	}
	var p *proc
	stale := w.ready
	if w.key == key && len(w.ready) > 0 {
		p, stale = w.ready[0], nil
		w.ready = w.ready[1:]
	} else {
		w.ready = nil
	}
	w.mu.Unlock()
	discardAll(stale)
	if p != nil && p.exited() {
		p.discard()
		return nil
	}
	return p
}

// refill starts, in the background and one after the other, helpers with attr (without its
// cgroup) and extra until warmDepth wait, unless some are being started already. Waiting
// helpers with other attributes are stopped. A start that fails ends the refill: the next
// run starts its own helper.
func (w *warm) refill(r *Runner, attr *syscall.SysProcAttr, extra []*os.File) {
	a := withoutCgroup(attr)
	key := warmKey(&a, extra)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.starting != nil {
		return
	}
	if w.key != key {
		go discardAll(w.ready)
		w.ready, w.key = nil, key
	}
	if len(w.ready) >= warmDepth {
		return
	}
	w.starting = make(chan struct{})
	go func() {
		for more := true; more; {
			p, err := r.spawn(&a, extra)
			w.mu.Lock()
			if err == nil && !w.closed && w.key == key {
				w.ready = append(w.ready, p)
				w.idle()
			} else if err == nil {
				go p.discard()
			}
			more = err == nil && !w.closed && w.key == key && len(w.ready) < warmDepth
			close(w.starting)
			w.starting = nil
			if more {
				w.starting = make(chan struct{})
			}
			w.mu.Unlock()
		}
	}()
}

// idle (re)starts the timer that stops the waiting helpers after WarmIdle. w.mu is held.
func (w *warm) idle() {
	if w.timer == nil {
		w.timer = time.AfterFunc(WarmIdle, w.expire)
		return
	}
	w.timer.Reset(WarmIdle)
}

// expire stops the waiting helpers: no run came for WarmIdle.
func (w *warm) expire() {
	w.mu.Lock()
	ready := w.ready
	w.ready = nil
	w.mu.Unlock()
	discardAll(ready)
}

// close stops the waiting helpers and starts no more.
func (w *warm) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.expire()
}

// Close stops the helpers started ahead for the next Runs, if any, and starts no more: Runs
// after Close start their helper when they need it. Idempotent.
func (r *Runner) Close() error {
	r.warm.close()
	r.servers.close()
	r.protect.Close() // its inotify descriptor
	return nil
}

// exited reports whether the helper, which has not been given a request, is gone.
func (p *proc) exited() bool {
	return hasExited(p.pid)
}

// discardAll discards each of ps.
func discardAll(ps []*proc) {
	for _, p := range ps {
		p.discard()
	}
}

// discard stops a helper that was never given a request, reaps it and closes its pipes.
func (p *proc) discard() {
	p.kill()
	p.cmd.Wait()
	p.grp.release()
	closeAll([]*os.File{p.reqW, p.inW, p.outR, p.errR, p.statusR})
}
