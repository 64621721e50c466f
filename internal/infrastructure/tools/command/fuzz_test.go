package command_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/ports/portstest"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/infrastructure/tools/command"
)

// FuzzWrappedArgv states the property of wrapped tools: whatever the values, the script the
// process runner gets parses, runs exactly one external program, and hands it exactly the
// template's words with each value as one argument, verbatim.
func FuzzWrappedArgv(f *testing.F) {
	for _, h := range hostile {
		f.Add(h.value, "b")
	}
	f.Add("", "")
	f.Add("\x00", "x")
	f.Add("'\"'\"'", "$((1+1))")
	rec := &portstest.ProcessRecorder{}
	params := append([]tool.Param{{Name: "flag", Type: "string", Required: true}}, arguments...)
	w, err := command.NewWrapped(tool.WrapSpec{Name: "w", Command: "prog --x={flag} {arguments} 'end of it'", Params: params},
		command.Config{Process: rec})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		before := rec.Calls()
		res := w.Execute(context.Background(), tool.Invocation{Args: map[string]any{"flag": b, "arguments": []any{a, b}}})
		if strings.ContainsRune(a, 0) || strings.ContainsRune(b, 0) {
			if res.Succeeded() || rec.Calls() != before {
				t.Fatalf("a NUL value ran: %+v", res)
			}
			return
		}
		if rec.Calls() == before {
			if len(a) > command.MaxArgLen || len(b) > command.MaxArgLen {
				return
			}
			t.Fatalf("nothing ran: %+v", res)
		}
		req := rec.Requests()[before]
		got := execArgs(t, req)
		want := []string{"prog", "--x=" + b, a, b, "end of it"}
		if !slices.Equal(got, want) {
			t.Fatalf("script %q ran %q, want %q", req.Script, got, want)
		}
	})
}

// execArgs interprets a request's script in-process and returns the argument vector of the
// one external program it runs.
func execArgs(t *testing.T, req ports.ProcessRequest) []string {
	t.Helper()
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(req.Script), "")
	if err != nil {
		t.Fatalf("script %q does not parse: %v", req.Script, err)
	}
	var env []string
	for k, v := range req.Vars {
		env = append(env, k+"="+v)
	}
	var runs [][]string
	r, err := interp.New(interp.Env(expand.ListEnviron(env...)),
		interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc {
			return func(_ context.Context, args []string) error {
				runs = append(runs, args)
				return nil
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(context.Background(), file); err != nil && !strings.Contains(err.Error(), "exit status 0") {
		if _, ok := err.(interp.ExitStatus); !ok {
			t.Fatalf("run %q: %v", req.Script, err)
		}
	}
	if len(runs) != 1 {
		t.Fatalf("script %q ran %d programs: %q", req.Script, len(runs), runs)
	}
	return runs[0]
}
