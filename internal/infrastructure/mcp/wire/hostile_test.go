package wire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		in   string
		code int    // 0: a message
		kind string // request, notification, response
		id   string // idKey of the message's id, also on errors
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, 0, "request", "1"},
		{`{"jsonrpc":"2.0","id":"a","method":"ping","params":{}}`, 0, "request", `"a"`},
		{`{"jsonrpc":"2.0","id":1.0,"result":{}}`, 0, "response", "1"},
		{`{"jsonrpc":"2.0","id":-3e2,"error":{"code":-1,"message":"x"}}`, 0, "response", "-300"},
		{`{"jsonrpc":"2.0","method":"notifications/initialized","unknown":[1,2]}`, 0, "notification", ""},
		{`{"jsonrpc":"2.0","id":null,"method":"x"}`, 0, "notification", ""},
		{`not json`, CodeParseError, "", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"`, CodeParseError, "", ""},
		{``, CodeParseError, "", ""},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, CodeInvalidRequest, "", ""},
		{`"hello"`, CodeInvalidRequest, "", ""},
		{`42`, CodeInvalidRequest, "", ""},
		{`null`, CodeInvalidRequest, "", ""},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, CodeInvalidRequest, "", ""},
		{`{"jsonrpc":"2.0","id":[1],"method":"ping"}`, CodeInvalidRequest, "", ""},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, CodeInvalidRequest, "", ""},
		{`{"jsonrpc":"1.0","id":1,"method":"ping"}`, CodeInvalidRequest, "", "1"},
		{`{"id":1,"method":"ping"}`, CodeInvalidRequest, "", "1"},
		{`{"jsonrpc":"2.0","id":1,"method":7}`, CodeInvalidRequest, "", "1"},
		{`{"jsonrpc":"2.0","id":1,"method":""}`, CodeInvalidRequest, "", "1"},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}`, CodeInvalidRequest, "", "1"},
		{`{"jsonrpc":"2.0","id":1}`, CodeInvalidRequest, "", "1"},
		{`{"jsonrpc":"2.0"}`, CodeInvalidRequest, "", ""},
		{`{"jsonrpc":"2.0","id":1,"error":"bad"}`, 0, "response", "1"},
	}
	for _, tc := range tests {
		m, err := decode([]byte(tc.in))
		code := 0
		if err != nil {
			code = err.Code
		}
		if code != tc.code {
			t.Errorf("decode(%s) error %v, want code %d", tc.in, err, tc.code)
			continue
		}
		if m != nil && idKey(m.ID) != tc.id {
			t.Errorf("decode(%s) id %q, want %q", tc.in, idKey(m.ID), tc.id)
		}
		if err != nil {
			continue
		}
		kind := map[bool]string{true: "request"}[m.isRequest()] + map[bool]string{true: "notification"}[m.isNotification()] +
			map[bool]string{true: "response"}[m.isResponse()]
		if kind != tc.kind {
			t.Errorf("decode(%s) is a %q, want %q", tc.in, kind, tc.kind)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":"x","result":{}}`,
		`[1]`, `{"id":{}}`, `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"a","arguments":[1]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decode(data)
		if err == nil && m == nil {
			t.Fatal("no message and no error")
		}
		if err == nil && !m.isRequest() && !m.isNotification() && !m.isResponse() {
			t.Fatalf("decode(%q) = %+v: not a request, a notification or a response", data, m)
		}
		if m != nil && hasID(m.ID) && !validID(m.ID) {
			t.Fatalf("decode(%q) kept id %s", data, m.ID)
		}
		// Whatever arrives, the answer is one JSON object.
		ans := encodeResponse(nil, nil, err)
		if err != nil && !json.Valid(ans) {
			t.Fatalf("answer %q is not JSON", ans)
		}
		// A server session answers it without panicking.
		if err == nil && m.isRequest() {
			ss := &session{srv: testServer()}
			ss.handle(context.Background(), m)
		}
	})
}

func testServer() *Server {
	return &Server{Info: Implementation{Name: "t"}, Tools: []*Tool{{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		Call: func(ctx context.Context, req *CallRequest) (*CallToolResult, error) {
			if req.Name == "slow" {
				select {
				case <-ctx.Done():
				case <-time.After(300 * time.Millisecond):
				}
			}
			return &CallToolResult{Content: []Content{TextContent("ok " + req.Name)}}, nil
		}}
}

// serveLines feeds lines to a stdio server session, closes its input and returns its answers
// by id (and those without an id under "null"), failing if it does not end.
func serveLines(t *testing.T, lines ...string) map[string][]map[string]any {
	t.Helper()
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- testServer().ServeStream(context.Background(), strings.NewReader(strings.Join(lines, "\n")), &out)
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ServeStream() = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStream() did not end at the end of its input")
	}
	got := map[string][]map[string]any{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("answer %q is not JSON", sc.Text())
		}
		key := "null"
		if m["id"] != nil {
			key = toJSON(m["id"])
		}
		got[key] = append(got[key], m)
	}
	return got
}

func toJSON(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

func errCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

const initLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`

func TestServeStreamHostileLines(t *testing.T) {
	got := serveLines(t,
		`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, // before initialize
		`{"jsonrpc":"2.0","method":"notifications/x"}`,   // dropped before initialize
		`{"jsonrpc":"2.0","id":8,"method":"ping"}`,       // ping is fine before initialize
		initLine,
		`not json`,
		`[1,2]`,
		`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"s","method":"nope"}`,
		`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"a":1},"extra":true}}`,
		`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"arguments":{}}}`,
		`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":[1]}`,
		`{"jsonrpc":"2.0","id":12,"method":"initialize","params":{"protocolVersion":"1999-01-01"}}`,
		`{"jsonrpc":"2.0","id":13,"method":"tools/list","params":{"cursor":"bogus"}}`,
		`{"jsonrpc":"2.0","id":99,"result":{}}`, // a response to nothing: ignored
		"   ",
		`{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"slow"}}`, // answered after EOF
	)
	want := map[string]float64{"7": CodeInvalidRequest, "8": 0, "0": 0, `"s"`: CodeMethodNotFound, "9": 0,
		"10": CodeInvalidParams, "11": CodeInvalidParams, "12": 0, "13": CodeInvalidParams, "14": 0}
	for id, code := range want {
		if len(got[id]) != 1 || errCode(got[id][0]) != code {
			t.Errorf("answers to id %s = %v, want one with error code %v", id, got[id], code)
		}
	}
	if v := got["12"][0]["result"].(map[string]any)["protocolVersion"]; v != LatestSessionVersion {
		t.Errorf("initialize with an unknown version answered %v, want %s", v, LatestSessionVersion)
	}
	if v := got["0"][0]["result"].(map[string]any)["protocolVersion"]; v != "2025-06-18" {
		t.Errorf("initialize with 2025-06-18 answered %v", v)
	}
	var codes []float64
	for _, m := range got["null"] {
		codes = append(codes, errCode(m))
	}
	if toJSON(codes) != toJSON([]float64{CodeParseError, CodeInvalidRequest, CodeInvalidRequest}) {
		t.Errorf("answers with id null: %v, want a parse error and two invalid requests", got["null"])
	}
	if got["99"] != nil {
		t.Errorf("a response to nothing was answered: %v", got["99"])
	}
}

func TestServeStreamHugeLine(t *testing.T) {
	huge := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", MaxMessage) + `"}}`
	got := serveLines(t, initLine, huge, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if len(got["null"]) != 1 || errCode(got["null"][0]) != CodeParseError {
		t.Errorf("a line over 16 MiB answered %v, want a parse error", got["null"])
	}
	if len(got["2"]) != 1 || got["1"] != nil {
		t.Errorf("answers %v: want the ping after the huge line, nothing for its id", got)
	}
}

// A cancelled call is not answered, and not waited for at the end of the input.
func TestServeStreamCancelled(t *testing.T) {
	srv := testServer()
	srv.Call = func(ctx context.Context, _ *CallRequest) (*CallToolResult, error) {
		<-ctx.Done() // never answers unless cancelled
		return nil, ctx.Err()
	}
	inR, inW := io.Pipe()
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- srv.ServeStream(context.Background(), inR, &out) }()
	io.WriteString(inW, initLine+"\n"+`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"x"}}`+"\n")
	time.Sleep(50 * time.Millisecond)
	io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`+"\n")
	inW.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("ServeStream() waited for a cancelled call")
	}
	if strings.Contains(out.String(), `"id":5`) {
		t.Errorf("the cancelled call was answered: %s", out.String())
	}
}

// A server that sends garbage, answers with ids of odd types or never answers: the client
// neither panics nor hangs.
func TestClientHostileServer(t *testing.T) {
	fromServer, toClient := io.Pipe()
	fromClient, toServer := io.Pipe()
	answers := make(chan *message, 4) // the client's answers to the server's requests
	go func() {
		r := bufio.NewReader(fromClient)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				toClient.Close()
				return
			}
			m, _ := decode(line)
			if m == nil {
				continue
			}
			if m.isResponse() {
				answers <- m
				continue
			}
			switch m.Method {
			case "initialize":
				io.WriteString(toClient, "garbage\n[1,2]\n"+`{"jsonrpc":"2.0","id":{"a":1},"result":{}}`+"\n"+
					`{"jsonrpc":"2.0","id":"`+string(m.ID)+`","result":{}}`+"\n"+ // the id as a string: another id
					`{"jsonrpc":"2.0","id":77,"method":"sampling/createMessage","params":{}}`+"\n"+
					`{"jsonrpc":"2.0","id":"p","method":"ping"}`+"\n"+
					`{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"h","version":"1"}}}`+"\n")
			case "tools/list":
				io.WriteString(toClient, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"tools":"not a list"}}`+"\n")
			case "tools/call":
				// never answers
			}
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	sess, err := Connect(ctx, NewStreamTransport(fromServer, toServer), ClientOptions{})
	if err != nil {
		t.Fatalf("Connect() = %v", err)
	}
	for range 2 {
		select {
		case a := <-answers:
			switch idKey(a.ID) {
			case "77":
				if a.Error == nil || a.Error.Code != CodeMethodNotFound {
					t.Errorf("answer to sampling/createMessage = %+v, want -32601", a)
				}
			case `"p"`:
				if a.Error != nil || string(a.Result) != "{}" {
					t.Errorf("answer to ping = %+v, want an empty result", a)
				}
			default:
				t.Errorf("an answer to no request of the server: %+v", a)
			}
		case <-ctx.Done():
			t.Fatal("the client did not answer the server's requests")
		}
	}
	if _, err := sess.ListTools(ctx); err == nil {
		t.Error("ListTools() of a result of the wrong type succeeded")
	}
	cctx, ccancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer ccancel()
	if _, err := sess.CallTool(cctx, "x", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("CallTool() of a server that never answers = %v", err)
	}
	if err := sess.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
	if _, err := sess.CallTool(ctx, "x", nil); !errors.Is(err, ErrConnectionClosed) {
		t.Errorf("CallTool() after Close = %v, want ErrConnectionClosed", err)
	}
}
