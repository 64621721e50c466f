package container

import (
	"debug/elf"

	"github.com/awf-dev/awf/internal/domain/fault"
)

// checkStatic refuses a helper that cannot run in an arbitrary image: the helper is bound into
// the container, whose image has no Go runtime, no libc of the host and often no dynamic loader
// at all, so it must be a static executable (CGO_ENABLED=0). A dynamically linked one would
// fail inside the container with a bare "no such file or directory".
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fault.New(fault.System, "container backend: helper %s: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fault.New(fault.System, "container backend: %s is dynamically linked, so it cannot run inside a container image; "+
				"build awf with CGO_ENABLED=0 (go build -o awf ./cmd/awf) or set the helper path to a static build", path)
		}
	}
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return fault.New(fault.System, "container backend: helper %s: not an executable (%v)", path, f.Type)
	}
	return nil
}
