// Package toolwire builds the tool set every command that runs tools shares (awf run, resume,
// tools run, mcp serve): the built-ins under the workflow's sandbox policy, the workflow's
// command tools and restricted built-ins, the process runners that start tool processes in the
// sandbox (or a container), the environment they start from, and the policy report the audit
// record carries. One place, so that no command serves tools under weaker rules.
package toolwire
