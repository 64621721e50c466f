#!/bin/sh
# Writes a truncated call first; when told the call could not be read, writes it properly.
prompt=$(cat)
case "$prompt" in
*"could not be read"*)
	printf '<tool_call>\n{"name": "read_file", "arguments": {"path": "greet.go"}}\n</tool_call>\n'
	;;
*)
	printf '<tool_call>\n{"name": "read_file", "arguments": {"path": \n'
	;;
esac
