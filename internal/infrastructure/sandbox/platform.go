package sandbox

// Layer selection where awf's own Linux layers do not exist: macOS (Seatbelt) and Windows
// (none). Pure, so that tests on any machine run it with a Report of another OS.

import "fmt"

// ExpectOn says what a helper for s gets on rep's machine when rep.OS is not Linux: Seatbelt
// on macOS when it works there (and the spec does not simulate it away), nothing elsewhere;
// every other layer is skipped with the reason. The error is the refusal of the first layer
// required on rep.OS (Spec.RequiredOn) that is missing: fault.Denied, the tool does not run.
func ExpectOn(s *Spec, rep Report) (Applied, error) {
	a := Applied{Backend: "none", UID: rep.UID}
	if rep.OS == "darwin" && rep.Seatbelt && !s.unavailable(LayerSeatbelt) {
		a.Backend = "seatbelt"
		a.add(LayerSeatbelt)
		if s.ExecAllowlist {
			a.Exec = "allowlist: Seatbelt process-exec limited to the allowed programs"
		}
	}
	for _, l := range Layers() {
		a.skip(l, skipReason(l, rep, s))
	}
	return a, a.missingOn(s, rep.OS)
}

// skipReason says why layer l is not applied on rep's machine.
func skipReason(l Layer, rep Report, s *Spec) string {
	switch {
	case l != LayerSeatbelt:
		return fmt.Sprintf("Linux only (this is %s)", rep.OS)
	case rep.OS != "darwin":
		return fmt.Sprintf("macOS only (this is %s)", rep.OS)
	case s.unavailable(l):
		return "simulated: switched off"
	}
	return "sandbox-exec did not apply a test profile on this machine"
}
