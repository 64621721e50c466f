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

// BenchmarkPlayStep plays the one turn of a step of a cassette holding steps steps of one turn
// each: a step's first turn must not cost more in a longer cassette.
func BenchmarkPlayStep(b *testing.B) {
	for _, steps := range []int{100, 10_000} {
		b.Run(fmt.Sprintf("steps=%d", steps), func(b *testing.B) {
			c := &replay.Cassette{Version: 1}
			msgs := []state.Message{{Role: "user", Content: "go"}}
			for i := range steps {
				c.Interactions = append(c.Interactions, replay.Interaction{Workflow: "wf", Step: fmt.Sprintf("s%05d", i),
					Request:  replay.Request{Model: "m", Messages: msgs},
					Response: replay.Response{Content: "ok", FinishReason: "stop"}})
			}
			req := ports.ChatRequest{Model: "m", Messages: msgs}
			p := replay.NewPlayer("c.yaml", c)
			b.ResetTimer()
			for i := range b.N {
				if i > 0 && i%steps == 0 {
					b.StopTimer()
					p = replay.NewPlayer("c.yaml", c) // every step played: start again
					b.StartTimer()
				}
				if _, err := p.Step("wf", fmt.Sprintf("s%05d", i%steps)).Chat(b.Context(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
