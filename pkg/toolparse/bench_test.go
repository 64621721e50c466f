package toolparse

import (
	"strings"
	"testing"
)

func BenchmarkParse(b *testing.B) {
	prose := strings.Repeat("The forecast says {mild} weather with [light] winds; see `docs`.\n", 64)
	inputs := []struct{ name, text string }{
		{"prose_4KB", prose},
		{"openai_json", `{"tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\", \"days\": 3}"}}]}`},
		{"hermes", "<think>Need the weather.</think>\n<tool_call>\n" + weather + "\n</tool_call>\n<tool_call>\n" + weather + "\n</tool_call><|im_end|>"},
		{"claude_xml", claude("", "\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n<parameter name=\"days\">3</parameter>\n</invoke>\n")},
		{"mistral", `[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}get_time[ARGS]{"tz": "CET"}</s>`},
		{"pythonic", `[get_weather(city='Paris', days=3), set_alarm(at="07:00", repeat=True, tags=['work'])]`},
		{"prose_then_fence", prose + "```json\n" + weather + "\n```\n"},
		{"broken_nested_json_64KB", strings.Repeat(`[{"a": `, 8192) + weather},
	}
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(int64(len(in.text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(in.text, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
