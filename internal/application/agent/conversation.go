package agent

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
)

// Conversation mode (F033 semantics): the history is kept in the step's state, a stop
// condition can end it after any reply, max_turns bounds the replies, and when the history
// outgrows max_context_tokens a strategy shrinks it before the next request. The system
// prompt is never dropped: it travels apart from the messages.

// droppedNote opens the first message after dropped history, so the model knows.
const droppedNote = "[Earlier messages of this conversation were dropped to fit the context window.]"

// summaryIntro opens the message that replaces summarised history.
const summaryIntro = "[Summary of the earlier part of this conversation, which was dropped to fit the context window:]\n"

// summarizerSystem is the system prompt of the request that summarises dropped history.
const summarizerSystem = "You summarise part of a conversation between a user, an AI assistant and the tools it " +
	"called, so that the assistant can go on without it. Keep every fact, decision, file name, " +
	"result and open question the rest of the work may need; drop pleasantries. Answer with the " +
	"summary only."

// stopCondition evaluates conversation.stop_condition after a reply, with response (the
// reply's text), turn (this step's replies so far) and tokens (tokens used so far as the
// provider reports them, else the estimated size of the conversation).
func (l *loop) stopCondition() (bool, error) {
	cond := l.convOpts.StopCondition
	if cond == "" {
		return false, nil
	}
	scope := make(ports.Scope, len(l.sc.Scope)+3)
	maps.Copy(scope, l.sc.Scope)
	tokens := l.tokens.Total
	if tokens == 0 {
		tokens = l.est + estimateText(l.system())
	}
	scope["response"], scope["turn"], scope["tokens"] = l.content, l.turn, tokens
	v, err := l.x.d.Templater.Eval(cond, scope)
	if err != nil {
		return false, fmt.Errorf("conversation.stop_condition: %w", err)
	}
	b, ok := v.(bool)
	if !ok {
		return false, fault.New(fault.Invalid, "conversation.stop_condition: %q is %T, want a boolean", cond, v)
	}
	return b, nil
}

// contextTokens is the size of the next request: what the provider counted for the last
// request and reply plus the estimate of what came after, or all estimated.
func (l *loop) contextTokens() int {
	if l.reported > 0 {
		return l.reported + l.since
	}
	return l.fixedTokens() + l.est
}

// fixedTokens is the estimated size of what every request carries: system prompt and tools.
func (l *loop) fixedTokens() int {
	n := estimateText(l.system())
	if !l.noTools {
		n += estimateTools(l.tools)
	}
	return n
}

// fitContext shrinks the history with the step's strategy when the next request would pass
// max_context_tokens. It shrinks to three quarters of the budget, so that it does not run
// again at every turn. The latest exchange is always kept; truncate_middle and summarize also
// keep the first (the task). Messages are dropped whole, a call never apart from its results.
func (l *loop) fitContext(ctx context.Context) error {
	budget := l.convOpts.MaxContextTokens
	if !l.conv || budget <= 0 || l.contextTokens() <= budget {
		return nil
	}
	msgs := l.hist[l.sysOff:]
	starts := unitStarts(msgs)
	sizes := unitSizes(msgs, starts)
	lo := 1
	if l.convOpts.Strategy == strategySliding || l.convOpts.Strategy == "" {
		lo = 0
	}
	total := l.fixedTokens()
	for _, n := range sizes {
		total += n
	}
	end := lo
	for target := budget * 3 / 4; end < len(starts)-1 && total > target; end++ {
		total -= sizes[end]
	}
	if end <= lo {
		l.warn(fmt.Sprintf("conversation: about %d tokens, over max_context_tokens (%d), and nothing can be dropped", l.contextTokens(), budget))
		return nil
	}
	from, to := starts[lo], starts[end]
	note := droppedNote
	if l.convOpts.Strategy == strategySummarize {
		note = l.summarize(ctx, msgs[from:to])
	}
	kept := make([]state.Message, 0, l.sysOff+from+1+len(msgs)-to)
	kept = append(kept, l.hist[:l.sysOff]...)
	kept = append(kept, msgs[:from]...)
	kept = append(kept, withNote(note, msgs[to:])...)
	l.warn(fmt.Sprintf("conversation: %d messages dropped (%s) to stay under max_context_tokens (%d)",
		to-from, strategyName(l.convOpts.Strategy), budget))
	l.hist = kept
	l.est = estimateMessages(kept[l.sysOff:])
	l.reported, l.since = 0, 0
	return nil
}

func strategyName(s string) string {
	if s == "" {
		return strategySliding
	}
	return s
}

// unitStarts returns where each unit of msgs starts: a user message, or an assistant message
// with the tool results that follow it.
func unitStarts(msgs []state.Message) []int {
	var starts []int
	for i, m := range msgs {
		if m.Role != "tool" || len(starts) == 0 {
			starts = append(starts, i)
		}
	}
	return starts
}

func unitSizes(msgs []state.Message, starts []int) []int {
	sizes := make([]int, len(starts))
	for u, s := range starts {
		end := len(msgs)
		if u+1 < len(starts) {
			end = starts[u+1]
		}
		sizes[u] = estimateMessages(msgs[s:end])
	}
	return sizes
}

// withNote puts note before rest: into its first message when that is the user's, else as a
// user message of its own (some APIs want a user message first). rest is not modified.
func withNote(note string, rest []state.Message) []state.Message {
	if len(rest) > 0 && rest[0].Role == "user" {
		first := rest[0]
		first.Content = note + "\n\n" + first.Content
		return append([]state.Message{first}, rest[1:]...)
	}
	return append([]state.Message{{Role: "user", Content: note}}, rest...)
}

// summarize asks the provider to summarise the dropped messages, counting its tokens. When
// that fails the history is shortened without a summary, and a warning says so.
func (l *loop) summarize(ctx context.Context, dropped []state.Message) string {
	resp, err := l.prov.Chat(ctx, ports.ChatRequest{
		Model:    l.model,
		System:   summarizerSystem,
		Messages: []state.Message{{Role: "user", Content: transcript(dropped)}},
		Options:  l.options,
	})
	if err != nil || strings.TrimSpace(resp.Content) == "" {
		l.warn(fmt.Sprintf("conversation: summarising dropped messages failed (%v); dropping them without a summary", err))
		return droppedNote
	}
	l.tokens.Add(resp.Usage)
	return summaryIntro + strings.TrimSpace(resp.Content)
}

// transcript renders messages as plain text for the summariser.
func transcript(msgs []state.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		switch m.Role {
		case "tool":
			status := "result"
			if m.IsError {
				status = "error"
			}
			fmt.Fprintf(&b, "[tool %s %s (%s)]\n%s\n\n", m.Name, status, m.ToolCallID, m.Content)
		default:
			fmt.Fprintf(&b, "[%s]\n%s\n", m.Role, m.Content)
			for _, c := range m.ToolCalls {
				fmt.Fprintf(&b, "(calls %s %s, id %s)\n", c.Name, c.Arguments, c.ID)
			}
			b.WriteString("\n")
		}
	}
	return strings.TrimSpace(b.String())
}
