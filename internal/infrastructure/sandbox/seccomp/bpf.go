//go:build linux

package seccomp

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// asm assembles a classic BPF program with symbolic jump targets, so that the filter reads
// as a list of decisions rather than hand-counted offsets.
type asm struct {
	insns  []insn
	labels map[string]int
}

type insn struct {
	code   uint16
	k      uint32
	jt, jf string // labels; "" falls through to the next instruction
}

func newAsm() *asm { return &asm{labels: map[string]int{}} }

// label marks the next instruction as name.
func (a *asm) label(name string) { a.labels[name] = len(a.insns) }

// load loads the 32-bit word at off of struct seccomp_data into the accumulator.
func (a *asm) load(off uint32) {
	a.insns = append(a.insns, insn{code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, k: off})
}

// and masks the accumulator.
func (a *asm) and(k uint32) {
	a.insns = append(a.insns, insn{code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, k: k})
}

// jeq jumps to jt when the accumulator equals k, else to jf.
func (a *asm) jeq(k uint32, jt, jf string) { a.jump(unix.BPF_JEQ, k, jt, jf) }

// jge jumps to jt when the accumulator is at least k, else to jf.
func (a *asm) jge(k uint32, jt, jf string) { a.jump(unix.BPF_JGE, k, jt, jf) }

// jset jumps to jt when the accumulator has any bit of k set, else to jf.
func (a *asm) jset(k uint32, jt, jf string) { a.jump(unix.BPF_JSET, k, jt, jf) }

func (a *asm) jump(op uint16, k uint32, jt, jf string) {
	a.insns = append(a.insns, insn{code: unix.BPF_JMP | op | unix.BPF_K, k: k, jt: jt, jf: jf})
}

// ret returns the seccomp action k.
func (a *asm) ret(k uint32) {
	a.insns = append(a.insns, insn{code: unix.BPF_RET | unix.BPF_K, k: k})
}

// assemble resolves the labels. A jump must go forward by at most 255 instructions.
func (a *asm) assemble() ([]unix.SockFilter, error) {
	out := make([]unix.SockFilter, len(a.insns))
	for i, in := range a.insns {
		jt, err := a.offset(i, in.jt)
		if err != nil {
			return nil, err
		}
		jf, err := a.offset(i, in.jf)
		if err != nil {
			return nil, err
		}
		out[i] = unix.SockFilter{Code: in.code, Jt: jt, Jf: jf, K: in.k}
	}
	return out, nil
}

func (a *asm) offset(i int, label string) (uint8, error) {
	if label == "" {
		return 0, nil
	}
	target, ok := a.labels[label]
	if !ok {
		return 0, fmt.Errorf("bpf: undefined label %q", label)
	}
	d := target - i - 1
	if d < 0 || d > 255 {
		return 0, fmt.Errorf("bpf: jump from %d to %q (%d) out of range", i, label, target)
	}
	return uint8(d), nil
}
