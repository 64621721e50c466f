package agent

import (
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
)

// CharsPerToken is the estimate awf uses where a provider reports no token counts: about four
// characters of English or code per token, the usual rule of thumb for BPE tokenizers. awf
// does not tokenize; set max_context_tokens with a margin.
const CharsPerToken = 4

// messageOverhead approximates the tokens a message costs beyond its text (role, separators).
const messageOverhead = 4

// estimateText is the estimated token count of s, rounding up.
func estimateText(s string) int {
	return (len(s) + CharsPerToken - 1) / CharsPerToken
}

// estimateMessage is the estimated token count of one message.
func estimateMessage(m state.Message) int {
	n := messageOverhead + estimateText(m.Content)
	for _, c := range m.ToolCalls {
		n += messageOverhead + estimateText(c.Name) + estimateText(c.Arguments)
	}
	return n
}

func estimateMessages(msgs []state.Message) int {
	n := 0
	for _, m := range msgs {
		n += estimateMessage(m)
	}
	return n
}

// estimateTools is the estimated token count of the tool schemas sent with every request.
func estimateTools(tools []ports.ToolSchema) int {
	n := 0
	for _, t := range tools {
		n += messageOverhead + estimateText(t.Name) + estimateText(t.Description) + estimateText(string(t.Parameters))
	}
	return n
}
