package cli

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// Every key of a log line is written once: a With attribute given again at the call takes the
// call's value in its place, inlined groups join their level, groups are unique inside, and
// the handler's own keys are not shadowed.
func TestLogLinesHaveUniqueKeys(t *testing.T) {
	var buf bytes.Buffer
	noTime := func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	log := slog.New(newUniqueKeys(slog.NewJSONHandler(&buf, &slog.HandlerOptions{ReplaceAttr: noTime})))
	run := log.With("run_id", "r1", "workflow", "a").With("workflow", "b")
	run.Info("started", "workflow", "c", "msg", "mine", slog.Group("", "run_id", "r2"), slog.Group("g", "k", 1, "k", 2), slog.Group("empty"))
	run.WithGroup("step").With("name", "x").Info("done", "name", "y", "workflow", "inner")
	run.WithGroup("").Info("plain")
	want := []string{
		`{"level":"INFO","msg":"started","run_id":"r2","workflow":"c","attr_msg":"mine","g":{"k":2}}`,
		`{"level":"INFO","msg":"done","run_id":"r1","workflow":"b","step":{"name":"y","workflow":"inner"}}`,
		`{"level":"INFO","msg":"plain","run_id":"r1","workflow":"b"}`,
	}
	if got := strings.Split(strings.TrimSpace(buf.String()), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("log lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
