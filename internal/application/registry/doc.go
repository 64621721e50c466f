// Package registry is awf's tool registry (DESIGN section 3, seed 003): it holds every tool,
// resolves names across the levels where tools are defined, and runs calls through one
// governed pipeline. It also runs the tools it defines itself: meta-tools (manifests whose
// steps call other tools, seed 000), chains (seed 003), aliases and wrapped tools (seed 004).
// It reads no files: tool definitions arrive through ports.ToolSource. It is usable as a Go
// library from internal/ packages.
//
// # Building a registry
//
//	reg, err := registry.New(registry.Config{Validator: schema.New(), Clock: clock})
//	err = reg.Register(myTool)                      // a Go tool, at the builtin level
//	warnings, err := reg.Load(builtins, workflowTools, project, user, installed)
//
// Register refuses a name already registered at the builtin level. Load reads each source
// (ports.ToolSource), then builds aliases and wrapped tools (whose targets may sit on any
// level), checks parameter schemas, and finds cycles among manifests. Everything it finds is
// returned as workflow.Problems: errors (a name defined twice on one level, an alias or
// wrapped tool whose target is unknown or not wrappable, a cycle "a -> b -> a") skip the
// definition and make the returned error non-nil; warnings (a higher level shadowing a lower
// one) do not.
//
// # Resolution
//
// "owner/name" and "owner/name@constraint" resolve to the highest installed version that
// satisfies the semver constraint. A bare name resolves through the levels in order: the
// workflow's tools, project tools, user tools, built-ins; then, as a last resort, an
// installed tool of that name if only one owner has one. A definition that refers to its own
// name (an alias "read_file" of read_file, a manifest "grep" calling grep) skips itself and
// reaches the next definition down. An unknown name is a fault.Invalid error suggesting the
// nearest name.
//
// # Calling tools
//
// Invoke implements ports.ToolInvoker for the runner and the agent loop: it returns the
// tool's Result, and a Go error only for faults the caller must act on (an unknown tool,
// later a policy denial). Call is the seed 003 form: it returns a tool.Outcome
// {status, data, message, errors, duration_ms}. RunChain runs a tool.Chain.
//
// Every call, including the nested calls of meta-tools and chains, runs through a pipeline
// of stages (Stage): record (duration from the injected clock) -> resolve (and the nesting
// depth limit) -> coerce (string arguments to the schema's types, for calls from templates)
// -> validate arguments -> Config.Stages (where policy, approval and audit belong) -> cache
// (tools declared pure) -> validate output -> execute (timeout; a panic becomes an error
// result). Stages see and may change the *Call; a stage that refuses a call returns an
// error result and may set Call.Err and Call.Status.
//
// # Meta-tools, chains, dependencies, caching
//
// A manifest's steps call other tools with {var} substitution over its arguments, {input}
// and earlier output_vars; nesting deeper than Config.MaxDepth (10) fails with the chain of
// calls. Its dependencies are checked before its first step (and by CheckDependencies, for
// `awf tools check` and for failing a run early); a missing or out-of-range one names the
// constraint and `awf tools install --deps <tool>`. Nothing is ever installed implicitly.
// Tools declared pure (Annotations.Cacheable, a manifest's cache: true) are answered from a
// per-registry cache for identical name, version, arguments and input, marked Cached: build
// one registry per run.
//
// A Registry is safe for concurrent use.
package registry
