package sandbox

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// Applied is the sandbox actually applied to a helper, for the audit record (SECURITY-NOTES
// L3): backend, Landlock ABI, namespaces, seccomp, uid, and what was skipped and why.
type Applied struct {
	// Backend is "clone": awf's own namespaces (clone flags) and in-process layers.
	Backend string `json:"backend"`
	// Layers are the layers in force, in Layers() order.
	Layers []Layer `json:"layers"`
	// Skipped says why each missing layer is missing.
	Skipped map[Layer]string `json:"skipped,omitempty"`
	// LandlockABI is the Landlock ABI the rules were applied with; 0 when none.
	LandlockABI int `json:"landlock_abi"`
	// UID is the uid the script runs as, seen from outside the sandbox.
	UID int `json:"uid"`
	// Exec describes a kernel-enforced command allowlist ("allowlist: 3 programs, 9
	// libraries"); "" without one.
	Exec string `json:"exec,omitempty"`
	// Notes say what a layer in force did not fully cover (such as protected paths beyond the
	// walk limit).
	Notes []string `json:"notes,omitempty"`
}

// Has reports whether layer l is in force.
func (a *Applied) Has(l Layer) bool { return slices.Contains(a.Layers, l) }

func (a *Applied) add(l Layer) {
	if !a.Has(l) {
		a.Layers = append(a.Layers, l)
		order := Layers()
		slices.SortFunc(a.Layers, func(x, y Layer) int { return slices.Index(order, x) - slices.Index(order, y) })
	}
	delete(a.Skipped, l)
}

func (a *Applied) skip(l Layer, why string) {
	if a.Has(l) {
		return
	}
	if a.Skipped == nil {
		a.Skipped = map[Layer]string{}
	}
	a.Skipped[l] = why
}

// String is a one-line summary, e.g. "clone: mountns pidns netns ... (uid 65534, landlock ABI 7)".
func (a *Applied) String() string {
	names := make([]string, len(a.Layers))
	for i, l := range a.Layers {
		names[i] = string(l)
	}
	return fmt.Sprintf("%s: %s (uid %d, landlock ABI %d)", a.Backend, strings.Join(names, " "), a.UID, a.LandlockABI)
}

// Map is the record as flat strings, for the applied field of audit records and policy
// decisions (ports.AuditSandbox.Applied): backend, layers, landlock_abi, uid, and skipped.
func (a *Applied) Map() map[string]string {
	names := make([]string, len(a.Layers))
	for i, l := range a.Layers {
		names[i] = string(l)
	}
	m := map[string]string{
		"backend":      a.Backend,
		"layers":       strings.Join(names, ","),
		"landlock_abi": strconv.Itoa(a.LandlockABI),
		"uid":          strconv.Itoa(a.UID),
	}
	if len(a.Skipped) > 0 {
		var skipped []string
		for _, l := range Layers() {
			if why, ok := a.Skipped[l]; ok {
				skipped = append(skipped, string(l)+": "+why)
			}
		}
		m["skipped"] = strings.Join(skipped, "; ")
	}
	if a.Exec != "" {
		m["exec"] = a.Exec
	}
	if len(a.Notes) > 0 {
		m["notes"] = strings.Join(a.Notes, "; ")
	}
	return m
}

// missing returns the first required layer that a lacks, as a refusal.
func (a *Applied) missing(s *Spec) error { return a.missingOn(s, runtime.GOOS) }

// missingOn returns the first layer required on goos that a lacks, as a refusal.
func (a *Applied) missingOn(s *Spec, goos string) error {
	for _, l := range s.RequiredOn(goos) {
		if !a.Has(l) {
			why := a.Skipped[l]
			switch {
			case why != "":
			case !slices.Contains(LayersOn(goos), l):
				why = "awf has no such layer on " + goos
			default:
				why = "not applied"
			}
			return &MissingError{Layer: l, Reason: why}
		}
	}
	return nil
}
