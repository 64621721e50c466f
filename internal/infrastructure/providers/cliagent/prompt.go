package cliagent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/pkg/toolparse"
)

// The prompt of one turn is plain text: the system prompt, the tools and how to call them,
// then the conversation so far as a transcript, then what to do next. A conversation of one
// user message without tools is sent as it is, so the provider also works as a plain
// completion command.

const xmlForm = `<function_calls>
<invoke name="TOOL_NAME">
<parameter name="PARAMETER_NAME">value</parameter>
</invoke>
</function_calls>`

const jsonForm = `<tool_call>
{"name": "TOOL_NAME", "arguments": {"PARAMETER_NAME": "value"}}
</tool_call>`

// buildPrompt renders the request for a command-line model.
func buildPrompt(req ports.ChatRequest, format string) string {
	var b strings.Builder
	writeSystem(&b, req.System)
	if len(req.Tools) == 0 && singleUserMessage(req) {
		b.WriteString(req.Messages[0].Content)
		return b.String()
	}
	note := ""
	if len(req.Tools) > 0 {
		writeTools(&b, req.Tools, format)
		note = " Call tools in the form described above, or answer in plain text when you are done."
	}
	writeConversation(&b, req.Messages, format, note)
	return b.String()
}

// buildHandoffPrompt renders the request for an agent CLI that reaches the step's tools
// itself through the MCP server named server: the prompt names the tools, and never asks for
// calls written in the text, which nobody would read.
func buildHandoffPrompt(req ports.ChatRequest, server string) string {
	var b strings.Builder
	writeSystem(&b, req.System)
	fmt.Fprintf(&b, "# Tools\n\nThe MCP server %q gives you the tools below (your tool list may show them with the "+
		"server's name as a prefix). Call them as your own tools when you need them: each call is run, approved and "+
		"recorded for you. When you have finished, answer in plain text: that answer is the result.\n\n", server)
	for _, t := range req.Tools {
		fmt.Fprintf(&b, "- %s", t.Name)
		if d, _, _ := strings.Cut(strings.TrimSpace(t.Description), "\n"); d != "" {
			fmt.Fprintf(&b, ": %s", d)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	if singleUserMessage(req) {
		b.WriteString(req.Messages[0].Content)
		return b.String()
	}
	writeConversation(&b, req.Messages, FormatJSON, "")
	return b.String()
}

// writeSystem writes the system prompt, if any, as the prompt's first paragraph.
func writeSystem(b *strings.Builder, system string) {
	if s := strings.TrimSpace(system); s != "" {
		b.WriteString(s)
		b.WriteString("\n\n")
	}
}

// singleUserMessage reports whether the conversation is one user message, which is sent as
// it is rather than as a transcript.
func singleUserMessage(req ports.ChatRequest) bool {
	return len(req.Messages) == 1 && req.Messages[0].Role == "user"
}

// writeConversation writes the conversation as a transcript, calls in format, then what to
// do next, followed by note.
func writeConversation(b *strings.Builder, msgs []state.Message, format, note string) {
	b.WriteString("# Conversation\n\n")
	for _, m := range msgs {
		writeMessage(b, m, format)
	}
	b.WriteString("# Your turn\n\nWrite the assistant's next message, and only that.")
	b.WriteString(note)
	b.WriteString("\n")
}

func writeTools(b *strings.Builder, tools []ports.ToolSchema, format string) {
	form := jsonForm
	note := "Write one <tool_call> block per call."
	if format == FormatXML {
		form = xmlForm
		note = "Put one <invoke> per call inside one <function_calls> block. Write array and object values as JSON."
	}
	fmt.Fprintf(b, "# Tools\n\nYou can call the tools below. To call tools, end your message with the calls, "+
		"written exactly in this form:\n\n%s\n\n%s The calls are run for you and their results come back "+
		"in the next message. When you have finished, answer in plain text without any call.\n\n", form, note)
	for _, t := range tools {
		fmt.Fprintf(b, "## %s\n\n", t.Name)
		if d := strings.TrimSpace(t.Description); d != "" {
			b.WriteString(d)
			b.WriteString("\n\n")
		}
		params := compactJSON(t.Parameters)
		if params == "" {
			params = `{"type":"object","properties":{}}`
		}
		fmt.Fprintf(b, "Parameters (JSON Schema): %s\n\n", params)
	}
}

func writeMessage(b *strings.Builder, m state.Message, format string) {
	switch m.Role {
	case "tool":
		kind := "result"
		if m.IsError {
			kind = "error"
		}
		fmt.Fprintf(b, "[tool %s: %s %s]\n%s\n\n", kind, m.Name, m.ToolCallID, strings.TrimRight(m.Content, "\n"))
	case "assistant":
		b.WriteString("[assistant]\n")
		if c := strings.TrimSpace(m.Content); c != "" {
			b.WriteString(c)
			b.WriteString("\n")
		}
		if len(m.ToolCalls) > 0 {
			b.WriteString(renderCalls(m.ToolCalls, format))
			b.WriteString("\n")
		}
		b.WriteString("\n")
	default:
		fmt.Fprintf(b, "[%s]\n%s\n\n", m.Role, strings.TrimRight(m.Content, "\n"))
	}
}

// renderCalls writes calls in the form the model is asked to use, so that the transcript
// shows it the form at work.
func renderCalls(calls []state.CallRef, format string) string {
	var b strings.Builder
	if format != FormatXML {
		for i, c := range calls {
			if i > 0 {
				b.WriteString("\n")
			}
			args := compactJSON(json.RawMessage(c.Arguments))
			if args == "" {
				args = "{}"
			}
			name, _ := json.Marshal(c.Name)
			fmt.Fprintf(&b, "<tool_call>\n{\"name\": %s, \"arguments\": %s}\n</tool_call>", name, args)
		}
		return b.String()
	}
	b.WriteString("<function_calls>\n")
	for _, c := range calls {
		fmt.Fprintf(&b, "<invoke name=%q>\n", c.Name)
		var args map[string]json.RawMessage
		_ = json.Unmarshal([]byte(c.Arguments), &args)
		keys := make([]string, 0, len(args))
		for k := range args {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := args[k]
			var s string
			if json.Unmarshal(v, &s) != nil {
				s = string(v) // arrays, objects, numbers and booleans as JSON
			}
			fmt.Fprintf(&b, "<parameter name=%q>%s</parameter>\n", k, s)
		}
		b.WriteString("</invoke>\n")
	}
	b.WriteString("</function_calls>")
	return b.String()
}

// repairPrompt asks again after a reply whose calls could not be parsed.
func repairPrompt(prompt, reply string, err error, format string) string {
	form := jsonForm
	if format == FormatXML {
		form = xmlForm
	}
	return fmt.Sprintf("%s\n[assistant]\n%s\n\n[user]\nYour tool calls could not be read: %v. Write your message again, "+
		"with every call exactly in this form:\n\n%s\n\n# Your turn\n\nWrite the assistant's next message, and only that.\n",
		strings.TrimRight(prompt, "\n"), strings.TrimSpace(reply), err, form)
}

// parseOptions tells toolparse the step's tools and their schemas (which type XML values).
func parseOptions(tools []ports.ToolSchema) toolparse.Options {
	opts := toolparse.Options{}
	for _, t := range tools {
		opts.Tools = append(opts.Tools, t.Name)
		if len(t.Parameters) > 0 {
			if opts.Schemas == nil {
				opts.Schemas = map[string]json.RawMessage{}
			}
			opts.Schemas[t.Name] = t.Parameters
		}
	}
	return opts
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if len(bytes.TrimSpace(raw)) == 0 || json.Compact(&b, raw) != nil {
		return strings.TrimSpace(string(raw))
	}
	return b.String()
}
