package toolparse

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// parseTest is one case of the shared table: TestParse checks it, FuzzParse starts from its text.
type parseTest struct {
	name      string
	text      string
	opts      Options
	calls     []Call
	content   string
	reasoning string
	err       string // a substring of the error; empty when Parse must succeed
}

func call(id, name, args string) Call {
	return Call{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

func tools(names ...string) Options { return Options{Tools: names} }

// withSchemas allows tool and types its XML parameters by schema.
func withSchemas(tool, schema string) Options {
	return Options{Tools: []string{tool}, Schemas: map[string]json.RawMessage{tool: json.RawMessage(schema)}}
}

// claude builds Claude's XML with or without the antml prefix.
func claude(ns, body string) string {
	r := strings.NewReplacer("<invoke", "<"+ns+"invoke", "</invoke>", "</"+ns+"invoke>",
		"<parameter", "<"+ns+"parameter", "</parameter>", "</"+ns+"parameter>")
	return "<" + ns + "function_calls>" + r.Replace(body) + "</" + ns + "function_calls>"
}

const (
	weather     = `{"name": "get_weather", "arguments": {"city": "Paris"}}`
	weatherArgs = `{"city":"Paris"}`
	typedSchema = `{"type":"object","properties":{"n":{"type":"integer"},"x":{"type":"number"},
		"b":{"type":"boolean"},"l":{"type":"array"},"o":{"type":"object"},"s":{"type":"string"},
		"opt":{"type":["integer","null"]},"any":{"anyOf":[{"type":"boolean"},{"type":"string"}]}}}`
)

var parseTests = []parseTest{
	// Plain text.
	{name: "empty", text: ""},
	{name: "prose only", text: "  The weather in Paris is mild.\n", content: "The weather in Paris is mild."},
	{name: "braces in prose", text: "Use {x} and [y] or {} and [].", content: "Use {x} and [y] or {} and []."},
	{name: "non-call JSON stays prose", text: `Result: {"a": [1, 2], "b": {"c": null}} ok`,
		content: `Result: {"a": [1, 2], "b": {"c": null}} ok`},

	// OpenAI-style JSON.
	{name: "json flat", text: weather, calls: []Call{call("call_1", "get_weather", weatherArgs)}},
	{name: "json parameters", text: `{"name": "get_weather", "parameters": {"city": "Paris"}}`,
		calls: []Call{call("call_1", "get_weather", weatherArgs)}},
	{name: "json key order", text: `{"arguments": {"city": "Paris"}, "name": "get_weather"}`,
		calls: []Call{call("call_1", "get_weather", weatherArgs)}},
	{name: "json whitespace compacted", text: "{\n  \"name\" : \"get_weather\",\n  \"arguments\" : {\n    \"city\" : \"Paris\"\n  }\n}",
		calls: []Call{call("call_1", "get_weather", weatherArgs)}},
	{name: "json arguments string", text: `{"name": "get_weather", "arguments": "{\"city\": \"Paris\", \"days\": 3}"}`,
		calls: []Call{call("call_1", "get_weather", `{"city":"Paris","days":3}`)}},
	{name: "json numbers exact", text: `{"name": "calc", "arguments": {"a": 12345678901234567890, "b": 1e400, "c": 0.10, "d": -0}}`,
		calls: []Call{call("call_1", "calc", `{"a":12345678901234567890,"b":1e400,"c":0.10,"d":-0}`)}},
	{name: "json string escapes kept", text: `{"name": "echo", "arguments": {"s": "<b>&amp;</b> \u00e9 é \n"}}`,
		calls: []Call{call("call_1", "echo", `{"s":"<b>&amp;</b> \u00e9 é \n"}`)}},
	{name: "json array of calls", text: `[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"x": 1}}]`,
		calls: []Call{call("call_1", "a", `{}`), call("call_2", "b", `{"x":1}`)}},
	{name: "json one per line", text: "{\"name\": \"a\", \"arguments\": {}}\n{\"name\": \"b\", \"arguments\": {}}\n",
		calls: []Call{call("call_1", "a", `{}`), call("call_2", "b", `{}`)}},
	{name: "json semicolon separated", text: `{"name": "a", "arguments": {}}; {"name": "b", "arguments": {}}`,
		calls: []Call{call("call_1", "a", `{}`), call("call_2", "b", `{}`)}},
	{name: "json comma separated", text: `{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}`,
		calls: []Call{call("call_1", "a", `{}`), call("call_2", "b", `{}`)}},
	{name: "tool_calls envelope", text: `{"tool_calls": [{"id": "call_abc", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]}`,
		calls: []Call{call("call_abc", "get_weather", weatherArgs)}},
	{name: "tool_calls envelope flat entries", text: `{"tool_calls": [{"name": "a", "arguments": {"x": 1}}, {"id": "c2", "name": "b", "parameters": {}}]}`,
		calls: []Call{call("call_1", "a", `{"x":1}`), call("c2", "b", `{}`)}},
	{name: "assistant message envelope", text: `{"role": "assistant", "content": null, "tool_calls": [{"type": "function", "function": {"name": "a", "arguments": "{}"}}]}`,
		calls: []Call{call("call_1", "a", `{}`)}},
	{name: "function_call envelope", text: `{"function_call": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}`,
		calls: []Call{call("call_1", "get_weather", weatherArgs)}},
	{name: "typed function object", text: `{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}`,
		calls: []Call{call("call_1", "get_weather", weatherArgs)}},
	{name: "llama typed flat", text: `{"type": "function", "name": "get_weather", "parameters": {"city": "Paris"}}<|eot_id|>`,
		calls: []Call{call("call_1", "get_weather", weatherArgs)}},
	{name: "json with prose around", text: "Let me check.\n" + weather + "\nOne moment.",
		calls: []Call{call("call_1", "get_weather", weatherArgs)}, content: "Let me check.\n\nOne moment."},
	{name: "json inline in a sentence", text: "Calling " + weather + " now.", opts: tools("get_weather"),
		calls: []Call{call("call_1", "get_weather", weatherArgs)}, content: "Calling  now."},
	{name: "json call inside unclosed JSON", text: `{"a": ` + weather, calls: []Call{call("call_1", "get_weather", weatherArgs)},
		content: `{"a":`},
	{name: "json call inside deeply nested broken JSON", text: strings.Repeat(`[{"a": `, 3000) + weather,
		calls: []Call{call("call_1", "get_weather", weatherArgs)}, content: strings.TrimSpace(strings.Repeat(`[{"a": `, 3000))},
	{name: "json nested call is data", text: `{"result": {"name": "get_weather", "arguments": {}}}`,
		content: `{"result": {"name": "get_weather", "arguments": {}}}`},

	// Policy 2: unmarked calls need allowed names; markers make unknown names errors.
	{name: "unmarked unknown tool is prose", text: `{"name": "rm_rf", "arguments": {}}`, opts: tools("get_weather"),
		content: `{"name": "rm_rf", "arguments": {}}`},
	{name: "unmarked data with a name is prose", text: `{"name": "Alice", "age": 30}`,
		content: `{"name": "Alice", "age": 30}`},
	{name: "unmarked array partly unknown is prose", text: `[{"name": "get_weather", "arguments": {}}, {"name": "x", "arguments": {}}]`,
		opts: tools("get_weather"), content: `[{"name": "get_weather", "arguments": {}}, {"name": "x", "arguments": {}}]`},
	{name: "unmarked missing arguments is prose", text: `Say {"name": "get_weather"} then.`, opts: tools("get_weather"),
		content: `Say {"name": "get_weather"} then.`},
	{name: "unmarked pythonic unknown is prose", text: `[search(q="x")]`, opts: tools("get_weather"), content: `[search(q="x")]`},
	{name: "marker unknown tool", text: `<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>`,
		opts: tools("get_weather"), err: `unknown tool "rm_rf" (allowed: get_weather)`},
	{name: "marker allowed tool", text: `<tool_call>` + weather + `</tool_call>`, opts: tools("get_weather", "x"),
		calls: []Call{call("call_1", "get_weather", weatherArgs)}},
	{name: "any name when no tools", text: `[{"name": "anything", "arguments": {"k": true}}]`,
		calls: []Call{call("call_1", "anything", `{"k":true}`)}},

	// Policy 3: no silent repair.
	{name: "start truncated", text: `{"name": "get_weather", "arguments": {"city": "Par`, opts: tools("get_weather"),
		err: "JSON call at offset 0: truncated JSON"},
	{name: "start trailing comma", text: `{"name": "get_weather", "arguments": {"city": "Paris",}}`, opts: tools("get_weather"),
		err: "invalid JSON"},
	{name: "start single quotes", text: `{'name': 'get_weather', 'arguments': {'city': 'Paris'}}`, opts: tools("get_weather"),
		err: "invalid JSON"},
	{name: "start NaN", text: `{"name": "calc", "arguments": {"x": NaN}}`, err: "invalid JSON"},
	{name: "start arguments not object", text: `{"name": "get_weather", "arguments": ["Paris"]}`, opts: tools("get_weather"),
		err: "arguments are not a JSON object"},
	{name: "start arguments string not JSON", text: `{"name": "get_weather", "arguments": "Paris"}`, opts: tools("get_weather"),
		err: "arguments string is not valid JSON"},
	{name: "start arguments string not object", text: `{"name": "get_weather", "arguments": "[1]"}`, opts: tools("get_weather"),
		err: "arguments are not a JSON object"},
	{name: "start after whitespace and reasoning", text: "<think>hm</think>\n\n" + `{"name": "get_weather", "arguments": {`,
		opts: tools("get_weather"), err: "truncated JSON"},
	{name: "start unknown tool broken is prose", text: `{"name": "other", "arguments": {`, opts: tools("get_weather"),
		content: `{"name": "other", "arguments": {`},
	{name: "broken call mid prose is prose", text: `Example: {"name": "get_weather", "arguments": {"city": 'Paris'}} done`,
		opts: tools("get_weather"), content: `Example: {"name": "get_weather", "arguments": {"city": 'Paris'}} done`},
	{name: "broken call after a call", text: weather + "\n" + `{"name": "get_weather", "arguments": {"city": "Paris",}}`,
		opts: tools("get_weather"), err: "JSON call at offset 56: invalid JSON"},
	{name: "one bad call fails all", text: `<tool_call>` + weather + `</tool_call><tool_call>{"name": "get_weather", "arguments": {]}</tool_call>`,
		err: "<tool_call> at offset 78: invalid JSON"},
	{name: "marker missing name", text: `<tool_call>{"arguments": {}}</tool_call>`, err: "missing tool name"},
	{name: "marker empty name", text: `<tool_call>{"name": "", "arguments": {}}</tool_call>`, err: "missing tool name"},
	{name: "marker name not string", text: `<tool_call>{"name": 3, "arguments": {}}</tool_call>`, err: `"name" is not a string`},
	{name: "marker arguments and parameters", text: `<tool_call>{"name": "a", "arguments": {}, "parameters": {}}</tool_call>`,
		err: `both "arguments" and "parameters"`},
	{name: "marker unexpected key", text: `<tool_call>{"name": "a", "city": "Paris"}</tool_call>`, err: `unexpected key "city"`},
	{name: "marker duplicate key", text: `<tool_call>{"name": "a", "name": "b"}</tool_call>`, err: `duplicate key "name"`},
	{name: "marker wrong type", text: `<tool_call>{"type": "tool", "name": "a"}</tool_call>`, err: `"type" is "tool"`},
	{name: "marker null arguments", text: `<tool_call>{"name": "a", "arguments": null}</tool_call>`, err: "not a JSON object"},
	{name: "marker empty array", text: `<tool_call>[]</tool_call>`, err: "empty list of calls"},
	{name: "marker not a call", text: `<tool_call>"get_weather"</tool_call>`, err: "expected a JSON call"},
	{name: "envelope with content", text: `<function_call>{"content": "hi", "function_call": {"name": "a"}}</function_call>`,
		err: "envelope with content"},

	// Policy 4: lenient where it is safe.
	{name: "hermes missing close at end", text: "<tool_call>\n" + weather + "\n",
		calls: []Call{call("call_1", "get_weather", weatherArgs)}},
	{name: "hermes missing close before end token", text: "<tool_call>" + weather + "<|im_end|>",
		calls: []Call{call("call_1", "get_weather", weatherArgs)}},
	{name: "hermes missing close before text", text: "<tool_call>" + weather + "\nDone.",
		err: `unexpected "Done." before </tool_call>`},
	{name: "hermes missing arguments", text: `<tool_call>{"name": "get_time"}</tool_call>`,
		calls: []Call{call("call_1", "get_time", `{}`)}},

	// Hermes and relatives.
	{name: "hermes", text: "<tool_call>\n" + weather + "\n</tool_call>", calls: []Call{call("call_1", "get_weather", weatherArgs)}},
	{name: "hermes with prose and end token", text: "I'll look.\n<tool_call>\n" + weather + "\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"tz\": \"CET\"}}\n</tool_call><|im_end|>",
		calls: []Call{call("call_1", "get_weather", weatherArgs), call("call_2", "get_time", `{"tz":"CET"}`)}, content: "I'll look."},
	{name: "hermes two calls in one tag", text: "<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n{\"name\": \"b\", \"arguments\": {}}\n</tool_call>",
		calls: []Call{call("call_1", "a", `{}`), call("call_2", "b", `{}`)}},
	{name: "hermes closing tag inside a string", text: `<tool_call>{"name": "write", "arguments": {"text": "</tool_call>"}}</tool_call>`,
		calls: []Call{call("call_1", "write", `{"text":"</tool_call>"}`)}},
	{name: "hermes invalid JSON offset", text: `Hi. <tool_call>{"name": "a", "arguments": {"x": 1,}}</tool_call>`,
		err: "toolparse: <tool_call> at offset 4: invalid JSON"},
	{name: "hermes truncated", text: `<tool_call>{"name": "a", "arguments": {"x": `, err: "truncated JSON"},
	{name: "hermes fenced JSON is not repaired", text: "<tool_call>\n```json\n" + weather + "\n```\n</tool_call>",
		err: "expected a JSON call, <function=...> or a tool name"},
	{name: "marker in prose is a malformed call", text: "I wrap calls in a <tool_call> tag.", err: "<tool_call> at offset 18"},
	{name: "hermes empty", text: `<tool_call></tool_call>`, err: "expected a JSON call"},
	{name: "llama function equals", text: `<function=get_weather>{"city": "Paris"}</function><|eom_id|>`,
		calls: []Call{call("call_1", "get_weather", weatherArgs)}},
	{name: "function name attribute", text: `<function name="get_weather">{"city": "Paris"}</function>`,
		calls: []Call{call("call_1", "get_weather", weatherArgs)}},
	{name: "function equals bad JSON", text: `<function=get_weather>{"city": Paris}</function>`, err: "<function> at offset 0: invalid JSON"},
	{name: "function equals unclosed", text: `<function=get_weather>{"city": "Paris"} and more`, err: "before </function>"},
	{name: "function_call tag", text: `<function_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</function_call>`,
		calls: []Call{call("call_1", "get_weather", weatherArgs)}},

	// Qwen3-Coder, GLM.
	{name: "qwen3 coder", text: "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
		calls: []Call{call("call_1", "get_weather", `{"city":"Paris","days":"3"}`)}},
	{name: "qwen3 coder typed", text: "<tool_call><function=t><parameter=n>3</parameter><parameter=s>3</parameter></function></tool_call>",
		opts: withSchemas("t", typedSchema), calls: []Call{call("call_1", "t", `{"n":3,"s":"3"}`)}},
	{name: "qwen3 coder no parameters", text: "<tool_call>\n<function=get_time>\n</function>\n</tool_call>",
		calls: []Call{call("call_1", "get_time", `{}`)}},
	{name: "qwen3 coder bare function", text: "Sure.\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>",
		calls: []Call{call("call_1", "get_weather", weatherArgs)}, content: "Sure."},
	{name: "qwen3 coder missing parameter close", text: "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</function>\n</tool_call>",
		err: "<parameter=city>: missing </parameter>"},
	{name: "qwen3 coder missing function close", text: "<tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n</tool_call>",
		err: `unexpected "</tool_call>" in <function=...>`},
	{name: "glm", text: "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>",
		calls: []Call{call("call_1", "get_weather", `{"city":"Paris","days":"3"}`)}},
	{name: "glm typed", text: "<tool_call>t\n<arg_key>n</arg_key>\n<arg_value>-12</arg_value>\n<arg_key>l</arg_key>\n<arg_value>[1, 2.50]</arg_value>\n</tool_call>",
		opts: withSchemas("t", typedSchema), calls: []Call{call("call_1", "t", `{"n":-12,"l":[1,2.50]}`)}},
	{name: "glm no arguments", text: "<tool_call>get_time</tool_call>", calls: []Call{call("call_1", "get_time", `{}`)}},
	{name: "glm json arguments", text: "<tool_call>get_weather\n{\"city\": \"Paris\"}\n</tool_call>",
		calls: []Call{call("call_1", "get_weather", weatherArgs)}},
	{name: "glm missing close", text: "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>",
		err: "missing </tool_call>"},
	{name: "glm key without value", text: "<tool_call>get_weather\n<arg_key>city</arg_key>\n</tool_call>",
		err: "<arg_key>city</arg_key> without <arg_value>"},
	{name: "glm not a name", text: "<tool_call>call get_weather please</tool_call>", err: "expected a JSON call, <function=...> or a tool name"},

	// Claude and MiniMax XML.
	{name: "claude", text: "Checking.\n" + claude("", "\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n<parameter name=\"days\">3</parameter>\n</invoke>\n"),
		calls: []Call{call("call_1", "get_weather", `{"city":"Paris","days":"3"}`)}, content: "Checking."},
	{name: "claude antml prefix", text: claude(antml, "\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n</invoke>\n"),
		calls: []Call{call("call_1", "get_weather", weatherArgs)}},
	{name: "claude two invokes", text: claude("", `<invoke name="a"></invoke><invoke name='b'><parameter name="x">1</parameter></invoke>`),
		calls: []Call{call("call_1", "a", `{}`), call("call_2", "b", `{"x":"1"}`)}},
	{name: "claude raw values", text: claude("", "<invoke name=\"write\"><parameter name=\"html\">\n  <p>a &lt; b & \"c\"</p>\n</parameter></invoke>"),
		calls: []Call{call("call_1", "write", `{"html":"<p>a &lt; b & \"c\"</p>"}`)}},
	{name: "claude typed by schema", text: claude("", `<invoke name="t"><parameter name="n">42</parameter><parameter name="x">-1.5e3</parameter>`+
		`<parameter name="b">true</parameter><parameter name="l">["a", 1]</parameter><parameter name="o">{"k": {"j": null}}</parameter>`+
		`<parameter name="s">42</parameter><parameter name="opt">null</parameter><parameter name="any">maybe</parameter>`+
		`<parameter name="other">7</parameter></invoke>`),
		opts: withSchemas("t", typedSchema), calls: []Call{call("call_1", "t", `{"n":42,"x":-1.5e3,"b":true,"l":["a",1],"o":{"k":{"j":null}},"s":"42","opt":null,"any":"maybe","other":"7"}`)}},
	{name: "claude big integer exact", text: claude("", `<invoke name="t"><parameter name="n">12345678901234567890123</parameter></invoke>`),
		opts: withSchemas("t", typedSchema), calls: []Call{call("call_1", "t", `{"n":12345678901234567890123}`)}},
	{name: "claude integer type mismatch", text: claude("", `<invoke name="t"><parameter name="n">4.5</parameter></invoke>`),
		opts: withSchemas("t", typedSchema), err: `tool "t" parameter "n": value "4.5" is not of type integer`},
	{name: "claude boolean type mismatch", text: claude("", `<invoke name="t"><parameter name="b">True</parameter></invoke>`),
		opts: withSchemas("t", typedSchema), err: `value "True" is not of type boolean`},
	{name: "claude object type mismatch", text: claude("", `<invoke name="t"><parameter name="o">[1]</parameter></invoke>`),
		opts: withSchemas("t", typedSchema), err: "is not of type object"},
	{name: "claude bad schema", text: claude("", `<invoke name="t"><parameter name="n">1</parameter></invoke>`),
		opts: withSchemas("t", `{"properties": 3}`), err: `schema of tool "t"`},
	{name: "claude unclosed", text: "<function_calls>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n",
		err: `unclosed <invoke name="get_weather">`},
	{name: "claude unclosed parameter", text: "<function_calls><invoke name=\"a\"><parameter name=\"city\">Paris",
		err: `unclosed <parameter name="city">`},
	{name: "claude missing block close", text: "<function_calls><invoke name=\"a\"></invoke>", err: "missing </function_calls>"},
	{name: "claude unknown tool", text: claude("", `<invoke name="rm"></invoke>`), opts: tools("get_weather"), err: `unknown tool "rm"`},
	{name: "claude text in block", text: claude("", `Now: <invoke name="a"></invoke>`), err: `unexpected "Now:`},
	{name: "claude empty block", text: claude("", ""), err: "no <invoke> in the block"},
	{name: "claude duplicate parameter", text: claude("", `<invoke name="a"><parameter name="x">1</parameter><parameter name="x">2</parameter></invoke>`),
		err: `duplicate parameter "x"`},
	{name: "claude missing name attribute", text: claude("", `<invoke tool="a"></invoke>`), err: `expected a name="..." attribute`},
	{name: "claude mismatched prefix", text: "<function_calls><" + antml + "invoke name=\"a\"></invoke></function_calls>",
		err: `unexpected "</invoke></function_call"... in <invoke name="a">`},
	{name: "minimax", text: "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n</invoke>\n</minimax:tool_call>",
		calls: []Call{call("call_1", "get_weather", weatherArgs)}},

	// DeepSeek.
	{name: "deepseek v3", text: "Sure.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>",
		calls: []Call{call("call_1", "get_weather", weatherArgs), call("call_2", "get_time", `{}`)}, content: "Sure."},
	{name: "deepseek v3.1", text: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Paris\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
		calls: []Call{call("call_1", "get_weather", weatherArgs)}},
	{name: "deepseek tool named function", text: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>{\"x\": 1}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
		calls: []Call{call("call_1", "function", `{"x":1}`)}},
	{name: "deepseek single call", text: "<｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Paris\"}<｜tool▁call▁end｜>",
		calls: []Call{call("call_1", "get_weather", weatherArgs)}},
	{name: "deepseek missing calls end at end", text: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Paris\"}<｜tool▁call▁end｜>",
		calls: []Call{call("call_1", "get_weather", weatherArgs)}},
	{name: "deepseek missing call end", text: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Paris\"}",
		err: "missing <｜tool▁call▁end｜>"},
	{name: "deepseek bad JSON", text: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": Paris}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
		err: `DeepSeek tool calls at offset 0: tool "get_weather": invalid JSON`},
	{name: "deepseek unknown tool", text: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>rm<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
		opts: tools("get_weather"), err: `unknown tool "rm"`},
	{name: "deepseek empty block", text: "<｜tool▁calls▁begin｜><｜tool▁calls▁end｜>", err: "no call in the block"},

	// Mistral.
	{name: "mistral array", text: `[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "abc123def"}]</s>`,
		calls: []Call{call("abc123def", "get_weather", weatherArgs)}},
	{name: "mistral name json", text: `[TOOL_CALLS]get_weather{"city": "Paris"}`,
		calls: []Call{call("call_1", "get_weather", weatherArgs)}},
	{name: "mistral args", text: `[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}</s>`,
		calls: []Call{call("call_1", "get_weather", weatherArgs)}},
	{name: "mistral call id", text: `[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{"city": "Paris"}`,
		calls: []Call{call("a1b2c3d4e", "get_weather", weatherArgs)}},
	{name: "mistral chained", text: `[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}get_time[ARGS]{}`,
		calls: []Call{call("call_1", "get_weather", weatherArgs), call("call_2", "get_time", `{}`)}},
	{name: "mistral repeated marker", text: "Checking.[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}\n[TOOL_CALLS]get_time[ARGS]{} Done.",
		calls: []Call{call("call_1", "get_weather", weatherArgs), call("call_2", "get_time", `{}`)}, content: "Checking. Done."},
	{name: "mistral truncated", text: `[TOOL_CALLS]get_weather[ARGS]{"city": "Pa`, err: `[TOOL_CALLS] at offset 0: tool "get_weather": truncated JSON`},
	{name: "mistral nothing", text: `[TOOL_CALLS]`, err: "expected a tool name, found the end of the output"},
	{name: "mistral no arguments", text: `[TOOL_CALLS]get_weather[ARGS]`, err: "expected a JSON object of arguments"},
	{name: "mistral unknown tool", text: `[TOOL_CALLS]rm[ARGS]{}`, opts: tools("get_weather"), err: `unknown tool "rm"`},
	{name: "mistral arguments not object", text: `[TOOL_CALLS]get_weather[ARGS]["Paris"]`, err: "expected a JSON object of arguments"},

	// Llama 3.
	{name: "llama python_tag json", text: `<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}<|eom_id|>`,
		calls: []Call{call("call_1", "get_weather", weatherArgs)}},
	{name: "llama python_tag builtin", text: `<|python_tag|>brave_search.call(query="weather in Paris")<|eom_id|>`,
		calls: []Call{call("call_1", "brave_search", `{"query":"weather in Paris"}`)}},
	{name: "llama python_tag semicolons", text: `<|python_tag|>{"name": "a", "parameters": {}}; {"name": "b", "parameters": {"x": 1}}`,
		calls: []Call{call("call_1", "a", `{}`), call("call_2", "b", `{"x":1}`)}},
	{name: "llama python_tag then prose", text: "<|python_tag|>{\"name\": \"a\", \"parameters\": {}}\nDone.",
		calls: []Call{call("call_1", "a", `{}`)}, content: "Done."},
	{name: "llama python_tag code is an error", text: "<|python_tag|>import math\nprint(math.pi)", err: "<|python_tag|> at offset 0"},
	{name: "llama python_tag empty", text: "<|python_tag|>", err: "missing call"},
	{name: "llama plain json", text: `{"name": "get_weather", "parameters": {"city": "Paris"}}<|eot_id|>`, opts: tools("get_weather"),
		calls: []Call{call("call_1", "get_weather", weatherArgs)}},

	// Pythonic.
	{name: "pythonic list", text: `[get_weather(city="Paris"), get_time(tz='CET')]`,
		calls: []Call{call("call_1", "get_weather", weatherArgs), call("call_2", "get_time", `{"tz":"CET"}`)}},
	{name: "pythonic literals", text: `[f(s='it\'s "q"\n\t\x41\u00e9\101', t="""a"b""", i=-42, big=123456789012345678901, x=1.50, y=.5, z=5., e=1e-3, ` +
		`yes=True, no=False, none=None, l=[1, 'a', [None]], d={'k': {"n": -0.0}, 'e': []}, empty={},)]`,
		calls: []Call{call("call_1", "f", `{"s":"it's \"q\"\n\tAéA","t":"a\"b","i":-42,"big":123456789012345678901,"x":1.50,"y":0.5,"z":5.0,"e":1e-3,`+
			`"yes":true,"no":false,"none":null,"l":[1,"a",[null]],"d":{"k":{"n":-0.0},"e":[]},"empty":{}}`)}},
	{name: "pythonic no arguments", text: `[get_time()]`, calls: []Call{call("call_1", "get_time", `{}`)}},
	{name: "pythonic html kept", text: `[write(html="<b>&</b>")]`, calls: []Call{call("call_1", "write", `{"html":"<b>&</b>"}`)}},
	{name: "pythonic prose around", text: "I will call [get_weather(city='Paris')] now.", opts: tools("get_weather"),
		calls: []Call{call("call_1", "get_weather", weatherArgs)}, content: "I will call  now."},
	{name: "pythonic positional at start", text: `[get_weather("Paris")]`, opts: tools("get_weather"), err: "positional argument"},
	{name: "pythonic expression at start", text: `[get_weather(city=city_name)]`, err: "expected a Python literal"},
	{name: "pythonic truncated at start", text: `[get_weather(city="Par`, err: "unterminated string"},
	{name: "pythonic positional mid prose", text: "The code [len(x)] counts.", content: "The code [len(x)] counts."},
	{name: "pythonic markdown link", text: "See [docs](https://x.y/z) and [a] b.", content: "See [docs](https://x.y/z) and [a] b."},
	{name: "pythonic duplicate argument", text: `[f(a=1, a=2)]`, err: `duplicate argument "a"`},
	{name: "pythonic leading zero", text: `[f(a=007)]`, err: "leading zeros"},
	{name: "pythonic hex", text: `[f(a=0x1f)]`, err: "unsupported number literal"},
	{name: "llama4 python_start", text: "<|python_start|>[get_weather(city=\"Paris\")]<|python_end|>",
		calls: []Call{call("call_1", "get_weather", weatherArgs)}},
	{name: "python_start bare calls", text: "<|python_start|>get_weather(city=\"Paris\"), get_time()<|python_end|>",
		calls: []Call{call("call_1", "get_weather", weatherArgs), call("call_2", "get_time", `{}`)}},
	{name: "lfm2 tool_call_start", text: "<|tool_call_start|>[get_weather(city=\"Paris\")]<|tool_call_end|>Checking.",
		calls: []Call{call("call_1", "get_weather", weatherArgs)}, content: "Checking."},
	{name: "tool_call_start unknown", text: "<|tool_call_start|>[rm(path='/')]<|tool_call_end|>", opts: tools("get_weather"),
		err: `unknown tool "rm"`},
	{name: "tool_call_start positional", text: "<|tool_call_start|>[get_weather('Paris')]<|tool_call_end|>", err: "positional argument"},
	{name: "tool_call_start text before close", text: "<|tool_call_start|>[get_time()] oops<|tool_call_end|>",
		err: `unexpected "oops<|tool_call_end|>" before <|tool_call_end|>`},

	// Fences.
	{name: "fence json", text: "Here:\n```json\n" + weather + "\n```\nDone.", opts: tools("get_weather"),
		calls: []Call{call("call_1", "get_weather", weatherArgs)}, content: "Here:\n\nDone."},
	{name: "fence tool_call", text: "```tool_call\n" + weather + "\n```", calls: []Call{call("call_1", "get_weather", weatherArgs)}},
	{name: "fence tool_call unknown", text: "```tool_call\n" + weather + "\n```", opts: tools("x"), err: "```tool_call block at offset 0: unknown tool"},
	{name: "fence tool_call trailing text", text: "```tool_call\n" + weather + "\nthanks\n```", err: `unexpected "thanks\n" after the calls`},
	{name: "fence unlabelled", text: "```\n" + weather + "\n```", calls: []Call{call("call_1", "get_weather", weatherArgs)}},
	{name: "fence tilde", text: "~~~json\n" + weather + "\n~~~", calls: []Call{call("call_1", "get_weather", weatherArgs)}},
	{name: "fence two calls", text: "```json\n[" + weather + ",\n" + weather + "]\n```",
		calls: []Call{call("call_1", "get_weather", weatherArgs), call("call_2", "get_weather", weatherArgs)}},
	{name: "fence python is prose", text: "```python\n" + weather + "\n```", content: "```python\n" + weather + "\n```"},
	{name: "fence yaml with marker is prose", text: "```yaml\n<tool_call>" + weather + "</tool_call>\n```",
		content: "```yaml\n<tool_call>" + weather + "</tool_call>\n```"},
	{name: "fence json data is prose", text: "```json\n{\"a\": 1}\n```", content: "```json\n{\"a\": 1}\n```"},
	{name: "fence json unknown tool is prose", text: "```json\n" + weather + "\n```", opts: tools("x"), content: "```json\n" + weather + "\n```"},
	{name: "fence json broken at start", text: "```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\",}}\n```",
		opts: tools("get_weather"), err: "```json block at offset 0: invalid JSON"},
	{name: "fence json broken mid prose", text: "Example:\n```json\n{\"name\": \"get_weather\", \"arguments\": {,}}\n```",
		opts: tools("get_weather"), content: "Example:\n```json\n{\"name\": \"get_weather\", \"arguments\": {,}}\n```"},
	{name: "fence json value runs past fence", text: "Text\n```json\n{\"name\": \"a\", \"arguments\": {\"x\": \"\n```\n\"}}",
		content: "Text\n```json\n{\"name\": \"a\", \"arguments\": {\"x\": \"\n```\n\"}}"},
	{name: "inline code json", text: "Write `" + weather + "` to call it.", content: "Write `" + weather + "` to call it."},
	{name: "inline code marker", text: "The ``<tool_call>`` tag wraps calls.", content: "The ``<tool_call>`` tag wraps calls."},

	// Policy 5: reasoning.
	{name: "think then call", text: "<think>\nThe user wants weather.\n</think>\n\n<tool_call>\n" + weather + "\n</tool_call>",
		calls: []Call{call("call_1", "get_weather", weatherArgs)}, reasoning: "The user wants weather."},
	{name: "mistral think", text: "[THINK]Need the weather.[/THINK][TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}",
		calls: []Call{call("call_1", "get_weather", weatherArgs)}, reasoning: "Need the weather."},
	{name: "call inside think is not a call", text: "<think>maybe <tool_call>" + weather + "</tool_call></think>It is sunny.",
		reasoning: "maybe <tool_call>" + weather + "</tool_call>", content: "It is sunny."},
	{name: "unclosed think", text: "<think>still thinking " + weather, reasoning: "still thinking " + weather},
	{name: "think not leading", text: "Hello <think>x</think>", content: "Hello <think>x</think>"},

	// Policy 1: content, separators, end tokens.
	{name: "separators belong to calls", text: "A\n" + `{"name": "a", "arguments": {}} ;, {"name": "b", "arguments": {}}` + "\nB",
		calls: []Call{call("call_1", "a", `{}`), call("call_2", "b", `{}`)}, content: "A\n\nB"},
	{name: "text between calls kept", text: `<tool_call>{"name": "a"}</tool_call> and then <tool_call>{"name": "b"}</tool_call>`,
		calls: []Call{call("call_1", "a", `{}`), call("call_2", "b", `{}`)}, content: "and then"},
	{name: "end tokens dropped", text: "Hello.<|eot_id|>\n<|im_end|></s>", content: "Hello."},

	// Ids.
	{name: "ids generated around given ones", text: `[{"name": "a", "arguments": {}}, {"id": "call_2", "name": "b", "arguments": {}}, {"name": "c", "arguments": {}}]`,
		calls: []Call{call("call_1", "a", `{}`), call("call_2", "b", `{}`), call("call_3", "c", `{}`)}},
	{name: "ids avoid collisions", text: `[{"id": "call_2", "name": "a", "arguments": {}}, {"name": "b", "arguments": {}}]`,
		calls: []Call{call("call_2", "a", `{}`), call("call_3", "b", `{}`)}},
}

func TestParse(t *testing.T) {
	for _, tc := range parseTests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.text, tc.opts)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Parse(%q) error = %v, want it to contain %q", tc.text, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q) error = %v", tc.text, err)
			}
			want := Result{Calls: tc.calls, Content: tc.content, Reasoning: tc.reasoning}
			if diff := cmp.Diff(want, got, cmp.Comparer(sameJSONText)); diff != "" {
				t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tc.text, diff)
			}
		})
	}
}

// sameJSONText compares arguments as text, so a reordered key or a changed number fails.
func sameJSONText(a, b json.RawMessage) bool { return string(a) == string(b) }

func TestParseNeverReturnsPartialResultOnError(t *testing.T) {
	got, err := Parse("Text. "+`<tool_call>`+weather+`</tool_call><tool_call>{</tool_call>`, Options{})
	if err == nil {
		t.Fatal("Parse succeeded, want an error")
	}
	if diff := cmp.Diff(Result{}, got); diff != "" {
		t.Errorf("Parse returned a partial result on error (-want +got):\n%s", diff)
	}
}

func TestParseErrorFormat(t *testing.T) {
	_, err := Parse(`ok <tool_call>{"name": "a", "arguments": {"x": 1,}}</tool_call>`, Options{})
	const want = `toolparse: <tool_call> at offset 3: invalid JSON: invalid character '}' looking for beginning of object key string (at offset 50)`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

// TestParseTruncated cuts each good case at every byte: the output a model stopped early
// must give an error or calls that the full output also gives, never a call with partial
// arguments.
func TestParseTruncated(t *testing.T) {
	for _, tc := range parseTests {
		if tc.err != "" || len(tc.calls) == 0 || len(tc.text) > 1000 {
			continue
		}
		full, err := Parse(tc.text, tc.opts)
		if err != nil {
			t.Fatalf("%s: Parse(%q) error = %v", tc.name, tc.text, err)
		}
		for n := range len(tc.text) {
			got, err := Parse(tc.text[:n], tc.opts)
			if err != nil || len(got.Calls) == 0 {
				continue
			}
			if len(got.Calls) > len(full.Calls) || !cmp.Equal(got.Calls, full.Calls[:len(got.Calls)], cmp.Comparer(sameJSONText)) {
				t.Errorf("%s: Parse(%q) calls = %s, want a prefix of %s", tc.name, tc.text[:n], showCalls(got.Calls), showCalls(full.Calls))
			}
		}
	}
}

func showCalls(calls []Call) string {
	var b strings.Builder
	for _, c := range calls {
		b.WriteString(c.ID + " " + c.Name + string(c.Arguments) + "; ")
	}
	return b.String()
}
