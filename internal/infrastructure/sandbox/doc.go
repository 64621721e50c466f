// Package sandbox turns a workflow's sandbox policy into a Spec and enforces it on the
// processes awf starts (DESIGN section 5, SECURITY-NOTES layer L2). Compile narrows a policy
// by a tool's restrictions into a serialisable Spec; Prepare gives the process runner the
// clone flags, credentials and private temporary directory of one helper process; Enter, run
// inside that helper before any script code, applies mount, pid and network namespaces,
// no_new_privs, the uid drop, Landlock, seccomp and resource limits; Probe reports what this
// machine can enforce.
//
// The command allowlist (L1) lives in sandbox/cmdcheck; the kernel interfaces in
// sandbox/landlock and sandbox/seccomp. The package does not run processes: the process
// runner does, and calls it at the points its documentation names.
package sandbox
