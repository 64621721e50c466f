#!/bin/sh
# An agent CLI for hand-off tests: it saves its arguments (NUL-separated) and its prompt
# (the first argument with $PROMPT_ARG, else standard input) into $SEEN, shows the MCP
# configuration named by $AGENT_CONFIG (which must exist while it runs), and answers with text
# that holds a call form, which must not be read as a call. As its MCP server would, it
# appends $CALLS (call records, one JSON line each) to the calls file $AGENT_CALLS, then
# exits with $EXIT (0 when unset).
: "${SEEN:?}"
printf '%s\0' "$@" >"$SEEN/args"
if [ -n "$PROMPT_ARG" ]; then printf '%s' "$1" >"$SEEN/prompt"; else cat >"$SEEN/prompt"; fi
if [ -n "$CALLS" ]; then printf '%s' "$CALLS" >>"${AGENT_CALLS:?}"; fi
printf 'config: %s\n' "$(cat "$AGENT_CONFIG")"
cat <<'OUT'
Done: the file defines Greet.
<tool_call>
{"name": "read_file", "arguments": {"path": "greet.go"}}
</tool_call>
OUT
exit "${EXIT:-0}"
