package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// A client's bad line does not end `awf mcp serve`: a line that is not JSON gets -32700, a
// request before initialize gets -32600 with its id, and the session goes on to serve calls.
func TestMCPServeStdioAnswersBadLinesAndGoesOn(t *testing.T) {
	e := newEnv(t)
	e.write("wf.yaml", "name: wf\ntools:\n  - {name: shell, builtin: true, approval: auto}\nsteps:\n  - {name: a, type: shell, command: 'true'}\n")
	cmd := e.cmd(t.Context(), "mcp", "serve", "--workflow", "wf.yaml", "--non-interactive")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func(what string) map[string]any {
		t.Helper()
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("%s: awf mcp serve closed its output\nstderr:\n%s", what, stderr.String())
			}
			var msg map[string]any
			if err := json.Unmarshal([]byte(line), &msg); err != nil {
				t.Fatalf("%s: answer is not JSON: %q", what, line)
			}
			return msg
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no answer\nstderr:\n%s", what, stderr.String())
		}
		return nil
	}
	code := func(msg map[string]any) float64 {
		errObj, _ := msg["error"].(map[string]any)
		c, _ := errObj["code"].(float64)
		return c
	}

	io.WriteString(stdin, "this is not json\n")
	if m := next("a line that is not JSON"); code(m) != -32700 || m["id"] != nil {
		t.Errorf("answer %v, want error -32700 with id null", m)
	}
	io.WriteString(stdin, `[1, 2]`+"\n")
	if m := next("a JSON array"); code(m) != -32600 {
		t.Errorf("answer %v, want error -32600", m)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`+"\n")
	if m := next("tools/list before initialize"); code(m) != -32600 || m["id"] != float64(7) {
		t.Errorf("answer %v, want error -32600 for id 7", m)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`+"\n")
	if m := next("initialize"); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n{broken\n")
	if m := next("a broken line after initialize"); code(m) != -32700 {
		t.Errorf("answer %v, want error -32700", m)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
	m := next("tools/list")
	result, _ := m["result"].(map[string]any)
	if tools, _ := result["tools"].([]any); len(tools) == 0 {
		t.Errorf("tools/list after the bad lines: %v", m)
	}
}

// A client that writes its requests and closes its input (printf ... | awf mcp serve) gets
// every answer, slow calls included, before awf mcp serve exits; a cancelled call is not
// waited for (were it, the test would wait for its sleep 600).
func TestMCPServeStdioAnswersCallsInFlightAtEOF(t *testing.T) {
	e := newEnv(t)
	e.write("wf.yaml", "name: wf\ntools:\n  - {name: shell, builtin: true, approval: auto}\nsteps:\n  - {name: a, type: shell, command: 'true'}\n")
	cmd := e.cmd(t.Context(), "mcp", "serve", "--workflow", "wf.yaml", "--non-interactive")
	cmd.Stdin = strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"shell","arguments":{"command":"sleep 1; echo late answer"}}}`,
		`{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"shell","arguments":{"command":"echo quick answer"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"shell","arguments":{"command":"sleep 600"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}`,
	}, "\n") + "\n")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("awf mcp serve: %v\nstderr:\n%s", err, stderr.String())
	}
	answers := map[string]string{}
	for line := range strings.Lines(string(out)) {
		var msg struct {
			ID     any             `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatalf("answer is not JSON: %q", line)
		}
		answers[fmt.Sprint(msg.ID)] = string(msg.Result)
	}
	for id, want := range map[string]string{"2": "late answer", "three": "quick answer"} {
		if !strings.Contains(answers[id], want) {
			t.Errorf("call %s: answer %q, want it to contain %q\nall output:\n%s", id, answers[id], want, out)
		}
	}
	if answers["4"] != "" {
		t.Errorf("the cancelled call has a result: %s", answers["4"])
	}
}
