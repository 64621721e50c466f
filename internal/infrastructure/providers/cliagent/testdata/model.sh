#!/bin/sh
# A command-line model for tests. On the first turn it asks to read greet.go, writing the call
# in the form named by $FORMAT; once the prompt holds the tool's result, it answers in prose.
prompt=$(cat)
case "$prompt" in
*"[tool result: read_file"*)
	echo "greet.go defines Greet."
	exit 0
	;;
esac
case "$FORMAT" in
xml)
	cat <<'OUT'
I will read the file first.
<function_calls>
<invoke name="read_file">
<parameter name="path">greet.go</parameter>
<parameter name="limit">20</parameter>
</invoke>
</function_calls>
OUT
	;;
json)
	cat <<'OUT'
I will read the file first.
<tool_call>
{"name": "read_file", "arguments": {"path": "greet.go", "limit": 20}}
</tool_call>
OUT
	;;
fence)
	cat <<'OUT'
```json
{"name": "read_file", "arguments": {"path": "greet.go", "limit": 20}}
```
OUT
	;;
mistral)
	echo '[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "greet.go", "limit": 20}}]'
	;;
pythonic)
	echo '[read_file(path="greet.go", limit=20)]'
	;;
openai)
	echo '{"tool_calls": [{"type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"greet.go\", \"limit\": 20}"}}]}'
	;;
*)
	echo "unknown FORMAT $FORMAT" >&2
	exit 2
	;;
esac
