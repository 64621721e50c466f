// Package templater evaluates awf's templates and expressions with expr-lang and binds command
// templates so that no value can change a command's syntax. It implements ports.Templater and
// is the reference for template syntax; it does not decide what a scope holds (the runner
// builds scopes) nor run commands (ports.ProcessRunner does).
//
// # Templates
//
// A template is text with placeholders: `{{ expression }}` anywhere in a string, several per
// string, the text around them kept. A leading dot is accepted and ignored: `{{.inputs.x}}` is
// `{{inputs.x}}`. A placeholder ends at the first `}}` outside string literals and outside
// braces it opened, so `{{ {"a": 1} }}` and `{{ "}}" }}` work; write `{{ "{{" }}` for literal
// braces. An unterminated `{{` or an empty `{{ }}` is a *SyntaxError with the byte offset.
//
// Expressions are expr-lang (https://expr-lang.org): operators, `?:`, `??`, `let`, literals,
// and builtins such as upper, trim, split, join, len, filter, map, toJSON, fromJSON.
//
// Values become text this way: strings verbatim; integers in decimal; floats in their
// shortest form (2.5, 3, 1e+21, as JSON writes them); booleans true or false; maps and lists
// as compact JSON. A nil value is an error, never an empty string.
//
// # Missing references are errors
//
// A reference to something that does not exist is a *RefError naming the path, at any depth:
//
//	inputs.featur: no such input (did you mean "feature"?)
//	states.build.output: no step "build" has run
//	states.build.outptu: step "build" has no field "outptu" (did you mean "output"?)
//	env.TOKEN: environment variable "TOKEN" is not set
//	inputs.list[5]: index 5 is out of range: inputs.list has 2 items
//
// Two forms say that a miss is expected, and yield nil instead: `?.` makes its access and the
// rest of its chain tolerant (`inputs?.x`, `states.a.response?.items`), and the left side of
// `??` is tolerant at every depth (`inputs.mode ?? "fast"`). `"x" in inputs` tests for a key.
//
// # Scope
//
// A scope (ports.Scope) holds these namespaces; Check knows which exist where:
//
//	inputs     map[string]any: the run's input values, by name
//	states     map[string]any: by step name, and by output_var name, a map[string]any with
//	           exactly the keys of workflow.StepStateFields: output (string), response (parsed
//	           JSON or nil), exit_code (int or nil), status (string), error (string), tokens
//	           ({input, output, total} or nil), tool_calls (list of {id, tool, arguments,
//	           result}), tool_stats ({total_calls, successful, failed, denied,
//	           total_duration_ms} or nil); a step that has not run is absent
//	env        map[string]any of strings: the environment
//	workflow   {name, version, description, dir}
//	run        {id, dir}
//	args       map[string]any: a tool call's arguments (tool commands, approval rules)
//	response, turn, tokens   the last reply, the turn number, tokens used (stop_condition)
//	tool       the called tool's name (approval rules)
//
// Values are plain Go values as encoding/json or YAML decoding produces them (maps with string
// keys, []any, strings, numbers, bools, nil); pointers are followed.
//
// # Bare expressions
//
// `when`, `conversation.stop_condition` and approval rules are bare expressions (Eval,
// EvalBool): no braces needed, though `when: "{{ inputs.x == 'y' }}"` is accepted too. The
// same miss rules apply; EvalBool requires a boolean ("must be a boolean, got string").
//
// # Command templates
//
// Shell step commands and custom tool commands are bound, never rendered (Command). The
// template's literal text is shell source; every placeholder becomes a quoted reference to a
// variable AWF_T1, AWF_T2, ... whose value is the rendered text, returned in
// BoundCommand.Vars. The script never contains a value, so it is the same whatever the
// values are, and each placeholder is exactly one word: no splitting, globbing, or parsing of
// quotes, `;`, `$(...)` or backquotes in the value. The quoting around a placeholder decides
// its form:
//
//	rg {{x}} dir        ->  rg "${AWF_T1}" dir
//	echo "a {{x}} b"    ->  echo "a ${AWF_T1} b"
//	rg '{{x}}' dir      ->  rg ''"${AWF_T1}"'' dir      (the single quotes are closed around it)
//	echo $'a{{x}}'      ->  echo $'a'"${AWF_T1}"$''
//	cat <<EOF           ->  cat <<EOF
//	{{x}}                   ${AWF_T1}
//	EOF                     EOF
//
// The bound script is parsed as bash once per template and refused, with the offset of the
// placeholder, when it does not parse, when a placeholder would not be one quoted word, when a
// value would be evaluated as code (arithmetic such as $(( {{x}} )) or [[ {{x}} -eq 1 ]],
// subscripts, an argument of eval or trap, the -c string of sh or bash), in a quoted
// here-document (<<'EOF'), right after an unescaped `$` or a backslash, or when the template
// uses AWF_T names itself. Values containing a NUL byte cannot be bound (no shell variable
// holds one): an error. Programs still read their arguments: a value starting with "-" is
// an option to most commands, so put "--" before model-controlled values (`rg -- {{args.p}}`);
// Check warns where it is missing.
//
// `{{ raw(expr) }}` is the only way to splice text into the shell source: the value is shell
// code. raw must be the whole placeholder; Check warns at each use, and the script is parsed
// and checked again at each binding. In text templates and expressions raw(x) is x.
//
// # Static checks
//
// Check compiles every template of a workflow (workflow.Templates) and reports, with
// positions: syntax errors; unknown names (did-you-mean); states.X where X is not an earlier
// step or output_var (a parallel block's children see only the steps before the block);
// unknown fields of states.X, workflow and run; args.X that is not a parameter of the tool;
// inputs.X that is not declared, which becomes an implicit required string input with a
// warning; raw() in commands and option-like model values (warnings).
package templater
