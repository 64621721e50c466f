package mcp

import (
	"encoding/json"
	"testing"
)

func TestInFlightSettlesByIDInAnySpelling(t *testing.T) {
	f := newInFlight()
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call"}`,
		`{"jsonrpc":"2.0","method":"notifications/progress"}`,
		`{"jsonrpc":"2.0","id":null,"method":"x"}`,
	} {
		var msg message
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatal(err)
		}
		f.passed(msg)
	}
	if len(f.ids) != 3 {
		t.Fatalf("in flight %v, want the three requests with ids", f.ids)
	}
	f.answered([]byte(`{"jsonrpc":"2.0","id":1.0,"result":{}}` + "\n"))
	f.answered([]byte(`{"jsonrpc":"2.0","id":"a","error":{"code":1,"message":"x"}}`))
	f.answered([]byte(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)) // a request from the server answers nothing
	if len(f.ids) != 1 {
		t.Fatalf("in flight %v, want only id 7", f.ids)
	}
	var cancel message
	json.Unmarshal([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`), &cancel)
	f.passed(cancel)
	f.wait() // returns: nothing is in flight
}

func TestInFlightWaitEndsWhenStopped(t *testing.T) {
	f := newInFlight()
	f.passed(message{ID: json.RawMessage(`3`), Method: "tools/call"})
	done := make(chan struct{})
	go func() { f.wait(); close(done) }()
	f.stop()
	<-done
}
