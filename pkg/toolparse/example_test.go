package toolparse_test

import (
	"encoding/json"
	"fmt"

	"github.com/awf-dev/awf/pkg/toolparse"
)

// show prints what Parse found, one call a line.
func show(res toolparse.Result, err error) {
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	for _, c := range res.Calls {
		fmt.Println(c.ID, c.Name, string(c.Arguments))
	}
	if res.Reasoning != "" {
		fmt.Printf("reasoning: %q\n", res.Reasoning)
	}
	fmt.Printf("content: %q\n", res.Content)
}

// OpenAI-style JSON needs no marker, but then counts as a call only when it names an allowed
// tool; numbers keep their exact text.
func Example() {
	text := `I'll check both.
{"name": "get_weather", "arguments": {"city": "Paris", "lat": 48.8566140}}
{"name": "unknown_tool", "arguments": {}}`
	show(toolparse.Parse(text, toolparse.Options{Tools: []string{"get_weather"}}))
	// Output:
	// call_1 get_weather {"city":"Paris","lat":48.8566140}
	// content: "I'll check both.\n\n{\"name\": \"unknown_tool\", \"arguments\": {}}"
}

// Hermes and Qwen wrap each JSON call in <tool_call>; a reasoning block before it is returned
// apart.
func ExampleParse_hermes() {
	text := `<think>The user wants the weather.</think>
<tool_call>
{"name": "get_weather", "arguments": {"city": "Paris"}}
</tool_call><|im_end|>`
	show(toolparse.Parse(text, toolparse.Options{}))
	// Output:
	// call_1 get_weather {"city":"Paris"}
	// reasoning: "The user wants the weather."
	// content: ""
}

// XML values are text; the tool's parameter schema says which ones are numbers, booleans or
// JSON.
func ExampleParse_xml() {
	text := `<function_calls>
<invoke name="search">
<parameter name="query">a < b</parameter>
<parameter name="limit">10</parameter>
<parameter name="exact">true</parameter>
</invoke>
</function_calls>`
	schema := `{"type": "object", "properties": {"limit": {"type": "integer"}, "exact": {"type": "boolean"}}}`
	show(toolparse.Parse(text, toolparse.Options{
		Schemas: map[string]json.RawMessage{"search": json.RawMessage(schema)},
	}))
	// Output:
	// call_1 search {"query":"a < b","limit":10,"exact":true}
	// content: ""
}

// Mistral's tokenizer forms carry their own call ids.
func ExampleParse_mistral() {
	text := `[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{"city": "Paris"}</s>`
	show(toolparse.Parse(text, toolparse.Options{}))
	// Output:
	// a1b2c3d4e get_weather {"city":"Paris"}
	// content: ""
}

// Llama 3's <|python_tag|> introduces a JSON call or a built-in tool's name.call(...).
func ExampleParse_llama() {
	show(toolparse.Parse(`<|python_tag|>brave_search.call(query="Paris weather")<|eom_id|>`, toolparse.Options{}))
	// Output:
	// call_1 brave_search {"query":"Paris weather"}
	// content: ""
}

// Pythonic call lists take Python literals as keyword arguments.
func ExampleParse_pythonic() {
	text := `[get_weather(city='Paris', days=3), set_alarm(at="07:00", repeat=True, tags=['work'])]`
	show(toolparse.Parse(text, toolparse.Options{}))
	// Output:
	// call_1 get_weather {"city":"Paris","days":3}
	// call_2 set_alarm {"at":"07:00","repeat":true,"tags":["work"]}
	// content: ""
}

// A JSON call in a json or tool_call fence is a call; a fence in another language is prose.
func ExampleParse_fence() {
	text := "Calling it:\n```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n```\n" +
		"Example code:\n```python\nget_weather(city=\"Paris\")\n```"
	show(toolparse.Parse(text, toolparse.Options{}))
	// Output:
	// call_1 get_weather {"city":"Paris"}
	// content: "Calling it:\n\nExample code:\n```python\nget_weather(city=\"Paris\")\n```"
}

// DeepSeek marks calls with its own special tokens.
func ExampleParse_deepseek() {
	text := "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n" +
		"```json\n{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
	show(toolparse.Parse(text, toolparse.Options{}))
	// Output:
	// call_1 get_weather {"city":"Paris"}
	// content: ""
}

// A malformed call after a marker is an error, never repaired, so the model can be told and
// retry; so is a call of an unknown tool.
func ExampleParse_error() {
	opts := toolparse.Options{Tools: []string{"get_weather"}}
	show(toolparse.Parse(`<tool_call>{"name": "get_weather", "arguments": {"city": "Paris",}}</tool_call>`, opts))
	show(toolparse.Parse(`<tool_call>{"name": "delete_all", "arguments": {}}</tool_call>`, opts))
	// Output:
	// error: toolparse: <tool_call> at offset 0: invalid JSON: invalid character '}' looking for beginning of object key string (at offset 66)
	// error: toolparse: <tool_call> at offset 0: unknown tool "delete_all" (allowed: get_weather)
}
