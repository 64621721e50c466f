package replay_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/providers/replay"
)

// echo answers every turn with a short text.
type echo struct{}

func (echo) Chat(context.Context, ports.ChatRequest) (ports.ChatResponse, error) {
	return ports.ChatResponse{Content: "ok", FinishReason: "stop"}, nil
}

// BenchmarkRecordTurn records a turn of a step whose conversation already holds turns
// model turns (each adding about 1 KB): the cost of the next turn must not grow with the whole
// cassette, only with the request it records.
func BenchmarkRecordTurn(b *testing.B) {
	for _, turns := range []int{20, 100} {
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			var msgs []state.Message
			path := filepath.Join(b.TempDir(), "c.yaml")
			rec := replay.NewRecorder(path)
			p := rec.Wrap("wf", "s", echo{})
			turn := func(i int) {
				msgs = append(msgs, state.Message{Role: "user", Content: fmt.Sprintf("turn %d\n%s", i, strings.Repeat("some text of the tool's output\n", 32))})
				if _, err := p.Chat(b.Context(), ports.ChatRequest{Model: "m", Messages: msgs}); err != nil {
					b.Fatal(err)
				}
			}
			for i := range turns {
				turn(i)
			}
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				// Start again from the same length, so that every measured turn is turn turns+1.
				rec = replay.NewRecorder(path)
				p = rec.Wrap("wf", "s", echo{})
				msgs = msgs[:0]
				for j := range turns {
					turn(j)
				}
				b.StartTimer()
				turn(turns + i)
			}
		})
	}
}
