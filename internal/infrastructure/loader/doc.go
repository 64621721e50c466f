// Package loader reads workflow files (YAML) into workflow.Workflow values, keeping the position
// of every key and value so that each problem reads like a compiler message
// (wf.yaml:12:5: unknown key "promt" in step "ask" (did you mean "prompt"?)). It implements
// ports.WorkflowLoader; it decodes and validates, but evaluates no template and reads no file
// other than the workflow itself.
//
// Loading collects every problem of the file, not only the first: syntax errors, unknown keys
// (errors at every level, with the nearest valid key suggested), values of the wrong kind,
// bad durations and sizes, then the checks of workflow.Validate, whose problems are pointed at
// the exact value by their field path. A problem the decoder already reported is not reported
// again by Validate (a misspelt "promt" does not also give "needs a prompt").
//
// A file whose steps list is long (64 KB or more) is read in parts, the rest of the file then
// the steps chunk by chunk (split.go), so that the parser's syntax tree of the whole file is
// never held at once; the result and every problem are those of one parse, which is used
// instead whenever the parts cannot be shown to give the same.
//
// # Keys
//
// Top level: name (required, [a-z0-9_-]+), version (text; a number such as 1.0 is kept as
// written), description, inputs, providers, sandbox, approval, tools, mcp_servers, steps,
// output (template). Keys starting with "x-" are ignored, so that a file can hold anchors
// (&name) for reuse; aliases (*name) and merge keys (<<: *name) work everywhere.
//
// inputs: either a list of {name, type, default, required, description, enum, pattern, min,
// max, file_exists, dir_exists} or a mapping name -> the same spec without name. In the mapping
// form a spec that is not a mapping is the default (count: 3), and an empty one (feature:)
// declares the input with nothing else. type is string (the default), integer, number, boolean,
// array or object; when type is missing and the default is not a string, the type is the
// default's (3 -> integer). An input used in a template or condition but not declared is
// declared by the template check (templater.Check), not here: it knows that inputs.x ?? "d"
// does not require x.
//
// providers: name -> {type, base_url, model, api_key_env, command, args, options}.
// mcp_servers: name -> {command, args, env, url}.
//
// sandbox: {paths: {read, write, protect}, commands, hosts, network, limits: {timeout, output,
// memory, pids, file_size, cpu}, env: {allow, set, secret}, require, enforce, backend, image}.
// approval: {default, rules: [{tool, when, decision}], timeout}.
//
// tools: a list of {name, builtin, description, command, parameters: [{name, type,
// description, required, default, enum}], approval, restrictions: {paths, commands, hosts},
// use, max_calls, idempotent, read_only, cache, timeout}.
//
// steps: a list of steps. Every step takes name, type, when, timeout, retry: {max_attempts,
// backoff, initial, max}, continue_on_error, output_var, and by type:
//
//	shell:    command, dir, env
//	tool:     tool, input, args, provider
//	agent:    provider, prompt, prompt_file, system_prompt, tools, options (free mapping),
//	          tool_options: {max_calls, timeout_per_call, parallel, tool_format, on_max_calls,
//	          max_repeats}, output_format, output_schema (free mapping), mode,
//	          conversation: {max_turns, max_context_tokens, strategy, stop_condition},
//	          continue_from
//	parallel: steps, max_concurrency, fail_fast (default true)
//	workflow: workflow (path of the file), inputs (name -> template)
//
// A key of another step type is an error that names the type it belongs to. When type is
// missing it is inferred from the keys if exactly one type fits: command -> shell, tool ->
// tool, prompt or prompt_file -> agent, steps -> parallel, workflow -> workflow; keys of two
// types (command and prompt) are an error asking for type:.
//
// Values: durations are Go durations ("30s", "1m30s", "500ms") or whole numbers of seconds;
// sizes are whole numbers of bytes or a number with a unit: B, KB, MB, GB, TB (powers of 1000),
// KiB, MiB, GiB, TiB or K, M, G, T (powers of 1024), case-insensitive ("10MB", "1MiB", "512k").
// Numbers and booleans given where text is expected are kept as written. Templates are kept
// verbatim.
package loader
